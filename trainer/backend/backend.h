/* backend.h - the op interface every compute backend implements (ref, cpu,
 * gpu) and the one place that picks a backend by name (backend.c).
 *
 * A backend runs a whole struct model_desc (a network, or a one-layer
 * model in the per-layer tests) forward and backward. It keeps whatever
 * internal layout it likes (the cpu backend: blocked layouts end to end);
 * what crosses this interface is always plain:
 *  - parameters: read from model->params (torchvision layouts, fp32) at
 *    create and again at load_params (call it after the optimizer step or
 *    a checkpoint load: a backend may hold reordered or bf16 copies);
 *  - gradients: backward overwrites model->grads (torchvision layouts) and
 *    calls ready(offset, count, user) once per layer with parameters, in
 *    backward order, as soon as that layer's range is final (the fusion
 *    engine starts reducing during backward);
 *  - BN running stats: forward with training=1 updates model->state
 *    (momentum 0.1, unbiased variance, eps 1e-5, as torch); store_state
 *    makes sure the host copy is current (device backends); the caller
 *    counts batches (model->batches_tracked);
 *  - activations in and out: NCHW fp32, or uint8 images (struct batch)
 *    that the backend normalises itself (ImageNet mean/std, gray to 3
 *    channels; input_norm.h) as its first step (P3);
 *  - the training loss (M3): forward with y NULL keeps the logits where
 *    the backend computes, loss() turns them into the loss and its
 *    gradient there (loss.h's rule, bit for bit on host backends),
 *    backward with dy NULL takes that gradient, and the loss stays on the
 *    backend, summed, until loss_take() reads it: a device backend never
 *    waits for the GPU to hand over a per-step loss.
 *  - the last feature maps (optional, for class activation maps): after
 *    a forward, features() hands them over like the logits.
 * What this is not: the optimizer, data loading, or evaluation metrics
 * (evaluation reads the logits: forward with y).
 */
#ifndef HVD_TRAINER_BACKEND_H
#define HVD_TRAINER_BACKEND_H

#include <stddef.h>

#include "base/batch.h"
#include "base/error.h"
#include "model/model.h"

/* The --precision names, in the settings row's order (precision.c says
 * what each means on every backend). */
enum precision {
	PRECISION_FP32,   /* exact fp32 everywhere */
	PRECISION_BF16,   /* bf16 compute, fp32 master weights and BN statistics (M4) */
	PRECISION_FP16,   /* gpu only */
	PRECISION_TF32,   /* fp32 storage, fp32 math the hardware may approximate */
};

/* --conv-algorithms, in the settings row's order: how the gpu backend
 * chooses cuDNN's convolution algorithms (backend/gpu/README.md, "Conv
 * algorithms"); host backends take any and change nothing. */
enum conv_algorithms {
	CONV_ALGOS_TIMED,       /* timed once per shape, deterministic only, cached */
	CONV_ALGOS_HEURISTIC,   /* cuDNN's heuristics, deterministic only */
	CONV_ALGOS_TIMED_ANY,   /* timed, non-deterministic algorithms allowed */
};

/* --gpu-layout, in the settings row's order: how the gpu backend lays
 * out activations and gradients (NCHW or NHWC) and conv filters (KCRS or
 * KRSC) on the device (backend/gpu/README.md, "Layout"); parameters,
 * gradients and checkpoints on the host stay torchvision's. Host
 * backends take either and change nothing. */
enum gpu_layout {
	GPU_LAYOUT_NCHW,
	GPU_LAYOUT_NHWC,
};

struct backend;  /* each backend's own context */

/* How ranks agree on what one of them measured (the gpu backend's timed
 * convolution algorithms): rank 0 measures, broadcast sends its bytes to
 * every rank in place. broadcast NULL: one rank, nothing to send. */
struct backend_share {
	int rank;
	void *ctx;
	/* b: the backend being created (its stream may carry the bytes);
	 * 0, or -1 (the callee printed why). */
	int (*broadcast)(void *ctx, struct backend *b, void *bytes, size_t len);
};

struct backend_options {
	int max_batch;          /* N at most; every call may use fewer */
	enum precision precision;
	int threads;            /* compute threads; 0 = the allowed CPUs */
	int memory_efficient;   /* recompute BN(+ReLU) outputs in backward
				   instead of storing them (Pleiss et al. 2017);
				   gradients must not change */
	int native_only;        /* probe: refuse a precision this machine
				   only emulates (slower than fp32) */
	enum conv_algorithms conv_algorithms;
	enum gpu_layout gpu_layout;
	int cuda_graph;         /* gpu training step as one CUDA graph (gpu_train.h) */
	const char *algo_cache_dir;  /* where timed choices are kept (NULL: not kept) */
	struct backend_share share;
};

/* Exactly one of images / x is set. */
struct backend_input {
	const struct batch *images;  /* uint8 (N, S, S); S must equal the input tensor's H and W,
					which must have 3 channels */
	const float *x;              /* (N, C, H, W) of the input tensor, NCHW */
	int count;                   /* N: 1..max_batch (images: use images->count or the
					whole capacity, as the caller decides) */
};

/* Called during backward: params[offset .. offset+count) of model->grads
 * are final. */
typedef void (*backend_grad_ready_fn)(size_t offset, size_t count, void *user);


/* The calls a device backend made that put work on its device, since the
 * process began (gpu: backend/gpu/gpu_launches.h). */
struct backend_launches {
	unsigned long kernels, cudnn, cublas, copies, graphs;
	unsigned long timings;  /* algorithm timing calls (cuDNN's Find), at create */
	/* channels training BN layers normalised, and of them those whose
	 * batch statistics they computed (the rest reused an earlier layer's) */
	unsigned long bn_normalised, bn_computed;
};

struct backend_ops {
	const char *name;  /* "ref", "cpu", "gpu" */
	/* Optional (NULL: nothing to check). Before anything is built: can
	 * this machine run opt (an error naming why not and the way out), and
	 * what the backend will use here, for the start-up line ("avx2,
	 * 8-channel blocks"). */
	int (*probe)(const struct backend_options *opt, char *what, size_t len,
		     struct trainer_error *err);
	/* Optional: the versions of the libraries it computes with, for the
	 * run's record ("oneDNN 3.4.1"). */
	void (*libraries)(char *out, size_t len);
	/* Optional (gpu): the devices this process can use (after
	 * CUDA_VISIBLE_DEVICES); 0 with why, one line. */
	int (*devices)(char *why, size_t len);
	/* The model must outlive the backend. NULL + err on failure
	 * (unsupported precision, out of memory, a slow kernel chosen...). */
	struct backend *(*create)(struct model *m, const struct backend_options *opt,
				  struct trainer_error *err);
	/* Re-read model->params (and model->state). */
	int (*load_params)(struct backend *b, struct trainer_error *err);
	/* y: (N, C, H, W) of the output tensor, NCHW fp32 (the logits
	 * (N, classes) for a network). training=1: batch statistics + running
	 * stat update; 0: running statistics, nothing stored for backward.
	 * y NULL (training only): the logits stay on the backend for loss(). */
	int (*forward)(struct backend *b, const struct backend_input *in, int training,
		       float *y, struct trainer_error *err);
	/* After a training forward of the same input. dy like y, or NULL:
	 * the gradient loss() left (an error when there is none). dx: the
	 * input tensor's gradient (N, C, H, W), or NULL when not wanted.
	 * ready may be NULL. */
	int (*backward)(struct backend *b, const float *dy, float *dx,
			backend_grad_ready_fn ready, void *user,
			struct trainer_error *err);
	/* After a training forward with y NULL: loss_bce (loss.h) of the
	 * kept logits against labels (N, outputs) fp32, w_pos/w_neg NULL or
	 * (outputs) per-class weights; keeps d(loss)/d(logits) for backward
	 * (dy NULL) and adds the batch's mean loss to the backend's running
	 * sum. Once per forward. Never waits for a device. */
	int (*loss)(struct backend *b, const float *labels, const float *w_pos,
		    const float *w_neg, struct trainer_error *err);
	/* The running sum of loss() results and how many batches it holds,
	 * then both reset to 0: the one place a device backend waits for
	 * the loss (call it every N steps, M3). */
	int (*loss_take)(struct backend *b, double *sum, long *batches,
			 struct trainer_error *err);
	/* Bring model->state up to date (a no-op for host backends). */
	int (*store_state)(struct backend *b, struct trainer_error *err);
	/* Optional (NULL: this backend cannot; the caller says so). After a
	 * forward of N images (evaluation or training): their last feature
	 * maps, the tensor feeding the global average pooling
	 * (model_features_find), (N, C, h, w) NCHW fp32 into maps: what class
	 * activation maps are made of. An error when the model has no such
	 * tensor or the backend did not keep it. */
	int (*features)(struct backend *b, float *maps, struct trainer_error *err);
	/* Optional (NULL: a host backend, which launches nothing): its
	 * launches so far, for `chexnet bench`. */
	void (*launches)(struct backend_launches *out);
	/* Optional (NULL: no device pool): the largest batch, at most limit,
	 * whose device memory plan for model d in precision p (with or
	 * without memory_efficient) fits in device_bytes; from the plan
	 * alone (no device needed). 0 when not one image fits; -1 (err) on
	 * bad inputs. */
	long (*largest_batch)(const struct model_desc *d, enum precision p, int memory_efficient,
			      size_t device_bytes, long limit, struct trainer_error *err);
	void (*destroy)(struct backend *b);
};

/* Registered backends (each defined in its own directory). */
extern const struct backend_ops backend_ref_ops;   /* trainer/backend/ref */
extern const struct backend_ops backend_cpu_ops;   /* trainer/backend/cpu, HAVE_DNNL */
extern const struct backend_ops backend_gpu_ops;   /* trainer/backend/gpu, HAVE_CUDA */

/* "ref", "cpu", "gpu": the backend, or NULL + err naming what this build
 * has. */
const struct backend_ops *backend_find(const char *name, struct trainer_error *err);
/* Space-separated names this build has, e.g. "ref cpu". */
const char *backend_names(void);

/* What a --precision name means (precision.c, the one table): */
const char *precision_name(enum precision p);
/* The activations' type: PRECISION_FP32, _BF16 or _FP16 (master weights,
 * BN statistics and gradients are fp32 under every name). */
enum precision precision_storage(enum precision p);
/* 1 when fp32 arithmetic may be approximated for speed: on the gpu
 * TF32 tensor cores (convolutions CUDNN_TENSOR_OP_MATH, GEMMs
 * CUBLAS_COMPUTE_32F_FAST_TF32), on the cpu oneDNN's choice of algorithm
 * (Winograd); 0 (fp32): direct convolutions, FMA math, CUBLAS_COMPUTE_32F. */
int precision_approximate(enum precision p);
/* 0 when backend ("ref", "cpu", "gpu") takes p, else -1 and one line in
 * err: "--precision: 'tf32': the ref backend computes in fp32 only". */
int precision_check(enum precision p, const char *backend, struct trainer_error *err);

#endif
