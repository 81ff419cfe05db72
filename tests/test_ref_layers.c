/* test_ref_layers.c - every ref layer's backward against central finite
 * differences (computed in double over the float forward), each run as a
 * one-layer model through the ref backend, plus the loss and a small
 * DenseNet end to end. What it does not test: other backends (their own
 * tests compare them to ref).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/backend.h"
#include "layer_cases.h"
#include "model/loss.h"
#include "model/model.h"
#include "base/rng.h"

#define FD_H 1e-2
#define FD_SAMPLES 60

struct one_layer {
	struct model m;
	struct backend *b;
	int n;
	size_t in_count, out_count;
	float *x, *y, *r, *dx, *y2;
};

/* Builds a model of one layer from (C,H,W) in to (C,H,W) out (in2 too for
 * ADD: a second input channel slice of the same input tensor; see
 * layer_desc_one()) on the ref backend, with seeded parameters, x and r. */
static int one_layer_setup(struct one_layer *t, struct model_layer proto, int n,
			   int ci, int hi, int wi, int co, int ho, int wo, uint64_t seed)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct rng r;

	memset(t, 0, sizeof(*t));
	int in_c = layer_desc_one(&d, proto, ci, hi, wi, co, ho, wo);
	if (model_desc_finish(&d, &err) || model_create(&t->m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "model: %s", err.msg);
		return -1;
	}
	rng_seed(&r, seed);
	for (size_t i = 0; i < t->m.desc.param_count; i++)
		t->m.params[i] = (float)(rng_uniform(&r) * 1.5 - 0.5);
	struct backend_options opt = { .max_batch = n, .precision = PRECISION_FP32 };
	t->b = backend_ref_ops.create(&t->m, &opt, &err);
	CHECK_MSG(t->b, "create: %s", err.msg);
	t->n = n;
	t->in_count = (size_t)n * in_c * hi * wi;
	t->out_count = (size_t)n * co * ho * wo;
	t->x = malloc(t->in_count * sizeof(float));
	t->dx = malloc(t->in_count * sizeof(float));
	t->y = malloc(t->out_count * sizeof(float));
	t->y2 = malloc(t->out_count * sizeof(float));
	t->r = malloc(t->out_count * sizeof(float));
	for (size_t i = 0; i < t->in_count; i++)
		t->x[i] = (float)(rng_uniform(&r) * 2.0 - 1.0);
	for (size_t i = 0; i < t->out_count; i++)
		t->r[i] = (float)(rng_uniform(&r) * 2.0 - 1.0);
	return t->b ? 0 : -1;
}

static void one_layer_free(struct one_layer *t)
{
	if (t->b)
		backend_ref_ops.destroy(t->b);
	model_destroy(&t->m);
	free(t->x);
	free(t->dx);
	free(t->y);
	free(t->y2);
	free(t->r);
}

/* L = sum(y * r) in double; y left in out. */
static double objective(struct one_layer *t, float *out)
{
	struct backend_input in = { .x = t->x, .count = t->n };
	struct trainer_error err;
	double sum = 0.0;

	if (backend_ref_ops.forward(t->b, &in, 1, out, &err))
		return NAN;
	for (size_t i = 0; i < t->out_count; i++)
		sum += (double)out[i] * t->r[i];
	return sum;
}

static int same_zero_mask(const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((a[i] == 0.0f) != (b[i] == 0.0f))
			return 0;
	return 1;
}

/* Central difference of L with respect to *v; 1 if usable (no ReLU mask
 * change between the two sides), 0 otherwise. */
static int numeric(struct one_layer *t, float *v, double *out)
{
	float keep = *v;

	*v = keep + (float)FD_H;
	double lp = objective(t, t->y);
	*v = keep - (float)FD_H;
	double lm = objective(t, t->y2);
	*v = keep;
	*out = (lp - lm) / (2.0 * FD_H);
	return same_zero_mask(t->y, t->y2, t->out_count);
}

/* Checks dx and every parameter gradient (sampled) against FD. */
static void fd_check(struct one_layer *t, double atol, double rtol)
{
	struct trainer_error err = { "" };
	struct backend_input in = { .x = t->x, .count = t->n };
	float *grads = malloc((t->m.desc.param_count + 1) * sizeof(float));
	int skipped = 0, checked = 0;

	CHECK(backend_ref_ops.forward(t->b, &in, 1, t->y, &err) == 0);
	CHECK_MSG(backend_ref_ops.backward(t->b, t->r, t->dx, NULL, NULL, &err) == 0, "%s", err.msg);
	memcpy(grads, t->m.grads, t->m.desc.param_count * sizeof(float));
	for (int s = 0; s < FD_SAMPLES; s++) {
		size_t i = (size_t)s * 7919 % t->in_count;
		double num;
		if (!numeric(t, &t->x[i], &num)) {
			skipped++;
			continue;
		}
		checked++;
		CHECK_MSG(test_near(t->dx[i], num, atol, rtol), "dx[%zu] = %.7g, numeric %.7g",
			  i, t->dx[i], num);
	}
	for (size_t s = 0; s < FD_SAMPLES && t->m.desc.param_count; s++) {
		size_t i = s * 104729 % t->m.desc.param_count;
		double num;
		if (!numeric(t, &t->m.params[i], &num)) {
			skipped++;
			continue;
		}
		checked++;
		CHECK_MSG(test_near(grads[i], num, atol, rtol), "dparam[%zu] = %.7g, numeric %.7g",
			  i, grads[i], num);
	}
	CHECK_MSG(skipped * 10 <= checked, "%d of %d samples crossed a ReLU kink", skipped,
		  skipped + checked);
	free(grads);
}

static void run_fd(struct model_layer l, int n, int ci, int hi, int wi, int co, int ho,
		   int wo, double atol, double rtol)
{
	struct one_layer t;

	if (one_layer_setup(&t, l, n, ci, hi, wi, co, ho, wo, 42) == 0)
		fd_check(&t, atol, rtol);
	one_layer_free(&t);
}

static struct model_layer with_bias(struct model_layer l)
{
	l.has_bias = 1;
	return l;
}

/* static void test_fd_NAME(void): run_fd(LAYER, n, ci, hi, wi, co, ho, wo, atol, rtol) */
#define FD_CASE(NAME, LAYER, ...) static void test_fd_##NAME(void) { run_fd(LAYER, __VA_ARGS__); }

FD_CASE(conv_7x7_stride2, layer_proto(LAYER_CONV, 7, 2, 3, 0), 2, 3, 9, 9, 4, 5, 5, 2e-3, 2e-3)
FD_CASE(conv_3x3, layer_proto(LAYER_CONV, 3, 1, 1, 0), 2, 5, 6, 6, 3, 6, 6, 2e-3, 2e-3)
FD_CASE(conv_3x3_stride2_bias, with_bias(layer_proto(LAYER_CONV, 3, 2, 1, 0)),
	2, 3, 7, 7, 2, 4, 4, 2e-3, 2e-3)
FD_CASE(conv_1x1, layer_proto(LAYER_CONV, 1, 1, 0, 0), 3, 6, 4, 4, 5, 4, 4, 2e-3, 2e-3)
FD_CASE(batchnorm, layer_proto(LAYER_BATCHNORM, 0, 0, 0, 0), 3, 4, 3, 3, 4, 3, 3, 3e-3, 1e-2)
FD_CASE(batchnorm_relu, layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), 3, 4, 3, 3, 4, 3, 3, 3e-3, 1e-2)
FD_CASE(relu, layer_proto(LAYER_RELU, 0, 0, 0, 0), 2, 3, 4, 4, 3, 4, 4, 1e-3, 1e-3)
FD_CASE(avgpool, layer_proto(LAYER_AVGPOOL, 2, 2, 0, 0), 2, 3, 6, 6, 3, 3, 3, 1e-3, 1e-3)
FD_CASE(global_avgpool, layer_proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0),
	2, 4, 3, 5, 4, 1, 1, 1e-3, 1e-3)
FD_CASE(linear, layer_proto(LAYER_LINEAR, 0, 0, 0, 0), 3, 6, 2, 2, 5, 1, 1, 2e-3, 2e-3)
FD_CASE(add_relu, layer_proto(LAYER_ADD, 0, 0, 0, 1), 2, 3, 3, 3, 3, 3, 3, 1e-3, 1e-3)

static void test_fd_maxpool(void)
{
	struct one_layer t;
	struct rng r;
	struct model_layer l = layer_proto(LAYER_MAXPOOL, 3, 2, 1, 0);

	if (one_layer_setup(&t, l, 2, 2, 7, 7, 2, 4, 4, 7) == 0) {
		/* distinct values 0.05 apart so no FD step changes a window's max */
		rng_seed(&r, 3);
		for (size_t i = 0; i < t.in_count; i++)
			t.x[i] = (float)(0.05 * (double)i);
		for (size_t i = t.in_count - 1; i > 0; i--) {
			size_t j = rng_next(&r) % (i + 1);
			float v = t.x[i];
			t.x[i] = t.x[j];
			t.x[j] = v;
		}
		fd_check(&t, 2e-3, 2e-3);
	}
	one_layer_free(&t);
}

static void test_fd_loss_weighted_and_plain(void)
{
	float z[6] = { -2.0f, 0.3f, 4.0f, 0.0f, -0.7f, 1.5f }, y[6] = { 0, 1, 1, 0, 1, 0 };
	float wp[3] = { 0.9f, 0.7f, 0.2f }, wn[3] = { 0.1f, 0.3f, 0.8f }, g[6];

	for (int weighted = 0; weighted < 2; weighted++) {
		const float *p = weighted ? wp : NULL, *q = weighted ? wn : NULL;
		loss_bce(z, y, 2, 3, p, q, g);
		for (int i = 0; i < 6; i++) {
			float keep = z[i];
			z[i] = keep + 1e-3f;
			double lp = loss_bce(z, y, 2, 3, p, q, NULL);
			z[i] = keep - 1e-3f;
			double lm = loss_bce(z, y, 2, 3, p, q, NULL);
			z[i] = keep;
			CHECK_NEAR(g[i], (lp - lm) / 2e-3, 1e-5, 1e-3);
		}
	}
	/* plain BCE of logit 0 is log 2 whatever the label */
	float z0[2] = { 0, 0 }, y0[2] = { 0, 1 };
	CHECK_NEAR(loss_bce(z0, y0, 1, 2, NULL, NULL, NULL), log(2.0), 1e-7, 0);
}

static void test_loss_class_weights(void)
{
	size_t pos[3] = { 25, 0, 100 };
	float wp[3], wn[3];

	CHECK_INT(loss_class_weights(pos, 100, 3, wp, wn), 2);
	CHECK_NEAR(wp[0], 0.75, 1e-7, 0);
	CHECK_NEAR(wn[0], 0.25, 1e-7, 0);
	CHECK_NEAR(wp[1], 1.0, 0, 0);
	CHECK_NEAR(wn[2], 1.0, 0, 0);
}

const struct test_case ref_layers_tests[] = {
	{ "fd_conv_7x7_stride2", test_fd_conv_7x7_stride2 },
	{ "fd_conv_3x3", test_fd_conv_3x3 },
	{ "fd_conv_3x3_stride2_bias", test_fd_conv_3x3_stride2_bias },
	{ "fd_conv_1x1", test_fd_conv_1x1 },
	{ "fd_batchnorm", test_fd_batchnorm },
	{ "fd_batchnorm_relu", test_fd_batchnorm_relu },
	{ "fd_relu", test_fd_relu },
	{ "fd_maxpool_3x3_stride2", test_fd_maxpool },
	{ "fd_avgpool_2x2", test_fd_avgpool },
	{ "fd_global_avgpool", test_fd_global_avgpool },
	{ "fd_linear", test_fd_linear },
	{ "fd_add_relu", test_fd_add_relu },
	{ "fd_loss_weighted_and_plain", test_fd_loss_weighted_and_plain },
	{ "loss_class_weights", test_loss_class_weights },
	{ 0 }
};
