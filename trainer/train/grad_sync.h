/* grad_sync.h - gradients of one optimizer step across micro-batches and
 * ranks: `--accumulate K` sums K local micro-batches (C4), and during the
 * LAST micro-batch's backward each layer's range, as the backend reports
 * it final (grad_ready, backward order), becomes (sum over micro-batches)/K
 * and is submitted at once for an average allreduce across ranks, so the
 * runtime's fusion buckets go out while backward still runs (visible in
 * the HVD_TIMELINE, O3).
 * After grad_sync_finish, model->grads holds the mean gradient over
 * R x K micro-batches on every rank.
 * Device mode (grad_sync_use_device: the gpu backend with the NCCL
 * runtime): the gradients stay in the backend's device buffer; the same
 * calls then accumulate through the device hooks (queued on the compute
 * stream, no host wait) and submit device ranges, which the runtime
 * orders after the compute stream's work (CUDA events) and reduces on
 * NCCL's own stream while the rest of backward runs.
 * What this is not: the optimizer or the backward itself.
 */
#ifndef HVD_TRAINER_GRAD_SYNC_H
#define HVD_TRAINER_GRAD_SYNC_H

#include <stddef.h>

#include "train/dist.h"
#include "model/model.h"
#include "backend/hooks.h"

struct grad_sync {
	struct model *model;
	const struct grad_sync_device *device;  /* NULL: host gradients (model->grads) */
	int accumulate;               /* K >= 1 */
	int micro;                    /* micro-batch of the current step, 0..K-1 */
	float *sum;                   /* (param_count) local sum of micro-batches 0..micro-1 (K > 1) */
	struct dist_handle **pending; /* one per layer submitted this step */
	int pending_count, pending_capacity;
	int failed;                   /* a submission failed: dist_error() says why */
	char name[128];
};

int grad_sync_init(struct grad_sync *g, struct model *m, int accumulate);
void grad_sync_free(struct grad_sync *g);
/* Device mode from now on (the hooks must outlive g); frees the host sum. */
void grad_sync_use_device(struct grad_sync *g, const struct grad_sync_device *d);
/* Before micro-batch `micro` (0..K-1) of a step runs its backward. */
void grad_sync_begin_micro(struct grad_sync *g, int micro);
/* The backend's backend_grad_ready_fn; user = the grad_sync. */
void grad_sync_ready(size_t offset, size_t count, void *user);
/* After the last micro-batch's backward: waits for every allreduce.
 * 0, or -1 (dist_error() names the failure). */
int grad_sync_finish(struct grad_sync *g);

#endif
