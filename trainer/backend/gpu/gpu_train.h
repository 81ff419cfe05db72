/* gpu_train.h - what `chexnet train` needs from the "gpu" backend beyond
 * backend.h, in plain C types so that run_train*.c compile without CUDA
 * headers: every build has these symbols (gpu_train.c with CUDA,
 * gpu_train_none.c without, where each says "no gpu backend" and is never
 * reached because backend_find("gpu") fails first).
 *
 * - Device training (C1, with the NCCL runtime backend): gradients stay
 *   on the device (gpu_backend_set_host_grads(b, 0)); grad_sync hands the
 *   runtime device ranges and accumulates micro-batches with
 *   gpu_train_accumulate (queued on the compute stream); after the
 *   allreduce the optimizer runs on the device (Adam/SGD kernels over the
 *   fp32 master weights, moments in one device allocation made at open),
 *   so neither gradients nor parameters cross PCIe on the step path.
 *   gpu_train_sync_host brings parameters and moments back before
 *   anything reads them on the host (checkpoints, BN averaging).
 * - The per-step stats vector (train/verdict.h) through a fixed pinned
 *   + device pair: put = asynchronous copy on the compute stream (the
 *   runtime orders NCCL after it); get = one 12-byte copy back after the
 *   allreduce completed, the only host wait this adds to a step.
 * - Staging for the blocking host collectives (dist_set_staging) of every
 *   command on the NCCL backend (gpu_staging.c): one device buffer, grown
 *   off the step path.
 * - fp16 loss scaling (M4) and health (O1, O2) without CUDA types.
 * Every function takes the struct backend that backend_gpu_ops.create
 * returned. What this is not: the layers (gpu_backend.h) or NCCL (runtime/).
 */
#ifndef HVD_TRAINER_GPU_TRAIN_H
#define HVD_TRAINER_GPU_TRAIN_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/hooks.h"

struct gpu_train;

/* Device training state for backend b: stats pair, optimizer
 * moments (sized for o's kind), the micro-batch sum when accumulate > 1.
 * Turns the backend's host gradient copies off, and with --cuda-graph on
 * (backend_options.cuda_graph) each step into one CUDA graph
 * (gpu_step.c); with more than one rank (NCCL reduces the gradients
 * between backward and the optimizer, outside any graph) the graph ends
 * with backward and the optimizer runs after it. Refused with
 * accumulate > 1 and fp16. NULL + err on failure. */
struct gpu_train *gpu_train_open(struct backend *b, const struct optim *o, int accumulate,
				 int ranks, struct trainer_error *err);
void gpu_train_close(struct gpu_train *g);
/* --cuda-graph on for backend b (0 without a gpu backend). */
int gpu_train_graphs(const struct backend *b);
/* The compute stream (cudaStream_t) for dist_set_compute_stream. */
void *gpu_train_stream(const struct gpu_train *g);
/* Hooks for grad_sync_use_device (valid while g lives). */
const struct grad_sync_device *gpu_train_grad_hooks(struct gpu_train *g);

/* NVTX push/pop for span_set_ranges (span.h): the training phases as
 * Nsight Systems ranges. NULL without CUDA. */
const struct span_ranges *gpu_train_nvtx_ranges(void);

/* Staging for dist_set_staging on backend b (the session installs it
 * when the runtime reduces device memory). NULL + err on failure. */
struct gpu_staging;
struct gpu_staging *gpu_staging_open(struct backend *b, struct trainer_error *err);
const struct dist_staging *gpu_staging_hooks(struct gpu_staging *g);
void gpu_staging_close(struct gpu_staging *g);

/* Host optimizer moments (o->m, o->v: after --resume) to the device. */
int gpu_train_load_moments(struct gpu_train *g, const struct optim *o,
			   struct trainer_error *err);
/* One update on the device from the device gradients, as optim_step
 * (counts o->steps, the bias correction uses it), then the compute-type
 * weight copy; queued, not waited for. */
int gpu_train_optim_step(struct gpu_train *g, struct optim *o, double lr,
			 struct trainer_error *err);
/* Device parameters and moments to model->params, o->m, o->v (waits). */
int gpu_train_sync_host(struct gpu_train *g, struct optim *o, struct trainer_error *err);

/* The per-step stats (count floats, at most 4) on the device: put queues
 * the upload; get waits for the download (call after the allreduce). */
float *gpu_train_stats_device(struct gpu_train *g);
int gpu_train_stats_put(struct gpu_train *g, const float *stats, int count,
			struct trainer_error *err);
int gpu_train_stats_get(struct gpu_train *g, float *stats, int count,
			struct trainer_error *err);

/* fp16 (M4): did the last backward find inf/NaN gradients; feed the
 * agreed verdict to the scaler (1: skip the optimizer step); the scale. */
int gpu_train_found_inf(const struct backend *b);
/* gpu_backend_prefetch (P4): the next batch's upload starts now. */
int gpu_train_prefetch(struct backend *b, const struct batch *batch, int count,
		       struct trainer_error *err);
int gpu_train_loss_scale_update(struct backend *b, int found_inf);
double gpu_train_loss_scale(const struct backend *b);

/* Health (gpu_report.c): the device's PCI bus id, one NVML line, the
 * end-of-run utilisation warning ("" when fine). */
const char *gpu_train_bus_id(const struct backend *b);
int gpu_train_health_line(struct backend *b, char *line, size_t len, struct trainer_error *err);
void gpu_train_health_summary(const struct backend *b, char *msg, size_t len);

#endif
