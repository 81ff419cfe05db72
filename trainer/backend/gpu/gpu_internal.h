/* gpu_internal.h - the GPU backend's context (struct backend) and its
 * per-layer-kind ops table. One device pool holds every buffer
 * (gpu_pool_plan.h, M2); tensors are NCHW or NHWC (--gpu-layout, decided
 * in gpu_slice) in the activation type, each model tensor one region of
 * (max_batch, C, H, W), so a layer's channel slice is a strided view (the
 * dense-block buffers need no copies).
 * What this is not: the public accessors (gpu_backend.h).
 */
#ifndef HVD_TRAINER_GPU_INTERNAL_H
#define HVD_TRAINER_GPU_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "backend/backend.h"
#include "backend/gpu/gpu_algo_cache.h"
#include "backend/gpu/gpu_health.h"
#include "backend/gpu/gpu_kernels.h"
#include "backend/gpu/gpu_loss_scale.h"
#include "backend/gpu/gpu_pool_plan.h"

#define GPU_HEALTH_SAMPLES 4096  /* utilisation samples kept for the end summary */

/* cuDNN state of one conv layer; descriptors are re-set when N changes. */
struct gpu_conv_state {
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	int n;                                 /* batch the descriptors describe (0: none) */
	struct gpu_algo_choice fwd, bwd_data, bwd_filter;
};

struct gpu_layer {
	const struct model_layer *ml;
	struct gpu_conv_state *conv;           /* LAYER_CONV only */
	cudaEvent_t grads_done;                /* layers with parameters */
};

/* One image slot's training step as a CUDA graph (gpu_graph.c), and the
 * shape (batch, loss weights) it was captured for. */
struct gpu_step_graph {
	cudaGraphExec_t exec;
	int count, weights;
};

struct backend {
	struct model *m;
	struct backend_options opt;
	enum gpu_dtype dt;
	size_t elem_bytes;
	cudnnMathType_t conv_math;             /* what convolutions run with (precision_math) */
	cublasComputeType_t gemm_compute;      /* and GEMMs */
	int device;
	char bus_id[GPU_BUS_ID_LEN];
	cudaStream_t stream, copy_stream;
	cudnnHandle_t cudnn;
	cublasHandle_t cublas;
	struct gpu_pool_plan plan;
	char *pool;                            /* the one cudaMalloc */
	struct gpu_layer *layers;              /* desc.layer_count */
	struct gpu_algo_cache *algos;
	size_t workspace_limit;                /* bytes any chosen algorithm may use */
	size_t budget;                         /* the limit at create: the cache's key */
	int timing;                            /* create on rank 0, not heuristic: time (conv_algos.c) */
	struct gpu_algo_cache *algo_file;      /* the cache file's entries (rank 0, timed) */
	int algo_file_dirty;                   /* write it back at the end of create */
	char device_id[256];                   /* GPU_ALGO_DEVICE_MAX: the file's device line */
	char algo_path[4200];
	/* pinned host memory (P4) */
	float *host_io;                        /* fp32 x, y, dy, dx staging */
	cudaEvent_t io_uploaded;               /* the last upload out of host_io is done */
	uint8_t *host_images[2];
	int *host_flag;
	int host_registered;                   /* which of model->params/grads/state we pinned */
	cudaEvent_t images_copied[2], images_used[2];
	int slot;                              /* image buffer used by the last upload */
	const struct batch *prefetched;        /* batch staged by gpu_backend_prefetch */
	int prefetched_count;
	int count;                             /* N of the last forward */
	int trained;
	int backward;                          /* in gpu_step_backward: gpu_slice gives
						  plan.act_bwd (--memory-efficient) */
	int host_grads;
	struct gpu_loss_scale scaler;
	int found_inf;
	/* the training loss on the device (gpu_loss.c, M3) */
	struct gpu_loss_layout loss_at;        /* inside plan.loss */
	float *host_loss_in;                   /* pinned, one per image slot: labels, w+, w-
						  as on the device */
	double *host_loss_acc;                 /* pinned: the running sum, read by loss_take */
	cudaEvent_t loss_in_copied[2];           /* by slot: the last upload left it */
	int loss_state;                        /* host_loss.h's rules */
	int loss_weights;                      /* the last loss had w+ (1), w- (2) */
	/* --cuda-graph on (gpu_graph.c): a training step's device work waits
	 * for the optimizer call, then runs as its slot's graph */
	int graphs;                            /* training steps are deferred */
	int deferred;                          /* forward, loss, backward staged */
	int graph_ends_at_backward;            /* more ranks: NCCL runs between backward
						  and the optimizer, outside the graph */
	int step_slot;                         /* the step's image slot (its pinned labels and
						  optimizer values too), kept from the next
						  batch's prefetch */
	struct gpu_step_graph step_graph[2];   /* by image slot */
	struct gpu_step_graph warmed;          /* the shape whose first step ran uncaptured */
	/* health (gpu_report.c): NVML opened on first use */
	struct gpu_nvml *nvml;
	int nvml_failed;
	unsigned util_samples[GPU_HEALTH_SAMPLES];
	int util_count;                        /* samples kept (oldest dropped) */
};

/* One layer kind's implementation (backend/gpu/conv.c, backend/gpu/batchnorm.c, ...). */
struct gpu_layer_ops {
	const char *name;
	int (*forward)(struct backend *b, struct gpu_layer *l, int training,
		       struct trainer_error *err);
	/* want_dx: write the input's gradient. Parameter gradients go to the
	 * device fp32 grads (in loss-scaled units). */
	int (*backward)(struct backend *b, struct gpu_layer *l, int want_dx,
			struct trainer_error *err);
};

/* --memory-efficient: BN layer l's output written again, in backward,
 * from its kept input and the step's saved statistics (batchnorm.c). */
int gpu_bn_rebuild(struct backend *b, struct gpu_layer *l, struct trainer_error *err);

#define GPU_LAYER_KINDS (LAYER_ADD + 1)
/* Indexed by enum layer_kind (gpu_table.c); tests check none is missing. */
extern const struct gpu_layer_ops *const gpu_layer_table[GPU_LAYER_KINDS];
/* The table's entry for kind, or NULL for a kind out of range. */
const struct gpu_layer_ops *gpu_layer_ops_for(enum layer_kind kind);
extern const struct gpu_layer_ops gpu_conv_ops, gpu_bnorm_ops, gpu_relu_ops, gpu_add_ops,
	gpu_maxpool_ops, gpu_avgpool_ops, gpu_gap_ops, gpu_linear_ops;

/* Views and pointers into the pool: gpu_params is the fp32 master,
 * gpu_weights the compute type. Inline here so that the layer files do not
 * call back into gpu_backend.c. */
static inline void *gpu_region(const struct backend *b, const struct gpu_region *r)
{
	return r->bytes ? b->pool + r->offset : NULL;
}

/* The one place that decides where a model tensor's elements lie
 * (--gpu-layout, b->opt.gpu_layout): every activation and gradient
 * region is (max_batch, C, H, W) as NCHW or NHWC, and a layer's channel
 * slice is a view into it (no copy). The conv descriptors (conv.c) take
 * their strides from these views. */
static inline int gpu_nhwc(const struct backend *b)
{
	return b->opt.gpu_layout == GPU_LAYOUT_NHWC;
}

/* The filter format of every conv on the device: KRSC with NHWC. */
static inline cudnnTensorFormat_t gpu_filter_format(const struct backend *b)
{
	return gpu_nhwc(b) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

/* Slice s of a tensor whose region starts at base (NULL: strides only). */
static inline struct gpu_view gpu_view_at(const struct backend *b, const struct tensor_slice *s,
					  void *base)
{
	const struct model_tensor *t = &b->m->desc.tensors[s->tensor];
	struct gpu_view (*view)(void *, size_t, int, int, int, int, int, int) =
		gpu_nhwc(b) ? gpu_view_nhwc : gpu_view_nchw;

	return view(base, b->elem_bytes, b->count, t->channels, s->c0, s->channels, t->height,
		    t->width);
}

static inline struct gpu_view gpu_slice(const struct backend *b, const struct tensor_slice *s, int grad)
{
	const struct gpu_region *r = grad ? &b->plan.grad[s->tensor] :
				     b->backward ? &b->plan.act_bwd[s->tensor] : &b->plan.act[s->tensor];

	return gpu_view_at(b, s, b->pool + r->offset);
}

/* Elements between two images of a model tensor (a slice's stride). */
static inline long long gpu_image_stride(const struct backend *b, int tensor)
{
	const struct model_tensor *t = &b->m->desc.tensors[tensor];

	return (long long)t->channels * t->height * t->width;
}

static inline float *gpu_params(const struct backend *b) { return gpu_region(b, &b->plan.params); }
static inline float *gpu_grads(const struct backend *b) { return gpu_region(b, &b->plan.grads); }
static inline float *gpu_state(const struct backend *b) { return gpu_region(b, &b->plan.state); }
static inline float *gpu_bn_saved(const struct backend *b) { return gpu_region(b, &b->plan.bn_saved); }
static inline float *gpu_bn_parts(const struct backend *b) { return gpu_region(b, &b->plan.bn_parts); }

static inline const void *gpu_weights(const struct backend *b, size_t offset)
{
	if (b->dt == GPU_F32)
		return gpu_params(b) + offset;
	return (const char *)gpu_region(b, &b->plan.params_lp) + offset * b->elem_bytes;
}

/* gpu_input.c: bytes of fp32 host data into the device io region
 * through pinned host_io, queued on the compute stream (waits only until
 * the previous upload out of host_io has left it). */
int gpu_io_upload(struct backend *b, const void *host, size_t bytes, struct trainer_error *err);

/* gpu_filters.c: parameter vectors (params, grads, moments: count
 * floats) between the host's torchvision layout and the device's, queued
 * on b->stream; gpu_filter_permuted: layer ml's filter differs between
 * the two (a KRSC conv of R*S > 1, C > 1). */
int gpu_filter_permuted(const struct backend *b, const struct model_layer *ml);
int gpu_params_upload(struct backend *b, float *dev, const float *host, size_t count,
		      struct trainer_error *err);
int gpu_params_download(struct backend *b, float *host, const float *dev, size_t count,
			struct trainer_error *err);
/* Layer ml's weights and bias, dev -> host (both whole vectors). */
int gpu_layer_grads_download(struct backend *b, const struct model_layer *ml, float *host,
			     const float *dev, struct trainer_error *err);

/* gpu_input.c, for deferred steps: stage: the batch on its way to the
 * device (sets b->count and b->slot, which the next prefetch moves on);
 * before: the compute stream waits for slot's upload; normalise: the
 * kernel that fills the input tensor from slot; after: slot's image
 * buffer may be reused. */
int gpu_input_stage(struct backend *b, const struct backend_input *in, struct trainer_error *err);
int gpu_input_before(struct backend *b, int slot, struct trainer_error *err);
int gpu_input_normalise(struct backend *b, int slot, struct trainer_error *err);
int gpu_input_after(struct backend *b, int slot, struct trainer_error *err);

/* gpu_loss.c: backend.h's loss ops, and the hooks forward/backward call.
 * A deferred step's loss (b->deferred) only stages the labels; queue
 * puts their upload and the loss on the stream (inside the step's
 * graph), after records that the pinned labels may be written again. */
int gpu_loss_setup(struct backend *b, struct trainer_error *err);
void gpu_loss_teardown(struct backend *b);
void gpu_loss_forwarded(struct backend *b, int kept);  /* kept: training with y NULL */
int gpu_loss(struct backend *b, const float *labels, const float *w_pos, const float *w_neg,
	     struct trainer_error *err);
int gpu_loss_queue(struct backend *b, struct trainer_error *err);
int gpu_loss_after(struct backend *b, struct trainer_error *err);
const float *gpu_loss_device_dy(struct backend *b, struct trainer_error *err);
int gpu_loss_take(struct backend *b, double *sum, long *batches, struct trainer_error *err);

/* gpu_step.c: a deferred step's device work (forward, loss, backward,
 * then optim(ctx)), queued at the optimizer call as one graph
 * (gpu_graph_run). */
int gpu_step_run_deferred(struct backend *b, int (*optim)(void *ctx, struct trainer_error *err),
			  void *ctx, struct trainer_error *err);

/* gpu_graph.c: queue(ctx)'s work on b->stream as the graph of b->step_slot:
 * run uncaptured on a shape's first step (lazy set-up, such as cuBLAS's
 * handle, stays out of the capture), then captured on each slot's next
 * step and replayed after; a new shape (batch, loss weights) starts
 * again. drop: every graph destroyed (before what they point into is
 * freed). */
int gpu_graph_run(struct backend *b, int (*queue)(void *ctx, struct trainer_error *err),
		  void *ctx, struct trainer_error *err);
void gpu_graph_drop(struct backend *b);

/* backend/gpu/conv_algos.c: one direction's algorithm for layer l at batch
 * n (timed while b->timing, else heuristics; remembered in b->algos);
 * gpu_conv_remember keeps a choice made elsewhere (another rank's). */
int gpu_conv_choose(struct backend *b, struct gpu_layer *l, enum gpu_conv_dir dir, int n,
		    struct gpu_algo_choice *out, struct trainer_error *err);
void gpu_conv_remember(struct backend *b, const struct gpu_layer *l, enum gpu_conv_dir dir, int n,
		       const struct gpu_algo_choice *choice);
/* backend/gpu/conv_algos_start.c: around planning the layers at create:
 * begin reads rank 0's cache, end sends rank 0's choices to every rank
 * and writes the cache. 0 or -1. */
int gpu_conv_algos_begin(struct backend *b, struct trainer_error *err);
int gpu_conv_algos_end(struct backend *b, struct trainer_error *err);

/* backend/gpu/conv.c: descriptors and algorithms (create sizes the workspace). */
int gpu_conv_setup(struct backend *b, struct gpu_layer *l, int n, struct trainer_error *err);
size_t gpu_conv_workspace_need(const struct backend *b);
void gpu_conv_destroy(struct gpu_layer *l);
cudnnDataType_t gpu_cudnn_type(enum gpu_dtype dt);
cudaDataType_t gpu_cublas_type(enum gpu_dtype dt);

#endif
