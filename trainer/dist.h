/* dist.h - the trainer's view of the data-parallel runtime (libhvd,
 * runtime/hvd.h): rank and world size, the collectives the training loop
 * needs on fp32/int64 host buffers, timeline spans, compute threads.
 *
 * Builds without the runtime (no PMIx) get a one-rank world: every
 * collective is the identity there, so the training loop has one code
 * path. With the runtime, a program started without srun is a one-rank
 * world too (hvd_init falls back), and collectives are skipped when
 * size == 1 (nothing to exchange).
 * Every call returns 0 or -1; dist_error() then holds the runtime's one-line
 * message (it names the rank). What this is not: gradient bookkeeping
 * (grad_sync.h) or anything that exits.
 */
#ifndef HVD_TRAINER_DIST_H
#define HVD_TRAINER_DIST_H

#include <stddef.h>
#include <stdint.h>

struct dist_handle;

int dist_init(void);
/* 0, or -1 when the runtime saw a failure during the run. */
int dist_shutdown(void);
int dist_rank(void);
int dist_size(void);
const char *dist_error(void);
/* The runtime's collective backend: "mpi" (host buffers), "nccl" (device
 * buffers) or "self". */
const char *dist_backend_name(void);

/* In place; every rank passes the same names and counts in the same order. */
int dist_allreduce_async(const char *name, float *data, size_t count, int average,
			 struct dist_handle **h);
int dist_wait(struct dist_handle *h);
int dist_average(const char *name, float *data, size_t count);
int dist_sum_i64(const char *name, int64_t *data, size_t count);
int dist_broadcast(const char *name, float *data, size_t count, int root);
/* Rank 0's part, then rank 1's...: recv holds recv_capacity floats; *total
 * gets the number written. */
int dist_allgather(const char *name, const float *send, size_t count, float *recv,
		   size_t recv_capacity, size_t *total);

/* Timeline spans (HVD_TIMELINE): lanes "compute" and "data". */
void dist_span_begin(const char *lane, const char *name);
void dist_span_end(const char *lane);

/* Compute threads for this task: its allowed CPUs minus loader threads. */
int dist_compute_threads(int loader_threads);

#endif
