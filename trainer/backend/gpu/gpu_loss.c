/* gpu_loss.c - backend.h's loss ops on the "gpu" backend (M3): the
 * logits of a training forward stay on the device, the labels (and the
 * class weights) go up with one async copy from pinned memory, one
 * kernel (gpu_k_loss.cu) writes d(loss)/d(logits) where backward starts
 * and adds the batch's loss to a running sum in device memory, and only
 * loss_take waits for the GPU, every N steps. The state rules are
 * host_loss.h's: loss after a training forward with y NULL, once;
 * backward with dy NULL after it.
 * What it does not do: the loss scale (backward applies it to dy) or
 * averaging over ranks (the trainer).
 */
#include <string.h>

#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

enum { LOSS_NONE, LOSS_LOGITS, LOSS_GRAD };

static int outputs(const struct backend *b)
{
	const struct model_tensor *t = &b->m->desc.tensors[b->m->desc.output_tensor];

	return t->channels * t->height * t->width;
}

static char *loss_region(const struct backend *b)
{
	return gpu_region(b, &b->plan.loss);
}

/* At create: pinned inputs, the copy event, a zero running sum. */
int gpu_loss_setup(struct backend *b, struct trainer_error *err)
{
	gpu_pool_loss_layout((size_t)b->opt.max_batch, (size_t)outputs(b), &b->loss_at);
	GPU_CUDA(cudaHostAlloc((void **)&b->host_loss_in, 2 * b->loss_at.dy, cudaHostAllocDefault));
	GPU_CUDA(cudaHostAlloc((void **)&b->host_loss_acc, 2 * sizeof(double),
			       cudaHostAllocDefault));
	for (int s = 0; s < 2; s++)
		GPU_CUDA(cudaEventCreateWithFlags(&b->loss_in_copied[s], cudaEventDisableTiming));
	GPU_COPY(cudaMemsetAsync(loss_region(b) + b->loss_at.acc, 0, 2 * sizeof(double), b->stream));
	return 0;
}

void gpu_loss_teardown(struct backend *b)
{
	for (int s = 0; s < 2; s++)
		if (b->loss_in_copied[s])
			cudaEventDestroy(b->loss_in_copied[s]);
	cudaFreeHost(b->host_loss_in);
	cudaFreeHost(b->host_loss_acc);
}

void gpu_loss_forwarded(struct backend *b, int kept)
{
	b->loss_state = kept ? LOSS_LOGITS : LOSS_NONE;
}

/* The pinned labels and weights of the step's slot: while one slot's
 * go up, the host fills the other's. */
static char *host_inputs(const struct backend *b)
{
	return (char *)b->host_loss_in + (size_t)b->step_slot * b->loss_at.dy;
}

/* Labels and weights (ones for NULL) into pinned memory. */
static int stage_inputs(struct backend *b, const float *labels, const float *w_pos,
			const float *w_neg, struct trainer_error *err)
{
	char *host = host_inputs(b);
	size_t row = (size_t)outputs(b) * sizeof(float);

	/* the slot's last upload, two steps back, left the buffer */
	GPU_CUDA(cudaEventSynchronize(b->loss_in_copied[b->step_slot]));
	memcpy(host + b->loss_at.labels, labels, (size_t)b->count * row);
	memcpy(host + b->loss_at.w_pos, w_pos ? w_pos : labels, w_pos ? row : 0);
	memcpy(host + b->loss_at.w_neg, w_neg ? w_neg : labels, w_neg ? row : 0);
	b->loss_weights = (w_pos ? 1 : 0) | (w_neg ? 2 : 0);
	return 0;
}

/* The staged inputs' upload, then the loss and dy (b->loss_weights says
 * which weights there are). */
int gpu_loss_queue(struct backend *b, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;
	struct tensor_slice out = { d->output_tensor, 0, d->tensors[d->output_tensor].channels };
	float *logits = gpu_region(b, &b->plan.io);
	char *r = loss_region(b);

	GPU_COPY(cudaMemcpyAsync(r, host_inputs(b), b->loss_at.dy, cudaMemcpyHostToDevice,
				 b->stream));
	GPU_CUDA(gpu_k_from_view(b->stream, b->dt, gpu_slice(b, &out, 0), 1.0f, logits));
	GPU_CUDA(gpu_k_bce(b->stream, logits, (const float *)(r + b->loss_at.labels),
			   b->loss_weights & 1 ? (const float *)(r + b->loss_at.w_pos) : NULL,
			   b->loss_weights & 2 ? (const float *)(r + b->loss_at.w_neg) : NULL,
			   b->count, outputs(b), (float *)(r + b->loss_at.dy),
			   (double *)(r + b->loss_at.acc)));
	return 0;
}

int gpu_loss_after(struct backend *b, struct trainer_error *err)
{
	GPU_CUDA(cudaEventRecord(b->loss_in_copied[b->step_slot], b->stream));
	return 0;
}

int gpu_loss(struct backend *b, const float *labels, const float *w_pos, const float *w_neg,
	     struct trainer_error *err)
{
	if (b->loss_state != LOSS_LOGITS)
		return trainer_error_set(err, "gpu: loss: %s", b->loss_state == LOSS_GRAD ?
					 "already computed for this forward" :
					 "needs a training forward with y NULL first");
	if (stage_inputs(b, labels, w_pos, w_neg, err))
		return -1;
	b->loss_state = LOSS_GRAD;
	if (b->graphs)
		return 0;  /* queued with the step's backward and optimizer (gpu_graph.c) */
	return gpu_loss_queue(b, err) || gpu_loss_after(b, err) ? -1 : 0;
}

const float *gpu_loss_device_dy(struct backend *b, struct trainer_error *err)
{
	if (b->loss_state != LOSS_GRAD) {
		trainer_error_set(err, "gpu: backward: dy NULL needs loss() after the training forward");
		return NULL;
	}
	return (const float *)(loss_region(b) + b->loss_at.dy);
}

int gpu_loss_take(struct backend *b, double *sum, long *batches, struct trainer_error *err)
{
	double *acc = (double *)(loss_region(b) + b->loss_at.acc);

	GPU_COPY(cudaMemcpyAsync(b->host_loss_acc, acc, 2 * sizeof(double), cudaMemcpyDeviceToHost,
				 b->stream));
	GPU_CUDA(cudaStreamSynchronize(b->stream));  /* M3: the one wait for the loss */
	GPU_COPY(cudaMemsetAsync(acc, 0, 2 * sizeof(double), b->stream));
	*sum = b->host_loss_acc[0];
	*batches = (long)b->host_loss_acc[1];
	return 0;
}
