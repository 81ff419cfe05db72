/* gpu_backend.h - what the rest of the program may ask the "gpu" backend
 * beyond backend.h's ops (backend_gpu_ops): the CUDA stream and the
 * per-layer events the runtime needs to order NCCL after backward (C1;
 * the communicator itself lives in runtime/), the device gradient buffer,
 * the input prefetch that makes the copy stream overlap compute (P4), and
 * the fp16 loss scale (M4). Every function takes the struct backend that
 * backend_gpu_ops.create returned; calling them on another backend's
 * context is a bug. What this is not: the backend's internals
 * (gpu_internal.h).
 */
#ifndef HVD_TRAINER_GPU_BACKEND_H
#define HVD_TRAINER_GPU_BACKEND_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "backend/backend.h"
#include "backend/gpu/gpu_loss_scale.h"

/* The compute stream: every forward/backward kernel runs on it. */
cudaStream_t gpu_backend_stream(const struct backend *b);
/* Recorded on the compute stream when layer `layer`'s parameter
 * gradients are final in gpu_backend_device_grads (and, unless turned
 * off, copied to model->grads): an NCCL stream waits on it
 * (cudaStreamWaitEvent) before reducing that layer's range. NULL for a
 * layer without parameters. Valid after backward, until the next one. */
cudaEvent_t gpu_backend_grad_event(const struct backend *b, int layer);
/* (param_count) fp32 gradients on the device, torchvision layout (the
 * same offsets as model->grads). */
float *gpu_backend_device_grads(const struct backend *b);
/* 0: backward leaves model->grads alone (the runtime reduces on the
 * device); ready() is then called as each layer's event is recorded.
 * Default 1. */
void gpu_backend_set_host_grads(struct backend *b, int on);
/* Start copying `count` images of *batch to the GPU now (copy stream,
 * other buffer of the pair) so the copy overlaps the current step; the
 * next forward with the same batch pointer and count uses them. The
 * pixels are read (into pinned memory) before this returns, so the
 * loader may reuse its buffer at once. 0 or -1 (err). */
int gpu_backend_prefetch(struct backend *b, const struct batch *batch, int count,
			 struct trainer_error *err);
/* fp16: the scale backward applied and whether the last backward found
 * inf/NaN gradients (then the caller skips the optimizer step). After an
 * allreduce the caller passes the global verdict to
 * gpu_backend_loss_scale_update, which returns 1 when the step must be
 * skipped. In fp32 and bf16 the scale stays 1 and found_inf 0. */
const struct gpu_loss_scale *gpu_backend_loss_scale(const struct backend *b);
int gpu_backend_found_inf(const struct backend *b);
int gpu_backend_loss_scale_update(struct backend *b, int found_inf);
/* "0000:3b:00.0": the device this backend runs on (gpu_health.h). */
const char *gpu_backend_bus_id(const struct backend *b);
/* Health (O1, O2; gpu_report.c). Samples NVML once (utilisation,
 * memory) and writes one report line, e.g. `gpu 0000:3b:00.0:
 * utilisation 97%, memory 30112/81559 MiB`; the sample is kept for the
 * summary. -1 (err) when NVML is missing: say so once and go on. */
int gpu_backend_health_sample(struct backend *b, char *line, size_t len,
			      struct trainer_error *err);
/* End of run: the O1 warning over the kept samples ("" when fine). */
void gpu_backend_health_summary(const struct backend *b, char *msg, size_t len);

#endif
