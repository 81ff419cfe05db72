/* gpu_staging.c - the device buffer through which the blocking host
 * collectives of every command (broadcast of the initial model, BN
 * averaging, evaluation gathers, health texts) travel when the runtime's
 * backend is NCCL, which reduces device memory only (dist_set_staging).
 * The buffer is allocated on the first collective and grown only for a
 * larger one, never on the step path; copies go through the backend's
 * compute stream and are waited for (the caller's host data must be
 * complete on return). Every call is checked (GPU_CUDA).
 * What it does not do: the per-step gradient or stats exchange (those
 * stay on the device: gpu_train.c) or NCCL itself (runtime/transport/comm_nccl.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"
#include "backend/gpu/gpu_train.h"

struct gpu_staging {
	struct backend *b;
	void *stage;
	size_t bytes;
	struct dist_staging hooks;
};

/* Hooks print their own error (dist only sees -1 / NULL). */
static int hook_failed(const struct trainer_error *err)
{
	fprintf(stderr, "chexnet: %s\n", err->msg);
	return -1;
}

static int stage_grow(struct gpu_staging *g, size_t bytes, struct trainer_error *err)
{
	if (bytes <= g->bytes)
		return 0;
	GPU_CUDA(cudaStreamSynchronize(g->b->stream));  /* the old buffer is idle */
	GPU_CUDA(cudaFree(g->stage));
	g->stage = NULL;
	g->bytes = 0;
	GPU_CUDA(cudaMalloc(&g->stage, bytes));
	g->bytes = bytes;
	return 0;
}

static void *hook_buffer(void *ctx, size_t bytes)
{
	struct gpu_staging *g = ctx;
	struct trainer_error err = { "" };

	if (stage_grow(g, bytes ? bytes : 1, &err)) {
		hook_failed(&err);
		return NULL;
	}
	return g->stage;
}

static int copy_and_wait(struct gpu_staging *g, void *dst, const void *src, size_t bytes,
			 enum cudaMemcpyKind kind, struct trainer_error *err)
{
	GPU_COPY(cudaMemcpyAsync(dst, src, bytes, kind, g->b->stream));
	GPU_CUDA(cudaStreamSynchronize(g->b->stream));  /* blocking collective: host data now */
	return 0;
}

static int hook_to_device(void *ctx, void *dev, const void *host, size_t bytes)
{
	struct trainer_error err = { "" };

	return copy_and_wait(ctx, dev, host, bytes, cudaMemcpyHostToDevice, &err) ?
	       hook_failed(&err) : 0;
}

static int hook_to_host(void *ctx, void *host, const void *dev, size_t bytes)
{
	struct trainer_error err = { "" };

	return copy_and_wait(ctx, host, dev, bytes, cudaMemcpyDeviceToHost, &err) ?
	       hook_failed(&err) : 0;
}

struct gpu_staging *gpu_staging_open(struct backend *b, struct trainer_error *err)
{
	struct gpu_staging *g = calloc(1, sizeof(*g));

	if (!g) {
		trainer_error_set(err, "gpu: staging: out of host memory");
		return NULL;
	}
	g->b = b;
	g->hooks = (struct dist_staging){ g, hook_buffer, hook_to_device, hook_to_host };
	return g;
}

const struct dist_staging *gpu_staging_hooks(struct gpu_staging *g)
{
	return &g->hooks;
}

void gpu_staging_close(struct gpu_staging *g)
{
	if (!g)
		return;
	cudaStreamSynchronize(g->b->stream);
	cudaFree(g->stage);
	free(g);
}
