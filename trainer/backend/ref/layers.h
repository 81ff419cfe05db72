/* backend/ref/layers.h - the reference backend's layers: plain C loops over NCHW
 * views, readable and never optimised. They are the oracle every other
 * backend is tested against, and they are checked themselves by finite
 * differences (tests/test_ref_layers.c).
 *
 * A view is N images of (C, H, W) where image n starts image_stride
 * floats after image n-1: a channel slice [c0, c0+C) of a bigger tensor
 * is `data = base + c0*H*W`, image_stride = C_total*H*W. Backward
 * functions write dx with `=` or, when accumulate is set, `+=`; dx may be
 * NULL (not wanted). Parameter gradients are always overwritten.
 * What this is not: the backend glue (backend/ref/backend.c).
 */
#ifndef HVD_TRAINER_REF_LAYERS_H
#define HVD_TRAINER_REF_LAYERS_H

#include <stddef.h>

struct ref_view {
	float *data;           /* element (n, c, y, x) at data[n*image_stride + (c*h + y)*w + x] */
	int n, c, h, w;
	size_t image_stride;   /* floats between images */
};

static inline float *ref_at(const struct ref_view *v, int n, int c, int y, int x)
{
	return v->data + (size_t)n * v->image_stride + ((size_t)c * v->h + y) * v->w + x;
}

struct ref_conv_shape {
	int kernel, stride, pad;
};

/* w: (Cout, Cin, k, k); bias: (Cout) or NULL. */
void ref_conv_forward(const struct ref_view *x, const float *w, const float *bias,
		      struct ref_conv_shape s, const struct ref_view *y);
/* dw like w; db like bias (NULL if no bias). */
void ref_conv_backward(const struct ref_view *x, const float *w, const struct ref_view *dy,
		       struct ref_conv_shape s, const struct ref_view *dx, int accumulate,
		       float *dw, float *db);

/* Batch norm over (N, H, W) per channel, eps 1e-5, momentum 0.1 (torch).
 * Training: batch statistics; saves mean and 1/sqrt(var+eps) (C each) for
 * backward and updates running_mean/var (unbiased variance). relu: ReLU
 * applied to the output. */
#define REF_BN_EPS 1e-5
#define REF_BN_MOMENTUM 0.1
void ref_batchnorm_forward_train(const struct ref_view *x, const float *gamma,
				 const float *beta, int relu, const struct ref_view *y,
				 float *saved_mean, float *saved_invstd,
				 float *running_mean, float *running_var);
void ref_batchnorm_forward_eval(const struct ref_view *x, const float *gamma,
				const float *beta, const float *running_mean,
				const float *running_var, int relu, const struct ref_view *y);
/* y: the forward output (for the ReLU mask when relu is set). */
void ref_batchnorm_backward(const struct ref_view *x, const struct ref_view *y,
			    const struct ref_view *dy, const float *gamma, int relu,
			    const float *saved_mean, const float *saved_invstd,
			    const struct ref_view *dx, int accumulate,
			    float *dgamma, float *dbeta);

void ref_relu_forward(const struct ref_view *x, const struct ref_view *y);
/* Mask from the output y (> 0), as torch's threshold_backward. */
void ref_relu_backward(const struct ref_view *y, const struct ref_view *dy,
		       const struct ref_view *dx, int accumulate);

/* Max pool: padding never wins; ties go to the first element in row-major
 * window order. */
void ref_maxpool_forward(const struct ref_view *x, struct ref_conv_shape s,
			 const struct ref_view *y);
void ref_maxpool_backward(const struct ref_view *x, const struct ref_view *dy,
			  struct ref_conv_shape s, const struct ref_view *dx, int accumulate);

/* Average pool, divisor k*k (torch's count_include_pad=True). */
void ref_avgpool_forward(const struct ref_view *x, struct ref_conv_shape s,
			 const struct ref_view *y);
void ref_avgpool_backward(const struct ref_view *dy, struct ref_conv_shape s,
			  const struct ref_view *dx, int accumulate);

/* (C, H, W) -> (C, 1, 1). */
void ref_global_avgpool_forward(const struct ref_view *x, const struct ref_view *y);
void ref_global_avgpool_backward(const struct ref_view *dy, const struct ref_view *dx,
				 int accumulate);

/* x flattened to (N, C*H*W); w: (out, C*H*W), bias (out); y (N, out, 1, 1). */
void ref_linear_forward(const struct ref_view *x, const float *w, const float *bias,
			const struct ref_view *y);
void ref_linear_backward(const struct ref_view *x, const float *w, const struct ref_view *dy,
			 const struct ref_view *dx, int accumulate, float *dw, float *db);

/* y = a + b, then ReLU if relu. */
void ref_add_forward(const struct ref_view *a, const struct ref_view *b, int relu,
		     const struct ref_view *y);
void ref_add_backward(const struct ref_view *y, const struct ref_view *dy, int relu,
		      const struct ref_view *da, int accumulate_a,
		      const struct ref_view *db, int accumulate_b);

#endif
