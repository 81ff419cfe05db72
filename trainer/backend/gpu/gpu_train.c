/* gpu_train.c - device-side training for `chexnet train` on the "gpu"
 * backend (see gpu_train.h): gradients accumulated and kept on the
 * device, the optimizer on the device (gpu_k_adam / gpu_k_sgd, torch
 * semantics as trainer/train/optim.c) and the per-step stats pair. Allocation
 * happens at open (moments, micro-batch sum, stats: one cudaMalloc),
 * never on the step path. Every call is checked (GPU_CUDA: file:line and
 * CUDA's error string). Compiled with -Werror against CUDA 13; never run
 * on a GPU in this project's CI. The optimizer's per-step values (the
 * learning rate, Adam's bias correction) go up through pinned memory
 * before each update, so that a CUDA graph of the step (--cuda-graph on,
 * turned on here: gpu_graph.c) replays with each step's own.
 * What it does not do: NCCL (runtime/transport/comm_nccl.c), the layers, the
 * staging of host collectives (gpu_staging.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"
#include "backend/gpu/gpu_nvtx.h"
#include "backend/gpu/gpu_train.h"

#define GPU_TRAIN_STATS 4

struct gpu_train {
	struct backend *b;
	size_t params;              /* param_count */
	char *device;               /* the one allocation: m, v, sum, stats */
	float *m, *v;               /* (params) optimizer moments; v: Adam only */
	float *sum;                 /* (params) micro-batch sum; accumulate > 1 only */
	float *stats;               /* (GPU_TRAIN_STATS) device */
	float *stats_host;          /* (GPU_TRAIN_STATS) pinned */
	float *values;              /* (2) the optimizer's values, device (gpu_kernels.h) */
	float *values_host;         /* (2, 2) pinned, by the step's image slot */
	cudaEvent_t values_copied[2]; /* by slot: the last upload left values_host's */
	struct optim *o;            /* the update being queued */
	struct grad_sync_device hooks;
};

static size_t round_up(size_t bytes)
{
	return (bytes + 255) & ~(size_t)255;
}

/* Hooks print their own error (grad_sync and dist only see -1). */
static int hook_failed(const struct trainer_error *err)
{
	fprintf(stderr, "chexnet: %s\n", err->msg);
	return -1;
}

/* A packed fp32 range as a (1, 1, 1, count) view for gpu_k_to_view. */
static struct gpu_view flat(float *data, size_t count)
{
	return gpu_view_nchw(data, sizeof(float), 1, 1, 0, 1, 1, (int)count);
}

static int accumulate_range(struct gpu_train *g, size_t offset, size_t count, int micro,
			    int k, struct trainer_error *err)
{
	cudaStream_t s = g->b->stream;
	float *grad = gpu_grads(g->b) + offset, *sum = g->sum + offset;

	if (!g->sum || count > INT_MAX)
		return trainer_error_set(err, "gpu: accumulate: '%zu floats': no sum buffer or "
					 "range too long", count);
	/* micro 0: sum = grad; later: sum += grad; last: grad = sum / K */
	GPU_CUDA(gpu_k_to_view(s, GPU_F32, grad, 1.0f, flat(sum, count), micro > 0));
	if (micro == k - 1)
		GPU_CUDA(gpu_k_to_view(s, GPU_F32, sum, 1.0f / (float)k, flat(grad, count), 0));
	return 0;
}

static int hook_accumulate(void *ctx, size_t offset, size_t count, int micro, int k)
{
	struct trainer_error err = { "" };

	return accumulate_range(ctx, offset, count, micro, k, &err) ? hook_failed(&err) : 0;
}

/* Moments, sum and stats in one allocation, zeroed. */
static int allocate(struct gpu_train *g, const struct optim *o, int accumulate,
		    struct trainer_error *err)
{
	size_t vec = round_up(g->params * sizeof(float));
	size_t m_bytes = vec, v_bytes = o->v ? vec : 0, sum_bytes = accumulate > 1 ? vec : 0;
	size_t stats_bytes = round_up(GPU_TRAIN_STATS * sizeof(float));
	size_t total = m_bytes + v_bytes + sum_bytes + stats_bytes + round_up(2 * sizeof(float));

	GPU_CUDA(cudaMalloc((void **)&g->device, total));
	GPU_COPY(cudaMemsetAsync(g->device, 0, total, g->b->stream));
	g->m = (float *)g->device;
	g->v = v_bytes ? (float *)(g->device + m_bytes) : NULL;
	g->sum = sum_bytes ? (float *)(g->device + m_bytes + v_bytes) : NULL;
	g->stats = (float *)(g->device + m_bytes + v_bytes + sum_bytes);
	g->values = (float *)(g->device + m_bytes + v_bytes + sum_bytes + stats_bytes);
	GPU_CUDA(cudaHostAlloc((void **)&g->stats_host, GPU_TRAIN_STATS * sizeof(float),
			       cudaHostAllocDefault));
	GPU_CUDA(cudaHostAlloc((void **)&g->values_host, 4 * sizeof(float), cudaHostAllocDefault));
	for (int s = 0; s < 2; s++)
		GPU_CUDA(cudaEventCreateWithFlags(&g->values_copied[s], cudaEventDisableTiming));
	return 0;
}

/* --cuda-graph on: what one graph of a step cannot be yet. */
static int graphs_refused(const struct backend *b, int accumulate, struct trainer_error *err)
{
	if (!b->opt.cuda_graph)
		return 0;
	if (accumulate > 1)
		return trainer_error_set(err, "gpu: --cuda-graph: 'on': --accumulate %d: a graph "
					 "holds one micro-batch's step (give --accumulate 1 or "
					 "--cuda-graph off)", accumulate);
	if (b->dt == GPU_F16)
		return trainer_error_set(err, "gpu: --cuda-graph: 'on': fp16's loss scale is decided "
					 "on the host each step (give another --precision or "
					 "--cuda-graph off)");
	return 0;
}

int gpu_train_graphs(const struct backend *b) { return b->opt.cuda_graph; }

struct gpu_train *gpu_train_open(struct backend *b, const struct optim *o, int accumulate,
				 int ranks, struct trainer_error *err)
{
	struct gpu_train *g = calloc(1, sizeof(*g));

	if (!g) {
		trainer_error_set(err, "gpu: out of host memory");
		return NULL;
	}
	g->b = b;
	g->params = b->m->desc.param_count;
	if (graphs_refused(b, accumulate, err) || allocate(g, o, accumulate, err)) {
		gpu_train_close(g);
		return NULL;
	}
	g->hooks = (struct grad_sync_device){ g, gpu_grads(b), hook_accumulate };
	gpu_backend_set_host_grads(b, 0);
	b->graphs = b->opt.cuda_graph;
	b->graph_ends_at_backward = ranks > 1;
	return g;
}

void gpu_train_close(struct gpu_train *g)
{
	if (!g)
		return;
	cudaStreamSynchronize(g->b->stream);
	gpu_graph_drop(g->b);  /* the graphs point into g's buffers */
	g->b->graphs = 0;
	g->b->deferred = 0;
	gpu_backend_set_host_grads(g->b, 1);
	for (int s = 0; s < 2; s++)
		if (g->values_copied[s])
			cudaEventDestroy(g->values_copied[s]);
	cudaFreeHost(g->values_host);
	cudaFreeHost(g->stats_host);
	cudaFree(g->device);
	free(g);
}

void *gpu_train_stream(const struct gpu_train *g) { return g->b->stream; }
const struct grad_sync_device *gpu_train_grad_hooks(struct gpu_train *g) { return &g->hooks; }
float *gpu_train_stats_device(struct gpu_train *g) { return g->stats; }

int gpu_train_load_moments(struct gpu_train *g, const struct optim *o, struct trainer_error *err)
{
	if (gpu_params_upload(g->b, g->m, o->m, g->params, err) ||
	    (g->v && o->v && gpu_params_upload(g->b, g->v, o->v, g->params, err)))
		return -1;
	GPU_CUDA(cudaStreamSynchronize(g->b->stream));  /* o's buffers are pageable */
	return 0;
}

/* The pinned values of the step's image slot: while one slot's go up,
 * the host fills the other's. */
static float *values_of(const struct gpu_train *g)
{
	return g->values_host + 2 * g->b->step_slot;
}

/* The update from the device gradients and the values uploaded before
 * it, then the compute-type weight copy. */
static int queue_update(void *ctx, struct trainer_error *err)
{
	struct gpu_train *g = ctx;
	struct backend *b = g->b;
	const struct optim_config *c = &g->o->cfg;

	GPU_COPY(cudaMemcpyAsync(g->values, values_of(g), 2 * sizeof(float),
				 cudaMemcpyHostToDevice, b->stream));
	if (c->kind == OPTIM_ADAM) {
		struct gpu_adam_args a = { 0, (float)c->beta1, (float)c->beta2, (float)c->eps,
					   (float)c->weight_decay, g->o->steps };
		GPU_CUDA(gpu_k_adam(b->stream, gpu_params(b), gpu_grads(b), g->m, g->v, g->params, a,
				    g->values));
	} else {
		GPU_CUDA(gpu_k_sgd(b->stream, gpu_params(b), gpu_grads(b), g->m, g->params,
				   (float)c->momentum, (float)c->weight_decay, g->values));
	}
	if (b->dt != GPU_F32)  /* the compute-type copy, as gpu_load_params */
		GPU_CUDA(gpu_k_cast(b->stream, b->dt, gpu_params(b), gpu_region(b, &b->plan.params_lp),
				    g->params));
	return 0;
}

/* This step's values into pinned memory, once the last upload left it. */
static int stage_values(struct gpu_train *g, const struct optim *o, double lr,
			struct trainer_error *err)
{
	const struct optim_config *c = &o->cfg;

	GPU_CUDA(cudaEventSynchronize(g->values_copied[g->b->step_slot]));  /* two steps back */
	if (c->kind == OPTIM_SGD) {
		gpu_sgd_values((float)lr, o->steps == 1, values_of(g));
		return 0;
	}
	struct gpu_adam_args a = { (float)lr, (float)c->beta1, (float)c->beta2, (float)c->eps,
				   (float)c->weight_decay, o->steps };
	if (gpu_adam_values(a, values_of(g)))
		return trainer_error_set(err, "gpu: adam: step %lld: must be 1 or more", a.step);
	return 0;
}

int gpu_train_optim_step(struct gpu_train *g, struct optim *o, double lr,
			 struct trainer_error *err)
{
	struct backend *b = g->b;

	o->steps++;
	g->o = o;
	if (stage_values(g, o, lr, err))
		return -1;
	int rc = b->graphs && !b->graph_ends_at_backward ? gpu_step_run_deferred(b, queue_update, g, err)
						       : queue_update(g, err);
	if (rc)
		return -1;
	GPU_CUDA(cudaEventRecord(g->values_copied[b->step_slot], b->stream));
	return 0;
}

int gpu_train_sync_host(struct gpu_train *g, struct optim *o, struct trainer_error *err)
{
	struct backend *b = g->b;

	if (gpu_params_download(b, b->m->params, gpu_params(b), g->params, err) ||
	    gpu_params_download(b, o->m, g->m, g->params, err) ||
	    (g->v && o->v && gpu_params_download(b, o->v, g->v, g->params, err)))
		return -1;
	GPU_CUDA(cudaStreamSynchronize(b->stream));
	return 0;
}

int gpu_train_stats_put(struct gpu_train *g, const float *stats, int count,
			struct trainer_error *err)
{
	if (count < 1 || count > GPU_TRAIN_STATS)
		return trainer_error_set(err, "gpu: step stats: '%d': at most %d values", count,
					 GPU_TRAIN_STATS);
	memcpy(g->stats_host, stats, (size_t)count * sizeof(float));
	GPU_COPY(cudaMemcpyAsync(g->stats, g->stats_host, (size_t)count * sizeof(float),
				 cudaMemcpyHostToDevice, g->b->stream));
	return 0;
}

int gpu_train_stats_get(struct gpu_train *g, float *stats, int count, struct trainer_error *err)
{
	if (count < 1 || count > GPU_TRAIN_STATS)
		return trainer_error_set(err, "gpu: step stats: '%d': at most %d values", count,
					 GPU_TRAIN_STATS);
	GPU_COPY(cudaMemcpyAsync(g->stats_host, g->stats, (size_t)count * sizeof(float),
				 cudaMemcpyDeviceToHost, g->b->stream));
	GPU_CUDA(cudaStreamSynchronize(g->b->stream));
	memcpy(stats, g->stats_host, (size_t)count * sizeof(float));
	return 0;
}

/* --- plain-C views of gpu_backend.h --- */
int gpu_train_found_inf(const struct backend *b) { return gpu_backend_found_inf(b); }
int gpu_train_prefetch(struct backend *b, const struct batch *batch, int count,
		       struct trainer_error *err)
{
	return gpu_backend_prefetch(b, batch, count, err);
}
int gpu_train_loss_scale_update(struct backend *b, int found_inf)
{
	return gpu_backend_loss_scale_update(b, found_inf);
}
double gpu_train_loss_scale(const struct backend *b) { return gpu_backend_loss_scale(b)->scale; }
const char *gpu_train_bus_id(const struct backend *b) { return gpu_backend_bus_id(b); }

int gpu_train_health_line(struct backend *b, char *line, size_t len, struct trainer_error *err)
{
	return gpu_backend_health_sample(b, line, len, err);
}

void gpu_train_health_summary(const struct backend *b, char *msg, size_t len)
{
	gpu_backend_health_summary(b, msg, len);
}

static void nvtx_push(const char *name) { gpu_nvtx_push(name); }
static void nvtx_pop(void) { gpu_nvtx_pop(); }

const struct span_ranges *gpu_train_nvtx_ranges(void)
{
	static const struct span_ranges nvtx = { nvtx_push, nvtx_pop };

	return &nvtx;
}
