/* layer_cases.h - the one-layer fixture that the cpu and gpu layer tests
 * (test_cpu_layers.c, test_gpu_layers.c) share: a small model with seeded
 * parameters, running statistics, input and output gradient; a backend's
 * training and eval forward, backward and store_state on it; every result
 * compared with the ref backend's (the oracle) within the precision's
 * tolerance; the layer shapes both files test (LAYER_CASES_BOTH). The ref
 * finite-difference tests (test_ref_layers.c) use its one-layer model
 * description and layer_proto() only. What it does not do: choose a
 * backend, look for a device, or hold the cases only one backend has
 * (those stay in the test files).
 */
#ifndef HVD_TESTS_LAYER_CASES_H
#define HVD_TESTS_LAYER_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "model/model.h"

/* A model and what one step feeds it. */
struct layer_pair {
	struct model m;
	int n;                       /* batch */
	size_t in_count, out_count;  /* floats in x and dy */
	float *x;                    /* (N, C, H, W) of the input tensor */
	float *dy;                   /* (N, C, H, W) of the output tensor */
	int fp32_tol;                /* compare at fp32's tolerance whatever the precision */
	enum gpu_layout gpu_layout;  /* the backend's --gpu-layout (the gpu backend's cases) */
};

/* How the inputs are drawn: the rng seed and the scale of dy. */
struct layer_fill {
	uint64_t seed;
	float dy_scale;
};

/* Starts d as a model of one layer l, named "layer", from tensor 0 "in"
 * (ci, hi, wi; for LAYER_ADD twice ci, l reading channels [0, ci) and
 * [ci, 2 ci)) to tensor 1 "out" (co, ho, wo); d is not finished. Returns
 * the input tensor's channels. */
int layer_desc_one(struct model_desc *d, struct model_layer l, int ci, int hi, int wi,
		   int co, int ho, int wo);

/* Finishes d, creates the model and draws parameters, running statistics,
 * x (fp32: uniform; bf16/fp16: values both hold exactly) and dy. On
 * failure records it and returns -1 (nothing left to free). */
int layer_pair_finish(struct layer_pair *t, struct model_desc *d, int n, enum precision p,
		      const struct layer_fill *fill);

/* layer_desc_one(), then layer_pair_finish(). */
int layer_pair_one(struct layer_pair *t, struct model_layer l, int n, int ci, int hi, int wi,
		   int co, int ho, int wo, enum precision p, const struct layer_fill *fill);

/* A layer of kind with kernel, stride, pad and fused ReLU; the rest 0. */
struct model_layer layer_proto(enum layer_kind kind, int k, int stride, int pad, int relu);

/* Runs ref (fp32) and ops (precision p) from the same parameters and
 * running statistics and checks that ops's outputs, input gradient (not
 * with images), parameter gradients and running statistics equal ref's:
 * fp32 (or t->fp32_tol) within 1e-4 atol and rtol, bf16 (fp16; tf32)
 * within 2^-6 (2^-8; 2^-10) of the largest |ref| plus that relative.
 * Images: uint8 input instead of t->x. Frees t. */
void layer_vs_ref(struct layer_pair *t, const struct backend_ops *ops, enum precision p,
		  const struct batch *images);

/* The one-layer cases both backends run: static void test_NAME_SUFFIX(void)
 * calling VS(layer, P, n, ci, hi, wi, co, ho, wo) for each. */
#define LAYER_CASES_BOTH(VS, P, SUFFIX) \
static void test_conv_7x7_stride2_##SUFFIX(void) \
{ VS(layer_proto(LAYER_CONV, 7, 2, 3, 0), P, 2, 3, 32, 32, 64, 16, 16); } \
static void test_conv_3x3_##SUFFIX(void) \
{ VS(layer_proto(LAYER_CONV, 3, 1, 1, 0), P, 2, 128, 8, 8, 32, 8, 8); } \
static void test_conv_1x1_stride2_##SUFFIX(void) \
{ VS(layer_proto(LAYER_CONV, 1, 2, 0, 0), P, 2, 64, 8, 8, 128, 4, 4); } \
static void test_batchnorm_##SUFFIX(void) \
{ VS(layer_proto(LAYER_BATCHNORM, 0, 0, 0, 0), P, 3, 48, 5, 5, 48, 5, 5); } \
static void test_batchnorm_relu_##SUFFIX(void) \
{ VS(layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), P, 2, 64, 6, 6, 64, 6, 6); } \
static void test_relu_##SUFFIX(void) \
{ VS(layer_proto(LAYER_RELU, 0, 0, 0, 0), P, 2, 32, 5, 5, 32, 5, 5); } \
static void test_maxpool_##SUFFIX(void) \
{ VS(layer_proto(LAYER_MAXPOOL, 3, 2, 1, 0), P, 2, 64, 16, 16, 64, 8, 8); } \
static void test_avgpool_##SUFFIX(void) \
{ VS(layer_proto(LAYER_AVGPOOL, 2, 2, 0, 0), P, 2, 64, 8, 8, 64, 4, 4); } \
static void test_global_avgpool_##SUFFIX(void) \
{ VS(layer_proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0), P, 2, 64, 7, 7, 64, 1, 1); } \
static void test_linear_##SUFFIX(void) \
{ struct model_layer l = layer_proto(LAYER_LINEAR, 0, 0, 0, 0); l.has_bias = 1; \
  VS(l, P, 3, 64, 1, 1, 14, 1, 1); } \
static void test_add_relu_##SUFFIX(void) \
{ VS(layer_proto(LAYER_ADD, 0, 0, 0, 1), P, 2, 32, 4, 4, 32, 4, 4); }

#endif
