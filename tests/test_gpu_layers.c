/* test_gpu_layers.c - the gpu backend against the ref backend (the
 * oracle), on a GPU (group gpu-layers): each layer kind as a one-layer
 * model (forward training and eval output, input gradient, parameter
 * gradients, BN running statistics) in fp32 (atol/rtol 1e-4), bf16
 * (2^-6 of the largest |ref| plus 2^-6 relative, as the cpu tests) and
 * fp16 (2^-8 likewise, loss scaling on); a dense-block model whose layers
 * read and write channel slices of one buffer (accumulated gradients);
 * uint8 image input normalised on the GPU; the device Adam and SGD
 * updates against trainer/optim.c. Without a CUDA device every
 * case reports `skip ...: no CUDA device`. What it does not test: speed
 * (bench/, tests/gpu/run.sh).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend.h"
#include "input_norm.h"
#include "model.h"
#include "optim.h"
#include "rng.h"
#include "gpu/gpu_kernels.h"

#define FP32_TOL 1e-4
#define BF16_TOL (1.0 / 64)
#define FP16_TOL (1.0 / 256)

static int have_device(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define NEED_DEVICE() do { if (!have_device()) SKIP("no CUDA device"); } while (0)

struct pair {
	struct model m;
	int n;
	size_t in_count, out_count;
	float *x, *dy;
};

/* k/128: exact in fp16 and bf16, so rounding never moves a ReLU mask or
 * a max-pool choice. */
static float exact_input(size_t i)
{
	return (float)((long)(i * 37 % 256) - 128) / 128.f;
}

static int pair_finish(struct pair *t, struct model_desc *d, int n, enum precision p)
{
	struct trainer_error err = { "" };
	struct rng r;

	if (model_desc_finish(d, &err) || model_create(&t->m, d, &err)) {
		test_fail_at(__FILE__, __LINE__, "model: %s", err.msg);
		return -1;
	}
	const struct model_desc *md = &t->m.desc;
	const struct model_tensor *in = &md->tensors[md->input_tensor];
	const struct model_tensor *out = &md->tensors[md->output_tensor];
	rng_seed(&r, 11);
	for (size_t i = 0; i < md->param_count; i++)
		t->m.params[i] = (float)(rng_uniform(&r) * 1.5 - 0.5);
	for (size_t i = 0; i < md->state_count; i++)
		t->m.state[i] = (float)(rng_uniform(&r) + 0.5);
	t->n = n;
	t->in_count = (size_t)n * in->channels * in->height * in->width;
	t->out_count = (size_t)n * out->channels * out->height * out->width;
	t->x = malloc(t->in_count * sizeof(float));
	t->dy = malloc(t->out_count * sizeof(float));
	for (size_t i = 0; i < t->in_count; i++)
		t->x[i] = p == PRECISION_FP32 ? (float)(rng_uniform(&r) * 2.0 - 1.0) : exact_input(i);
	for (size_t i = 0; i < t->out_count; i++)
		t->dy[i] = (float)(rng_uniform(&r) * 2.0 - 1.0) / 16;
	return 0;
}

static int one_layer(struct pair *t, struct model_layer l, int n, int ci, int hi, int wi,
		     int co, int ho, int wo, enum precision p)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	int in_c = l.kind == LAYER_ADD ? 2 * ci : ci;

	memset(t, 0, sizeof(*t));
	model_desc_init(&d, "layer");
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, in_c, hi, wi, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, co, ho, wo, &err);
	l.in = (struct tensor_slice){ 0, 0, ci };
	l.in2 = (struct tensor_slice){ 0, ci, ci };
	l.out = (struct tensor_slice){ 1, 0, co };
	snprintf(l.name, sizeof(l.name), "layer");
	model_desc_add_layer(&d, &l, &err);
	return pair_finish(t, &d, n, p);
}

struct result {
	float *y, *y_eval, *dx, *grads, *state;
};

static int run(struct pair *t, const struct backend_ops *ops, enum precision p,
	       const float *state0, const struct batch *images, struct result *res)
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
	struct backend_input in = { .x = images ? NULL : t->x, .images = images, .count = t->n };
	int rc = ops->forward(b, &in, 0, res->y_eval, &err) ||
		 ops->forward(b, &in, 1, res->y, &err) ||
		 ops->backward(b, t->dy, images ? NULL : res->dx, NULL, NULL, &err) ||
		 ops->store_state(b, &err);
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
	double tol = p == PRECISION_BF16 ? BF16_TOL : p == PRECISION_FP16 ? FP16_TOL : FP32_TOL;
	double atol = p == PRECISION_FP32 ? tol : tol * max_abs(ref, n);
	CHECK_ARRAYS(what, a, ref, n, atol, tol);
}

static void gpu_vs_ref_pair(struct pair *t, enum precision p, const struct batch *images)
{
	struct result ref, gpu;
	size_t ns = t->m.desc.state_count;
	float *state0 = malloc((ns + 1) * sizeof(float));

	memcpy(state0, t->m.state, ns * sizeof(float));
	memset(&ref, 0, sizeof(ref));
	memset(&gpu, 0, sizeof(gpu));
	if (run(t, &backend_ref_ops, PRECISION_FP32, state0, images, &ref) == 0 &&
	    run(t, &backend_gpu_ops, p, state0, images, &gpu) == 0) {
		compare("y (training)", gpu.y, ref.y, t->out_count, p);
		compare("y (eval)", gpu.y_eval, ref.y_eval, t->out_count, p);
		if (!images)
			compare("dx", gpu.dx, ref.dx, t->in_count, p);
		compare("parameter gradients", gpu.grads, ref.grads, t->m.desc.param_count, p);
		compare("running statistics", gpu.state, ref.state, ns, p);
	}
	result_free(&ref);
	result_free(&gpu);
	free(state0);
	free(t->x);
	free(t->dy);
	model_destroy(&t->m);
}

static void gpu_vs_ref(struct model_layer l, enum precision p, int n, int ci, int hi, int wi,
		       int co, int ho, int wo)
{
	struct pair t;

	if (!have_device()) {
		test_skip("no CUDA device");
		return;
	}
	if (one_layer(&t, l, n, ci, hi, wi, co, ho, wo, p) == 0)
		gpu_vs_ref_pair(&t, p, NULL);
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
{ gpu_vs_ref(proto(LAYER_CONV, 7, 2, 3, 0), P, 2, 3, 32, 32, 64, 16, 16); } \
static void test_conv_3x3_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_CONV, 3, 1, 1, 0), P, 2, 128, 8, 8, 32, 8, 8); } \
static void test_conv_1x1_stride2_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_CONV, 1, 2, 0, 0), P, 2, 64, 8, 8, 128, 4, 4); } \
static void test_conv_bias_##SUFFIX(void) \
{ struct model_layer l = proto(LAYER_CONV, 3, 1, 1, 0); l.has_bias = 1; \
  gpu_vs_ref(l, P, 2, 16, 6, 6, 8, 6, 6); } \
static void test_batchnorm_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_BATCHNORM, 0, 0, 0, 0), P, 3, 48, 5, 5, 48, 5, 5); } \
static void test_batchnorm_relu_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_BATCHNORM, 0, 0, 0, 1), P, 2, 64, 6, 6, 64, 6, 6); } \
static void test_relu_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_RELU, 0, 0, 0, 0), P, 2, 32, 5, 5, 32, 5, 5); } \
static void test_maxpool_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_MAXPOOL, 3, 2, 1, 0), P, 2, 64, 16, 16, 64, 8, 8); } \
static void test_avgpool_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_AVGPOOL, 2, 2, 0, 0), P, 2, 64, 8, 8, 64, 4, 4); } \
static void test_global_avgpool_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0), P, 2, 64, 7, 7, 64, 1, 1); } \
static void test_linear_##SUFFIX(void) \
{ struct model_layer l = proto(LAYER_LINEAR, 0, 0, 0, 0); l.has_bias = 1; \
  gpu_vs_ref(l, P, 3, 64, 1, 1, 14, 1, 1); } \
static void test_add_relu_##SUFFIX(void) \
{ gpu_vs_ref(proto(LAYER_ADD, 0, 0, 0, 1), P, 2, 32, 4, 4, 32, 4, 4); }

#define ROWS(SUFFIX) \
	{ "conv_7x7_stride2_" #SUFFIX, test_conv_7x7_stride2_##SUFFIX }, \
	{ "conv_3x3_" #SUFFIX, test_conv_3x3_##SUFFIX }, \
	{ "conv_1x1_stride2_" #SUFFIX, test_conv_1x1_stride2_##SUFFIX }, \
	{ "conv_bias_" #SUFFIX, test_conv_bias_##SUFFIX }, \
	{ "batchnorm_" #SUFFIX, test_batchnorm_##SUFFIX }, \
	{ "batchnorm_relu_" #SUFFIX, test_batchnorm_relu_##SUFFIX }, \
	{ "relu_" #SUFFIX, test_relu_##SUFFIX }, \
	{ "maxpool_" #SUFFIX, test_maxpool_##SUFFIX }, \
	{ "avgpool_" #SUFFIX, test_avgpool_##SUFFIX }, \
	{ "global_avgpool_" #SUFFIX, test_global_avgpool_##SUFFIX }, \
	{ "linear_" #SUFFIX, test_linear_##SUFFIX }, \
	{ "add_relu_" #SUFFIX, test_add_relu_##SUFFIX }

CASES(PRECISION_FP32, fp32)
CASES(PRECISION_BF16, bf16)
CASES(PRECISION_FP16, fp16)

/* in (8, 6, 6) -1x1-> block[0, 8) -BN+ReLU-> mid (8) -3x3-> block[8, 12)
 * -global avg-> out (12): slices of one buffer, block[0, 8)'s gradient
 * accumulated from two readers. */
static void test_dense_block_slices_fp32(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct pair t;
	struct model_layer l;

	NEED_DEVICE();
	memset(&t, 0, sizeof(t));
	model_desc_init(&d, "layer");
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, 8, 6, 6, &err);
	model_desc_add_tensor(&d, "block", TENSOR_CONCAT, 12, 6, 6, &err);
	model_desc_add_tensor(&d, "mid", TENSOR_PLAIN, 8, 6, 6, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, 12, 1, 1, &err);
	l = proto(LAYER_CONV, 1, 1, 0, 0);
	snprintf(l.name, sizeof(l.name), "conv0");
	l.in = (struct tensor_slice){ 0, 0, 8 };
	l.out = (struct tensor_slice){ 1, 0, 8 };
	model_desc_add_layer(&d, &l, &err);
	l = proto(LAYER_BATCHNORM, 0, 0, 0, 1);
	snprintf(l.name, sizeof(l.name), "norm1");
	l.in = (struct tensor_slice){ 1, 0, 8 };
	l.out = (struct tensor_slice){ 2, 0, 8 };
	model_desc_add_layer(&d, &l, &err);
	l = proto(LAYER_CONV, 3, 1, 1, 0);
	snprintf(l.name, sizeof(l.name), "conv1");
	l.in = (struct tensor_slice){ 2, 0, 8 };
	l.out = (struct tensor_slice){ 1, 8, 4 };
	model_desc_add_layer(&d, &l, &err);
	l = proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0);
	snprintf(l.name, sizeof(l.name), "pool");
	l.in = (struct tensor_slice){ 1, 0, 12 };
	l.out = (struct tensor_slice){ 3, 0, 12 };
	model_desc_add_layer(&d, &l, &err);
	if (pair_finish(&t, &d, 3, PRECISION_FP32) == 0)
		gpu_vs_ref_pair(&t, PRECISION_FP32, NULL);
}

/* uint8 images: the GPU's normalisation equals input_norm.h's. */
static void test_image_input_normalised_on_gpu(void)
{
	struct pair t;
	struct batch images = { 0 };

	NEED_DEVICE();
	if (one_layer(&t, proto(LAYER_CONV, 3, 2, 1, 0), 2, 3, 16, 16, 8, 8, 8, PRECISION_FP32))
		return;
	images.count = images.capacity = 2;
	images.size = 16;
	images.pixels = malloc(2 * 16 * 16);
	for (int i = 0; i < 2 * 16 * 16; i++)
		images.pixels[i] = (uint8_t)(i * 29 % 256);
	gpu_vs_ref_pair(&t, PRECISION_FP32, &images);
	free(images.pixels);
}

/* Three device updates (gpu_k_adam / gpu_k_sgd) against optim_step. */
static void optimizer_vs_host(enum optim_kind kind)
{
	enum { COUNT = 1000, STEPS = 3 };
	struct optim_config cfg;
	struct optim o;
	struct trainer_error err = { "" };
	float p[COUNT], g[COUNT], got[COUNT];
	float *dp = NULL, *dg = NULL, *dm = NULL, *dv = NULL;
	struct rng r;

	NEED_DEVICE();
	optim_config_default(&cfg);
	cfg.kind = kind;
	cfg.momentum = 0.9;
	cfg.weight_decay = 1e-4;
	CHECK_INT(optim_init(&o, &cfg, COUNT, &err), 0);
	rng_seed(&r, 5);
	for (int i = 0; i < COUNT; i++) {
		p[i] = (float)rng_normal(&r);
		g[i] = (float)rng_normal(&r) * 0.1f;
	}
	CHECK(cudaMalloc((void **)&dp, sizeof(p)) == cudaSuccess &&
	      cudaMalloc((void **)&dg, sizeof(g)) == cudaSuccess &&
	      cudaMalloc((void **)&dm, sizeof(p)) == cudaSuccess &&
	      cudaMalloc((void **)&dv, sizeof(p)) == cudaSuccess);
	CHECK(cudaMemcpy(dp, p, sizeof(p), cudaMemcpyHostToDevice) == cudaSuccess);
	CHECK(cudaMemcpy(dg, g, sizeof(g), cudaMemcpyHostToDevice) == cudaSuccess);
	CHECK(cudaMemset(dm, 0, sizeof(p)) == cudaSuccess && cudaMemset(dv, 0, sizeof(p)) == cudaSuccess);
	for (int step = 1; step <= STEPS; step++) {
		struct gpu_adam_args a = { 1e-3f, (float)cfg.beta1, (float)cfg.beta2, (float)cfg.eps,
					   (float)cfg.weight_decay, step };
		cudaError_t rc = kind == OPTIM_ADAM ? gpu_k_adam(0, dp, dg, dm, dv, COUNT, a)
			: gpu_k_sgd(0, dp, dg, dm, COUNT, 1e-3f, (float)cfg.momentum,
				    (float)cfg.weight_decay, step == 1);
		CHECK_MSG(rc == cudaSuccess, "step %d: %s", step, cudaGetErrorString(rc));
		optim_step(&o, p, g, 1e-3);
	}
	CHECK(cudaMemcpy(got, dp, sizeof(got), cudaMemcpyDeviceToHost) == cudaSuccess);
	CHECK_ARRAYS("parameters", got, p, COUNT, 1e-6, 1e-5);
	cudaFree(dp);
	cudaFree(dg);
	cudaFree(dm);
	cudaFree(dv);
	optim_free(&o);
}

static void test_adam_kernel_matches_host(void) { optimizer_vs_host(OPTIM_ADAM); }
static void test_sgd_kernel_matches_host(void) { optimizer_vs_host(OPTIM_SGD); }

const struct test_case gpu_layers_tests[] = {
	ROWS(fp32),
	ROWS(bf16),
	ROWS(fp16),
	{ "dense_block_slices_fp32", test_dense_block_slices_fp32 },
	{ "image_input_normalised_on_gpu", test_image_input_normalised_on_gpu },
	{ "adam_kernel_matches_host", test_adam_kernel_matches_host },
	{ "sgd_kernel_matches_host", test_sgd_kernel_matches_host },
	{ 0 }
};
