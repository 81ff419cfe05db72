/* gpu_backend.c - the "gpu" backend's life cycle: create (device, streams,
 * cuDNN/cuBLAS handles, conv algorithms, the one device pool after a fit
 * check against free memory (M1, M2), pinned host staging (P4)),
 * load_params, store_state, destroy and the public accessors of
 * gpu_backend.h (the pool views are gpu_internal.h's). The step itself is gpu_step.c.
 * What it does not do: NCCL (runtime/), the loss or the optimizer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

/* Largest conv workspace any algorithm may ask for while sizing the pool. */
#define GPU_WORKSPACE_CAP ((size_t)1 << 30)

/* host_registered bits: which of the model's buffers we page-locked. */
enum { PINNED_PARAMS = 1, PINNED_GRADS = 2, PINNED_STATE = 4 };

static void unregister_host(struct backend *b)
{
	if (b->host_registered & PINNED_PARAMS)
		cudaHostUnregister(b->m->params);
	if (b->host_registered & PINNED_GRADS)
		cudaHostUnregister(b->m->grads);
	if (b->host_registered & PINNED_STATE)
		cudaHostUnregister(b->m->state);
	b->host_registered = 0;
}

static void gpu_destroy(struct backend *b)
{
	if (!b)
		return;
	if (b->stream)
		cudaStreamSynchronize(b->stream);
	if (b->copy_stream)  /* a prefetched batch may still be on its way up */
		cudaStreamSynchronize(b->copy_stream);
	for (int i = 0; b->layers && i < b->m->desc.layer_count; i++) {
		gpu_conv_destroy(&b->layers[i]);
		free(b->layers[i].conv);
		if (b->layers[i].grads_done)
			cudaEventDestroy(b->layers[i].grads_done);
	}
	free(b->layers);
	for (int s = 0; s < 2; s++) {
		if (b->images_copied[s])
			cudaEventDestroy(b->images_copied[s]);
		if (b->images_used[s])
			cudaEventDestroy(b->images_used[s]);
		cudaFreeHost(b->host_images[s]);
	}
	unregister_host(b);
	gpu_loss_teardown(b);
	if (b->io_uploaded)
		cudaEventDestroy(b->io_uploaded);
	cudaFreeHost(b->host_io);
	cudaFreeHost(b->host_flag);
	cudaFree(b->pool);
	gpu_pool_plan_free(&b->plan);
	free(b->algos);
	free(b->algo_file);
	gpu_nvml_close(b->nvml);
	if (b->cublas)
		cublasDestroy(b->cublas);
	if (b->cudnn)
		cudnnDestroy(b->cudnn);
	if (b->copy_stream)
		cudaStreamDestroy(b->copy_stream);
	if (b->stream)
		cudaStreamDestroy(b->stream);
	free(b);
}

static int gpu_devices(char *why, size_t len)
{
	int devices = 0;
	cudaError_t rc = cudaGetDeviceCount(&devices);
	if (rc != cudaSuccess || devices < 1)
		snprintf(why, len, "%s", rc != cudaSuccess ? cudaGetErrorString(rc) : "none visible");
	return rc == cudaSuccess && devices > 0 ? devices : 0;
}

static int open_device(struct backend *b, struct trainer_error *err)
{
	char why[160];

	if (gpu_devices(why, sizeof(why)) < 1)
		return trainer_error_set(err, "--backend: 'gpu': no CUDA device (%s)", why);
	GPU_CUDA(cudaGetDevice(&b->device));
	GPU_CUDA(cudaSetDevice(b->device));
	GPU_CUDA(cudaDeviceGetPCIBusId(b->bus_id, sizeof(b->bus_id), b->device));
	GPU_CUDA(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
	GPU_CUDA(cudaStreamCreateWithFlags(&b->copy_stream, cudaStreamNonBlocking));
	GPU_CUDNN(cudnnCreate(&b->cudnn));
	GPU_CUDNN(cudnnSetStream(b->cudnn, b->stream));
	GPU_CUBLAS(cublasCreate(&b->cublas));
	GPU_CUBLAS(cublasSetStream(b->cublas, b->stream));
	/* no TF32 unless a GEMM's compute type asks (precision_math) */
	GPU_CUBLAS(cublasSetMathMode(b->cublas, CUBLAS_DEFAULT_MATH));
	return 0;
}

/* Conv descriptors and algorithms at max_batch: the workspace the pool needs. */
static int plan_layers(struct backend *b, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	b->layers = calloc((size_t)d->layer_count, sizeof(*b->layers));
	b->algos = malloc(sizeof(*b->algos));
	if (!b->layers || !b->algos)
		return trainer_error_set(err, "gpu: out of host memory");
	gpu_algo_cache_init(b->algos);
	b->workspace_limit = GPU_WORKSPACE_CAP;
	if (gpu_conv_algos_begin(b, err))
		return -1;
	for (int i = 0; i < d->layer_count; i++) {
		struct gpu_layer *l = &b->layers[i];
		l->ml = &d->layers[i];
		if (!gpu_layer_ops_for(l->ml->kind))
			return trainer_error_set(err, "gpu: layer '%s': kind %d has no GPU implementation",
						 l->ml->name, (int)l->ml->kind);
		if (l->ml->weight_count + l->ml->bias_count)
			GPU_CUDA(cudaEventCreateWithFlags(&l->grads_done, cudaEventDisableTiming));
		if (l->ml->kind == LAYER_LINEAR && gpu_nhwc(b) && l->ml->in_h * l->ml->in_w > 1)
			return trainer_error_set(err, "gpu: layer '%s': --gpu-layout nhwc: a linear layer "
						 "over %dx%d pixels (torchvision flattens C, H, W) needs "
						 "--gpu-layout nchw", l->ml->name, l->ml->in_h, l->ml->in_w);
		if (l->ml->kind != LAYER_CONV)
			continue;
		if (!(l->conv = calloc(1, sizeof(*l->conv))))
			return trainer_error_set(err, "gpu: out of host memory");
		if (gpu_conv_setup(b, l, b->opt.max_batch, err))
			return -1;
	}
	return gpu_conv_algos_end(b, err);
}

/* The pool: planned, checked against free memory, allocated once. */
static int allocate_pool(struct backend *b, struct trainer_error *err)
{
	struct gpu_pool_inputs in = { b->opt.max_batch, b->elem_bytes, gpu_conv_workspace_need(b),
				      b->opt.memory_efficient };
	size_t free_bytes = 0, total_bytes = 0;

	if (gpu_pool_plan_build(&b->m->desc, &in, &b->plan, err))
		return -1;
	GPU_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
	if (b->plan.total_bytes > (free_bytes > GPU_POOL_RESERVE_BYTES ?
				   free_bytes - GPU_POOL_RESERVE_BYTES : 0)) {
		long fits = gpu_pool_largest_batch(&b->m->desc, &in, free_bytes,
						   GPU_POOL_RESERVE_BYTES, b->opt.max_batch, err);
		if (fits < 0)
			return -1;
		return gpu_pool_fit_check(b->plan.total_bytes, free_bytes, GPU_POOL_RESERVE_BYTES,
					  b->opt.max_batch, fits, b->device, err);
	}
	GPU_CUDA(cudaMalloc((void **)&b->pool, b->plan.total_bytes));
	b->workspace_limit = b->plan.workspace.bytes;
	return 0;
}

/* Pinned staging and the model's own host buffers page-locked, so every
 * copy on the step path is asynchronous (P4). */
static int pin_host(struct backend *b, struct trainer_error *err)
{
	struct model *m = b->m;

	GPU_CUDA(cudaHostAlloc((void **)&b->host_io, b->plan.io.bytes, cudaHostAllocDefault));
	GPU_CUDA(cudaHostAlloc((void **)&b->host_flag, sizeof(int), cudaHostAllocDefault));
	GPU_CUDA(cudaEventCreateWithFlags(&b->io_uploaded, cudaEventDisableTiming));
	for (int s = 0; s < 2; s++) {
		if (b->plan.images[s].bytes)
			GPU_CUDA(cudaHostAlloc((void **)&b->host_images[s], b->plan.images[s].bytes,
					       cudaHostAllocDefault));
		GPU_CUDA(cudaEventCreateWithFlags(&b->images_copied[s], cudaEventDisableTiming));
		GPU_CUDA(cudaEventCreateWithFlags(&b->images_used[s], cudaEventDisableTiming));
	}
	/* CUDA refuses to register 0 bytes: a layer without parameters */
	if (m->desc.param_count) {
		GPU_CUDA(cudaHostRegister(m->params, m->desc.param_count * sizeof(float),
					  cudaHostRegisterDefault));
		b->host_registered |= PINNED_PARAMS;
		GPU_CUDA(cudaHostRegister(m->grads, m->desc.param_count * sizeof(float),
					  cudaHostRegisterDefault));
		b->host_registered |= PINNED_GRADS;
	}
	if (m->desc.state_count) {
		GPU_CUDA(cudaHostRegister(m->state, m->desc.state_count * sizeof(float),
					  cudaHostRegisterDefault));
		b->host_registered |= PINNED_STATE;
	}
	return 0;
}

static int gpu_load_params(struct backend *b, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	if (gpu_params_upload(b, gpu_params(b), b->m->params, d->param_count, err))
		return -1;
	if (d->state_count)
		GPU_COPY(cudaMemcpyAsync(gpu_state(b), b->m->state, d->state_count * sizeof(float),
					 cudaMemcpyHostToDevice, b->stream));
	if (b->dt != GPU_F32)
		GPU_CUDA(gpu_k_cast(b->stream, b->dt, gpu_params(b),
				    gpu_region(b, &b->plan.params_lp), d->param_count));
	return 0;
}

static int gpu_store_state(struct backend *b, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	if (!d->state_count)
		return 0;
	GPU_COPY(cudaMemcpyAsync(b->m->state, gpu_state(b), d->state_count * sizeof(float),
				 cudaMemcpyDeviceToHost, b->stream));
	GPU_CUDA(cudaStreamSynchronize(b->stream));
	return 0;
}

/* What the precision's name means on this backend (precision.c): the
 * activations' type, and the math types. fp32 is exact: FMA math for the
 * convolutions and CUBLAS_COMPUTE_32F for the GEMMs, no TF32 anywhere, so
 * it matches ref within fp32 rounding. tf32 (fp32 approximated, fp32
 * storage): TF32 tensor cores for both, CUDNN_TENSOR_OP_MATH and
 * CUBLAS_COMPUTE_32F_FAST_TF32, as PyTorch's cudnn.allow_tf32 and
 * set_float32_matmul_precision('high'). bf16 and fp16: tensor-core
 * convolutions and fp32-accumulated GEMMs (M4). */
static void precision_math(struct backend *b)
{
	enum precision s = precision_storage(b->opt.precision);
	int tf32 = s == PRECISION_FP32 && precision_approximate(b->opt.precision);

	b->dt = s == PRECISION_FP16 ? GPU_F16 : s == PRECISION_BF16 ? GPU_BF16 : GPU_F32;
	b->conv_math = b->dt == GPU_F32 && !tf32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
	b->gemm_compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

static int check_options(const struct backend_options *opt, struct trainer_error *err)
{
	if (opt->max_batch < 1)
		return trainer_error_set(err, "--batch: '%d': must be at least 1", opt->max_batch);
	return precision_check(opt->precision, "gpu", err);
}

static struct backend *gpu_create(struct model *m, const struct backend_options *opt,
				  struct trainer_error *err)
{
	if (check_options(opt, err))
		return NULL;
	struct backend *b = calloc(1, sizeof(*b));
	if (!b) {
		trainer_error_set(err, "gpu: out of host memory");
		return NULL;
	}
	b->m = m;
	b->opt = *opt;
	precision_math(b);
	b->elem_bytes = b->dt == GPU_F32 ? 4 : 2;
	b->host_grads = 1;
	gpu_loss_scale_init(&b->scaler);
	if (b->dt != GPU_F16)
		b->scaler.scale = 1.0f;
	if (open_device(b, err) || plan_layers(b, err) || allocate_pool(b, err) ||
	    pin_host(b, err) || gpu_loss_setup(b, err) || gpu_load_params(b, err)) {
		gpu_destroy(b);
		return NULL;
	}
	return b;
}

/* --- gpu_backend.h --- */
cudaStream_t gpu_backend_stream(const struct backend *b) { return b->stream; }
float *gpu_backend_device_grads(const struct backend *b) { return gpu_grads(b); }
void gpu_backend_set_host_grads(struct backend *b, int on) { b->host_grads = on != 0; }
const struct gpu_loss_scale *gpu_backend_loss_scale(const struct backend *b) { return &b->scaler; }
int gpu_backend_found_inf(const struct backend *b) { return b->found_inf; }
const char *gpu_backend_bus_id(const struct backend *b) { return b->bus_id; }

cudaEvent_t gpu_backend_grad_event(const struct backend *b, int layer)
{
	if (layer < 0 || layer >= b->m->desc.layer_count)
		return NULL;
	return b->layers[layer].grads_done;
}

int gpu_backend_loss_scale_update(struct backend *b, int found_inf)
{
	if (b->dt != GPU_F16)
		return 0;
	return gpu_loss_scale_update(&b->scaler, found_inf);
}

/* gpu_step.c */
int gpu_step_forward(struct backend *b, const struct backend_input *in, int training,
		     float *y, struct trainer_error *err);
int gpu_step_backward(struct backend *b, const float *dy, float *dx,
		      backend_grad_ready_fn ready, void *user, struct trainer_error *err);
int gpu_step_features(struct backend *b, float *maps, struct trainer_error *err);

static void gpu_libraries(char *out, size_t len)
{
	int runtime = 0;
	cudaError_t rc = cudaRuntimeGetVersion(&runtime);

	if (rc != cudaSuccess)
		snprintf(out, len, "cuDNN %zu, CUDA runtime unknown (%s)", cudnnGetVersion(),
			 cudaGetErrorString(rc));
	else
		snprintf(out, len, "cuDNN %zu, CUDA runtime %d.%d", cudnnGetVersion(), runtime / 1000,
			 runtime % 1000 / 10);
}

static void gpu_launches(struct backend_launches *out)
{
	unsigned long c[GPU_LAUNCH_KINDS];
	gpu_launches_read(c);
	*out = (struct backend_launches){ .kernels = c[GPU_LAUNCH_KERNEL], .cudnn = c[GPU_LAUNCH_CUDNN],
		.cublas = c[GPU_LAUNCH_CUBLAS], .copies = c[GPU_LAUNCH_COPY],
		.graphs = c[GPU_LAUNCH_GRAPH], .timings = c[GPU_LAUNCH_TIMING] };
	gpu_bn_channels_read(&out->bn_computed, &out->bn_normalised);
}

/* With the largest workspace any algorithm may take (GPU_WORKSPACE_CAP)
 * and the memory left outside the pool (GPU_POOL_RESERVE_BYTES): a batch
 * that fits here is one create takes with device_bytes free. */
static long gpu_largest_batch(const struct model_desc *d, enum precision p, int memory_efficient,
			      size_t device_bytes, long limit, struct trainer_error *err)
{
	struct gpu_pool_inputs in = { 1, precision_storage(p) == PRECISION_FP32 ? 4 : 2,
				      GPU_WORKSPACE_CAP, memory_efficient };

	return gpu_pool_largest_batch(d, &in, device_bytes, GPU_POOL_RESERVE_BYTES, limit, err);
}

const struct backend_ops backend_gpu_ops = {
	.name = "gpu",
	.devices = gpu_devices,
	.libraries = gpu_libraries,
	.create = gpu_create,
	.load_params = gpu_load_params,
	.forward = gpu_step_forward,
	.backward = gpu_step_backward,
	.loss = gpu_loss,
	.loss_take = gpu_loss_take,
	.store_state = gpu_store_state,
	.features = gpu_step_features,
	.launches = gpu_launches,
	.largest_batch = gpu_largest_batch,
	.destroy = gpu_destroy,
};
