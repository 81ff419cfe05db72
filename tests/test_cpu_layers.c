/* test_cpu_layers.c - every cpu (oneDNN) layer against the ref backend:
 * each layer kind as a one-layer model, forward output, input gradient,
 * parameter gradients and BN running statistics; fp32 within atol/rtol
 * 1e-4, bf16 within the documented bf16 tolerance (BF16_TOL: 2^-6 of the
 * largest |ref| plus 2^-6 relative: bf16 keeps 8 significant bits and the
 * convs accumulate in fp32). Also: the reference-kernel check refuses a
 * strided view. What it does not test: whole networks (test_cpu_models.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend.h"
#include "model.h"
#include "rng.h"
#include "cpu/dnnl_ctx.h"

#define FP32_TOL 1e-4
#define BF16_TOL (1.0 / 64)

struct pair {
	struct model m;
	int n;
	size_t in_count, out_count;
	float *x, *dy;
};

/* bf16 runs get inputs that bf16 holds exactly and that differ inside any
 * 256 neighbours, so rounding never creates a max-pool tie or flips a
 * ReLU mask (that would move a gradient, not blur it). */
static float exact_input(size_t i)
{
	return (float)((long)(i * 37 % 256) - 128) / 128.f;
}

static int pair_setup(struct pair *t, struct model_layer l, int n, int ci, int hi, int wi,
		      int co, int ho, int wo, enum precision p)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct rng r;
	memset(t, 0, sizeof(*t));
	model_desc_init(&d, "layer");
	int in_c = l.kind == LAYER_ADD ? 2 * ci : ci;
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, in_c, hi, wi, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, co, ho, wo, &err);
	l.in = (struct tensor_slice){ 0, 0, ci };
	l.in2 = (struct tensor_slice){ 0, ci, ci };
	l.out = (struct tensor_slice){ 1, 0, co };
	snprintf(l.name, sizeof(l.name), "layer");
	model_desc_add_layer(&d, &l, &err);
	if (model_desc_finish(&d, &err) || model_create(&t->m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "model: %s", err.msg);
		return -1;
	}
	rng_seed(&r, 7);
	for (size_t i = 0; i < t->m.desc.param_count; i++)
		t->m.params[i] = (float)(rng_uniform(&r) * 1.5 - 0.5);
	for (size_t i = 0; i < t->m.desc.state_count; i++)
		t->m.state[i] = (float)(rng_uniform(&r) + 0.5);
	t->n = n;
	t->in_count = (size_t)n * in_c * hi * wi;
	t->out_count = (size_t)n * co * ho * wo;
	t->x = malloc(t->in_count * sizeof(float));
	t->dy = malloc(t->out_count * sizeof(float));
	for (size_t i = 0; i < t->in_count; i++)
		t->x[i] = p == PRECISION_BF16 ? exact_input(i) : (float)(rng_uniform(&r) * 2.0 - 1.0);
	for (size_t i = 0; i < t->out_count; i++)
		t->dy[i] = (float)(rng_uniform(&r) * 2.0 - 1.0);
	return 0;
}

struct result {
	float *y, *y_eval, *dx, *grads, *state;
};

static int run(struct pair *t, const struct backend_ops *ops, enum precision p,
	       const float *state0, struct result *res)
{
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = t->n, .precision = p };
	size_t np = t->m.desc.param_count, ns = t->m.desc.state_count;
	memcpy(t->m.state, state0, ns * sizeof(float));
	res->y = calloc(t->out_count, sizeof(float));
	res->y_eval = calloc(t->out_count, sizeof(float));
	res->dx = calloc(t->in_count, sizeof(float));
	res->grads = calloc(np + 1, sizeof(float));
	res->state = calloc(ns + 1, sizeof(float));
	struct backend *b = ops->create(&t->m, &opt, &err);
	CHECK_MSG(b, "%s create: %s", ops->name, err.msg);
	if (!b)
		return -1;
	struct backend_input in = { .x = t->x, .count = t->n };
	int rc = ops->forward(b, &in, 0, res->y_eval, &err) ||
		 ops->forward(b, &in, 1, res->y, &err) ||
		 ops->backward(b, t->dy, res->dx, NULL, NULL, &err);
	CHECK_MSG(rc == 0, "%s: %s", ops->name, err.msg);
	memcpy(res->grads, t->m.grads, np * sizeof(float));
	memcpy(res->state, t->m.state, ns * sizeof(float));
	ops->destroy(b);
	return rc ? -1 : 0;
}

static void result_free(struct result *r)
{
	free(r->y);
	free(r->y_eval);
	free(r->dx);
	free(r->grads);
	free(r->state);
}

static double max_abs(const float *a, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(a[i]));
	return m;
}

static void compare(const char *what, const float *a, const float *ref, size_t n, enum precision p)
{
	double atol = p == PRECISION_BF16 ? BF16_TOL * max_abs(ref, n) : FP32_TOL;
	double rtol = p == PRECISION_BF16 ? BF16_TOL : FP32_TOL;
	CHECK_ARRAYS(what, a, ref, n, atol, rtol);
}

static void cpu_vs_ref(struct model_layer l, enum precision p, int n, int ci, int hi, int wi,
		       int co, int ho, int wo)
{
	struct pair t;
	struct result ref, cpu;
	if (pair_setup(&t, l, n, ci, hi, wi, co, ho, wo, p))
		return;
	size_t ns = t.m.desc.state_count;
	float *state0 = malloc((ns + 1) * sizeof(float));
	memcpy(state0, t.m.state, ns * sizeof(float));
	memset(&ref, 0, sizeof(ref));
	memset(&cpu, 0, sizeof(cpu));
	if (run(&t, &backend_ref_ops, PRECISION_FP32, state0, &ref) == 0 &&
	    run(&t, &backend_cpu_ops, p, state0, &cpu) == 0) {
		compare("y (training)", cpu.y, ref.y, t.out_count, p);
		compare("y (eval)", cpu.y_eval, ref.y_eval, t.out_count, p);
		compare("dx", cpu.dx, ref.dx, t.in_count, p);
		compare("parameter gradients", cpu.grads, ref.grads, t.m.desc.param_count, p);
		compare("running statistics", cpu.state, ref.state, ns, p);
	}
	result_free(&ref);
	result_free(&cpu);
	free(state0);
	free(t.x);
	free(t.dy);
	model_destroy(&t.m);
}

static struct model_layer proto(enum layer_kind kind, int k, int stride, int pad, int relu)
{
	struct model_layer l;
	memset(&l, 0, sizeof(l));
	l.kind = kind;
	l.kernel = k;
	l.stride = stride;
	l.pad = pad;
	l.relu = relu;
	return l;
}

#define CASES(P, SUFFIX) \
static void test_conv_7x7_stride2_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_CONV, 7, 2, 3, 0), P, 2, 3, 32, 32, 64, 16, 16); } \
static void test_conv_3x3_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_CONV, 3, 1, 1, 0), P, 2, 128, 8, 8, 32, 8, 8); } \
static void test_conv_3x3_stride2_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_CONV, 3, 2, 1, 0), P, 2, 64, 8, 8, 64, 4, 4); } \
static void test_conv_1x1_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_CONV, 1, 1, 0, 0), P, 3, 96, 7, 7, 128, 7, 7); } \
static void test_conv_1x1_stride2_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_CONV, 1, 2, 0, 0), P, 2, 64, 8, 8, 128, 4, 4); } \
static void test_batchnorm_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_BATCHNORM, 0, 0, 0, 0), P, 3, 48, 5, 5, 48, 5, 5); } \
static void test_batchnorm_relu_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_BATCHNORM, 0, 0, 0, 1), P, 2, 64, 6, 6, 64, 6, 6); } \
static void test_relu_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_RELU, 0, 0, 0, 0), P, 2, 32, 5, 5, 32, 5, 5); } \
static void test_maxpool_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_MAXPOOL, 3, 2, 1, 0), P, 2, 64, 16, 16, 64, 8, 8); } \
static void test_avgpool_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_AVGPOOL, 2, 2, 0, 0), P, 2, 64, 8, 8, 64, 4, 4); } \
static void test_global_avgpool_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0), P, 2, 64, 7, 7, 64, 1, 1); } \
static void test_linear_##SUFFIX(void) \
{ struct model_layer l = proto(LAYER_LINEAR, 0, 0, 0, 0); l.has_bias = 1; \
  cpu_vs_ref(l, P, 3, 64, 1, 1, 14, 1, 1); } \
static void test_add_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_ADD, 0, 0, 0, 0), P, 2, 32, 4, 4, 32, 4, 4); } \
static void test_add_relu_##SUFFIX(void) \
{ cpu_vs_ref(proto(LAYER_ADD, 0, 0, 0, 1), P, 2, 32, 4, 4, 32, 4, 4); }

CASES(PRECISION_FP32, fp32)
CASES(PRECISION_BF16, bf16)

/* The check itself: BN on a channel-prefix view of an nChw16c buffer is
 * accepted by oneDNN with a reference kernel; we must refuse and name it. */
static void test_reference_kernel_is_refused(void)
{
	struct dnnl_ctx c;
	CHECK(dnnl_ctx_init(&c, 0) == 0);
	dnnl_memory_desc_t whole, view;
	md_nchw16c(&whole, 4, 64, 8, 8, dnnl_f32);
	dnnl_dims_t dims = { 4, 32, 8, 8 }, offs = { 0, 0, 0, 0 };
	CHECK(dnnl_memory_desc_init_submemory(&view, &whole, dims, offs) == dnnl_success);
	dnnl_batch_normalization_desc_t bd;
	memset(&bd, 0, sizeof(bd));
	CHECK(dnnl_batch_normalization_forward_desc_init(&bd, dnnl_forward_training, &view,
							 1e-5f, dnnl_use_scale) == dnnl_success);
	dnnl_primitive_desc_t pd = NULL;
	CHECK(dnnl_ctx_pd(&c, &pd, &bd, NULL, NULL, "batch norm on a view") == -1);
	CHECK(pd == NULL);
	CHECK_CONTAINS(c.err, "batch norm on a view");
	CHECK_CONTAINS(c.err, "bnorm_ref");
	CHECK_CONTAINS(c.err, "reference kernel");
	/* and the dense tensor passes */
	memset(&bd, 0, sizeof(bd));
	md_nchw16c(&whole, 4, 32, 8, 8, dnnl_f32);
	CHECK(dnnl_batch_normalization_forward_desc_init(&bd, dnnl_forward_training, &whole,
							 1e-5f, dnnl_use_scale) == dnnl_success);
	CHECK_MSG(dnnl_ctx_pd(&c, &pd, &bd, NULL, NULL, "dense") == 0, "%s", c.err);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	CHECK(dnnl_impl_is_reference("ref:any"));
	CHECK(dnnl_impl_is_reference("bnorm_ref:any"));
	CHECK(!dnnl_impl_is_reference("jit:avx512_core"));
	CHECK(!dnnl_impl_is_reference("brgconv_1x1:avx512_core_amx_bf16"));
	dnnl_ctx_free(&c);
}

#define ROW(name) { #name, test_##name }
const struct test_case cpu_layers_tests[] = {
	ROW(reference_kernel_is_refused),
	ROW(conv_7x7_stride2_fp32), ROW(conv_3x3_fp32), ROW(conv_3x3_stride2_fp32),
	ROW(conv_1x1_fp32), ROW(conv_1x1_stride2_fp32), ROW(batchnorm_fp32),
	ROW(batchnorm_relu_fp32), ROW(relu_fp32), ROW(maxpool_fp32), ROW(avgpool_fp32),
	ROW(global_avgpool_fp32), ROW(linear_fp32), ROW(add_fp32), ROW(add_relu_fp32),
	ROW(conv_7x7_stride2_bf16), ROW(conv_3x3_bf16), ROW(conv_3x3_stride2_bf16),
	ROW(conv_1x1_bf16), ROW(conv_1x1_stride2_bf16), ROW(batchnorm_bf16),
	ROW(batchnorm_relu_bf16), ROW(relu_bf16), ROW(maxpool_bf16), ROW(avgpool_bf16),
	ROW(global_avgpool_bf16), ROW(linear_bf16), ROW(add_bf16), ROW(add_relu_bf16),
	{ 0 }
};
