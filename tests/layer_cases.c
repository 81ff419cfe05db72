/* layer_cases.c - the one-layer fixture of the layer tests (see
 * layer_cases.h): model set-up, one backend run, the comparison with ref.
 * What it does not do: name cases or skip them (the test files). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "layer_cases.h"
#include "base/rng.h"

#define FP32_TOL 1e-4
#define BF16_TOL (1.0 / 64)
#define FP16_TOL (1.0 / 256)
/* tf32 (convolutions and GEMMs on TF32 tensor cores, emulated by rounding
 * their inputs to 10 mantissa bits; fp32 storage and accumulation): each
 * input within 2^-11 of itself relative, so each product within 2^-10,
 * and a sum of products within 2^-10 of the sum of their magnitudes;
 * terms of random sign cancel in the sum and their rounding errors
 * alike, so the error stays near 2^-10 of the output's own scale: 2^-10
 * of the largest |ref| plus 2^-10 relative. Measured on the emulated
 * device: every tf32 case passes at 2^-11 too, and fails at fp32's 1e-4
 * and with inputs rounded to bf16's 7 mantissa bits instead. */
#define TF32_TOL (1.0 / 1024)

/* k/128: exact in fp16 and bf16, and inputs differ inside any 256
 * neighbours, so rounding never creates a max-pool tie or flips a ReLU
 * mask (that would move a gradient, not blur it). */
static float exact_input(size_t i)
{
	return (float)((long)(i * 37 % 256) - 128) / 128.f;
}

int layer_pair_finish(struct layer_pair *t, struct model_desc *d, int n, enum precision p,
		      const struct layer_fill *fill)
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
	rng_seed(&r, fill->seed);
	for (size_t i = 0; i < md->param_count; i++)
		t->m.params[i] = (float)(rng_uniform(&r) * 1.5 - 0.5);
	for (size_t i = 0; i < md->state_count; i++)
		t->m.state[i] = (float)(rng_uniform(&r) + 0.5);
	t->n = n;
	t->fp32_tol = 0;
	t->gpu_layout = GPU_LAYOUT_NCHW;
	t->in_count = (size_t)n * in->channels * in->height * in->width;
	t->out_count = (size_t)n * out->channels * out->height * out->width;
	t->x = malloc(t->in_count * sizeof(float));
	t->dy = malloc(t->out_count * sizeof(float));
	for (size_t i = 0; i < t->in_count; i++)
		t->x[i] = precision_storage(p) == PRECISION_FP32 ? (float)(rng_uniform(&r) * 2.0 - 1.0)
							       : exact_input(i);
	for (size_t i = 0; i < t->out_count; i++)
		t->dy[i] = (float)(rng_uniform(&r) * 2.0 - 1.0) * fill->dy_scale;
	return 0;
}

int layer_desc_one(struct model_desc *d, struct model_layer l, int ci, int hi, int wi,
		   int co, int ho, int wo)
{
	struct trainer_error err = { "" };
	int in_c = l.kind == LAYER_ADD ? 2 * ci : ci;

	model_desc_init(d, "layer");
	model_desc_add_tensor(d, "in", TENSOR_PLAIN, in_c, hi, wi, &err);
	model_desc_add_tensor(d, "out", TENSOR_PLAIN, co, ho, wo, &err);
	l.in = (struct tensor_slice){ 0, 0, ci };
	l.in2 = (struct tensor_slice){ 0, ci, ci };
	l.out = (struct tensor_slice){ 1, 0, co };
	snprintf(l.name, sizeof(l.name), "layer");
	model_desc_add_layer(d, &l, &err);
	return in_c;
}

int layer_pair_one(struct layer_pair *t, struct model_layer l, int n, int ci, int hi, int wi,
		   int co, int ho, int wo, enum precision p, const struct layer_fill *fill)
{
	struct model_desc d;

	memset(t, 0, sizeof(*t));
	layer_desc_one(&d, l, ci, hi, wi, co, ho, wo);
	return layer_pair_finish(t, &d, n, p, fill);
}

struct model_layer layer_proto(enum layer_kind kind, int k, int stride, int pad, int relu)
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

/* What one backend run leaves. */
struct result {
	float *y, *y_eval, *dx, *grads, *state;
};

static int run(struct layer_pair *t, const struct backend_ops *ops, enum precision p,
	       const float *state0, const struct batch *images, struct result *res)
{
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = t->n, .precision = p,
				       .gpu_layout = t->gpu_layout };
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

/* fp32: atol = rtol = 1e-4; bf16/fp16/tf32: bf16 keeps 8 significant
 * bits, fp16 and tf32 11, and the convs accumulate in fp32, so atol is
 * the tolerance times the largest |ref| and rtol the tolerance.
 * fp32_tol: fp32's tolerance whatever p (a case that holds an
 * approximating precision to it). */
static void compare(const char *what, const float *a, const float *ref, size_t n, enum precision p,
		    int fp32_tol)
{
	double tol = fp32_tol ? FP32_TOL : p == PRECISION_BF16 ? BF16_TOL
		     : p == PRECISION_FP16 ? FP16_TOL : p == PRECISION_TF32 ? TF32_TOL : FP32_TOL;
	double atol = tol == FP32_TOL ? tol : tol * max_abs(ref, n);
	CHECK_ARRAYS(what, a, ref, n, atol, tol);
}

void layer_vs_ref(struct layer_pair *t, const struct backend_ops *ops, enum precision p,
		  const struct batch *images)
{
	struct result ref, got;
	size_t ns = t->m.desc.state_count;
	float *state0 = malloc((ns + 1) * sizeof(float));

	memcpy(state0, t->m.state, ns * sizeof(float));
	memset(&ref, 0, sizeof(ref));
	memset(&got, 0, sizeof(got));
	if (run(t, &backend_ref_ops, PRECISION_FP32, state0, images, &ref) == 0 &&
	    run(t, ops, p, state0, images, &got) == 0) {
		compare("y (training)", got.y, ref.y, t->out_count, p, t->fp32_tol);
		compare("y (eval)", got.y_eval, ref.y_eval, t->out_count, p, t->fp32_tol);
		if (!images)
			compare("dx", got.dx, ref.dx, t->in_count, p, t->fp32_tol);
		compare("parameter gradients", got.grads, ref.grads, t->m.desc.param_count, p,
			t->fp32_tol);
		compare("running statistics", got.state, ref.state, ns, p, t->fp32_tol);
	}
	result_free(&ref);
	result_free(&got);
	free(state0);
	free(t->x);
	free(t->dy);
	model_destroy(&t->m);
}
