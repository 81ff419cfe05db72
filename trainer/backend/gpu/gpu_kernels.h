/* gpu_kernels.h - the GPU backend's own CUDA kernels (gpu_k_elt.cu,
 * gpu_k_bn.cu, gpu_k_pool.cu, gpu_k_loss.cu) behind plain C functions, so the host code stays C.
 * Each launches on `stream`, never synchronises, counts each launch
 * (gpu_launches.h) and returns cudaGetLastError() (the caller checks it
 * with GPU_CUDA, gpu_check.h).
 *
 * Tensors are strided views: element (n, c, y, x) at
 * data[n*image_stride + c*channel_stride + (y*w + x)*pixel_stride], in
 * the activation type dt (fp32, fp16 or bf16; arithmetic always in
 * fp32). NCHW (backend/ref/layers.h's) has channel_stride h*w and
 * pixel_stride 1, NHWC channel_stride 1 and pixel_stride the buffer's
 * channels; gpu_view_nchw/gpu_view_nhwc make them, the backend decides
 * which (gpu_internal.h). Element-wise kernels walk a view in its memory
 * order; every result is the same in both layouts, bit for bit (each
 * sum adds the same terms in the same order).
 * Parameters, their gradients and BN statistics are always fp32.
 * Semantics mirror trainer/backend/ref one for one (the oracle): BN eps/momentum
 * and unbiased running variance, max pool ties to the first element in
 * row-major window order with padding never winning, avg pool divisor
 * k*k, ReLU masks from the output. Backward kernels gather (one thread
 * per input element), so no atomics and `accumulate` is exact: dx = v
 * or dx += v. A view whose data is NULL is not wanted (skipped).
 * What this is not: cuDNN/cuBLAS calls (backend/gpu/conv.c, backend/gpu/linear.c).
 */
#ifndef HVD_TRAINER_GPU_KERNELS_H
#define HVD_TRAINER_GPU_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend/gpu/gpu_geometry.h"
#include "backend/gpu/gpu_launches.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gpu_dtype { GPU_F32, GPU_F16, GPU_BF16 };

struct gpu_view {
	void *data;                 /* element type: the call's dt */
	int n, c, h, w;             /* (N, C, H, W) */
	long long image_stride;     /* elements between images */
	long long channel_stride;   /* between channels: h*w (NCHW) or 1 (NHWC) */
	long long pixel_stride;     /* between pixels: 1 (NCHW) or the buffer's channels (NHWC) */
};

/* Channels [c0, c0+c) of a (n, c_total, h, w) buffer at data (elements
 * of `elem` bytes), as NCHW or as NHWC; data NULL: the strides only. */
static inline struct gpu_view gpu_view_nchw(void *data, size_t elem, int n, int c_total, int c0,
					    int c, int h, int w)
{
	long long plane = (long long)h * w;
	struct gpu_view v = { data ? (char *)data + (size_t)c0 * (size_t)plane * elem : NULL,
			      n, c, h, w, c_total * plane, plane, 1 };
	return v;
}

static inline struct gpu_view gpu_view_nhwc(void *data, size_t elem, int n, int c_total, int c0,
					    int c, int h, int w)
{
	struct gpu_view v = { data ? (char *)data + (size_t)c0 * elem : NULL,
			      n, c, h, w, (long long)c_total * h * w, 1, c_total };
	return v;
}

struct gpu_norm_consts {
	float mean[3], std[3];      /* input_norm.h's ImageNet values */
};

/* --- gpu_k_elt.cu --- */
/* uint8 (count, src, src) -> dt (count, 3, out, out) via crop windows
 * (device array, or NULL: whole image, no flip), (p/255 - mean)/std (P3). */
cudaError_t gpu_k_input_images(cudaStream_t s, enum gpu_dtype dt, const uint8_t *src,
			       const struct gpu_input_geometry *g, const struct gpu_crop *crops,
			       struct gpu_norm_consts k, struct gpu_view dst);
/* dst view (dt) = or += scale * src, src fp32 packed (N, C, H, W). */
cudaError_t gpu_k_to_view(cudaStream_t s, enum gpu_dtype dt, const float *src, float scale,
			  struct gpu_view dst, int accumulate);
/* dst fp32 packed = scale * src view (dt). */
cudaError_t gpu_k_from_view(cudaStream_t s, enum gpu_dtype dt, struct gpu_view src,
			    float scale, float *dst);
/* fp32 -> dt, count elements (parameter copies for fp16/bf16). */
cudaError_t gpu_k_cast(cudaStream_t s, enum gpu_dtype dt, const float *src, void *dst,
		       size_t count);
/* dst fp32 = scale * src (dt), count elements (conv weight gradients). */
cudaError_t gpu_k_widen(cudaStream_t s, enum gpu_dtype dt, const void *src, float scale,
			float *dst, size_t count);
/* fp32 conv filters of k outputs, c inputs and rs taps: to_krsc 1: src
 * KCRS (torchvision's) into dst KRSC (cuDNN's NHWC filter format); 0:
 * back. dst and src do not overlap. */
cudaError_t gpu_k_filter_layout(cudaStream_t s, const float *src, float *dst, int k, int c,
				int rs, int to_krsc);
/* g *= scale; *found_inf = 1 if any result is inf or NaN (never reset here). */
cudaError_t gpu_k_unscale_check(cudaStream_t s, float *g, size_t count, float scale,
				int *found_inf);
cudaError_t gpu_k_relu_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			   struct gpu_view y);
cudaError_t gpu_k_relu_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
			   struct gpu_view dy, struct gpu_view dx, int accumulate);
cudaError_t gpu_k_add_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view a,
			  struct gpu_view b, int relu, struct gpu_view y);
cudaError_t gpu_k_add_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
			  struct gpu_view dy, int relu, struct gpu_view da, int accumulate_a,
			  struct gpu_view db, int accumulate_b);
/* y (N, C, H, W) view += bias[c] (fp32): linear (H = W = 1) and conv. */
cudaError_t gpu_k_bias_add(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
			   const float *bias);
/* db (C) = sum over N, H, W of dy (N, C, H, W), fp32. */
cudaError_t gpu_k_bias_grad(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
			    float *db);

/* Optimizer updates on fp32 master weights, torch.optim semantics:
 * weight decay added to the gradient (L2), Adam with bias correction
 * (step counts from 1), SGD with momentum buffer buf = m*buf + g. What
 * changes from step to step (the learning rate, the bias correction,
 * SGD's first step) the kernels read from `values` in device memory at
 * run time, so a captured step (a CUDA graph) replays with each step's
 * own: 2 floats written by gpu_adam_values / gpu_sgd_values. */
struct gpu_adam_args {
	float lr, beta1, beta2, eps, weight_decay;
	long long step;
};
/* lr / (1 - beta1^t), sqrt(1 - beta2^t); -1 for a step below 1. */
static inline int gpu_adam_values(struct gpu_adam_args a, float values[2])
{
	if (a.step < 1)
		return -1;
	double bc1 = 1.0 - pow((double)a.beta1, (double)a.step);
	double bc2 = 1.0 - pow((double)a.beta2, (double)a.step);
	values[0] = (float)(a.lr / bc1);
	values[1] = (float)sqrt(bc2);
	return 0;
}
/* lr, and 1 on the first step (buf = g), else 0. */
static inline void gpu_sgd_values(float lr, int first_step, float values[2])
{
	values[0] = lr;
	values[1] = first_step ? 1.0f : 0.0f;
}
cudaError_t gpu_k_adam(cudaStream_t s, float *param, const float *grad, float *m, float *v,
		       size_t count, struct gpu_adam_args a, const float *values);
cudaError_t gpu_k_sgd(cudaStream_t s, float *param, const float *grad, float *momentum_buf,
		      size_t count, float momentum, float weight_decay, const float *values);

/* --- gpu_k_loss.cu --- */
/* Mean sigmoid + BCE of logits (count, classes) fp32 against labels
 * (count, classes), weighted by w_pos/w_neg (classes; NULL = 1) as
 * loss.c: dy = d(loss)/d(logits) fp32; acc[0] += the loss, acc[1] += 1
 * (doubles on the device). One block: the sum order is fixed. */
cudaError_t gpu_k_bce(cudaStream_t s, const float *logits, const float *labels,
		      const float *w_pos, const float *w_neg, int count, int classes,
		      float *dy, double *acc);

/* --- gpu_k_bn.cu --- */
struct gpu_bn_args {
	float eps, momentum;         /* 1e-5, 0.1 */
	int relu;
};
/* Training forward and backward split each channel over up to max_parts
 * blocks of whole images (a part is at least 4096 elements) and add the
 * parts up in a fixed order; `part` is scratch of C * max_parts * 2
 * floats (C: the view's channels) that the two kernels of one call
 * share (the backend's plan.bn_parts, GPU_POOL_BN_PARTS). NCHW and
 * channels-last views give the same bits. The training forward takes
 * channels [0, known)'s statistics (mean, squared deviations: 2 floats a
 * channel) from `stats` and leaves the others' there. */
cudaError_t gpu_k_bn_fwd_train(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			       const float *gamma, const float *beta, struct gpu_bn_args a,
			       struct gpu_view y, float *saved_mean, float *saved_invstd,
			       float *running_mean, float *running_var, float *stats, int known,
			       float *part, int max_parts);
cudaError_t gpu_k_bn_fwd_eval(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			      const float *gamma, const float *beta, const float *running_mean,
			      const float *running_var, struct gpu_bn_args a, struct gpu_view y);
/* y from x and a training forward's saved mean and 1/std (no running
 * update): what gpu_k_bn_fwd_train wrote, bit for bit. */
cudaError_t gpu_k_bn_apply(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			   const float *gamma, const float *beta, const float *saved_mean,
			   const float *saved_invstd, struct gpu_bn_args a, struct gpu_view y);
/* dgamma, dbeta overwritten (fp32). */
cudaError_t gpu_k_bn_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			 struct gpu_view y, struct gpu_view dy, const float *gamma, int relu,
			 const float *saved_mean, const float *saved_invstd,
			 struct gpu_view dx, int accumulate, float *dgamma, float *dbeta,
			 float *part, int max_parts);

/* --- gpu_k_pool.cu --- */
struct gpu_pool_shape {
	int kernel, stride, pad;
};
cudaError_t gpu_k_maxpool_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			      struct gpu_pool_shape p, struct gpu_view y);
cudaError_t gpu_k_maxpool_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			      struct gpu_view dy, struct gpu_pool_shape p, struct gpu_view dx,
			      int accumulate);
cudaError_t gpu_k_avgpool_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			      struct gpu_pool_shape p, struct gpu_view y);
cudaError_t gpu_k_avgpool_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
			      struct gpu_pool_shape p, struct gpu_view dx, int accumulate);
cudaError_t gpu_k_gap_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
			  struct gpu_view y);
cudaError_t gpu_k_gap_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
			  struct gpu_view dx, int accumulate);

#ifdef __cplusplus
}
#endif

#endif
