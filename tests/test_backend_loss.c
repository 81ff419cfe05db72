/* test_backend_loss.c - backend.h's loss ops (M3) on every backend the
 * build has (group trainer-loss): forward without y, loss() and backward
 * without dy give exactly what forward(y) + loss_bce + backward(dy) give
 * on the host backends (the gpu backend within 1e-4, when a device
 * exists), with class weights; loss_take sums batches and resets; the
 * state rules are enforced with one clear message each. What it does not
 * test: the trainer's use of them (slurm-e2e and the trainer groups run
 * the training loop).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/loss.h"
#include "model/model.h"
#include "base/rng.h"
#include "runner.h"

#define N 2
#define CLASSES 14
#define SIZE 64

static const struct densenet_config tinier = {
	.growth = 4, .blocks = { 1, 1, 1, 1 }, .init_features = 8, .bn_size = 2,
};
/* channels the cpu backend's blocked kernels take (as test_cpu_models.c) */
static const struct densenet_config tiny = {
	.growth = 32, .blocks = { 2, 2, 2, 2 }, .init_features = 64, .bn_size = 4,
};

struct rig {
	struct model m;
	const struct backend_ops *ops;
	struct backend *b;
	float x[N * 3 * SIZE * SIZE], labels[N * CLASSES], wp[CLASSES], wn[CLASSES];
	float y[N * CLASSES], dy[N * CLASSES];
};

/* 1: ready; 0: skipped (no device); -1: failed. */
static int rig_open(struct rig *r, const char *backend)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = N, .precision = PRECISION_FP32, .threads = 1 };
	struct rng g;

	if (!(r->ops = backend_find(backend, &err))) {
		test_skip("backend '%s' not in this build", backend);
		return 0;
	}
	/* gpu: narrower still (any width works there), so the cases also run
	 * in reasonable time on the emulated GPU (make GPU_EMU=1) */
	if (model_densenet(&d, strcmp(backend, "gpu") ? &tiny : &tinier, SIZE, CLASSES, &err) ||
	    model_create(&r->m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return -1;
	}
	model_init_params(&r->m, 11);
	if (!(r->b = r->ops->create(&r->m, &opt, &err))) {
		model_destroy(&r->m);
		if (strstr(err.msg, "no CUDA device")) {
			test_skip("no CUDA device");
			return 0;
		}
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return -1;
	}
	rng_seed(&g, 12);
	for (size_t i = 0; i < sizeof(r->x) / sizeof(float); i++)
		r->x[i] = (float)rng_normal(&g);
	for (int i = 0; i < N * CLASSES; i++)
		r->labels[i] = rng_uniform(&g) < 0.3 ? 1.0f : 0.0f;
	for (int c = 0; c < CLASSES; c++) {
		r->wp[c] = 0.5f + (float)c / CLASSES;
		r->wn[c] = 1.5f - (float)c / CLASSES;
	}
	return 1;
}

static void rig_close(struct rig *r)
{
	r->ops->destroy(r->b);
	model_destroy(&r->m);
}

static int close_enough(double a, double b, double tol)
{
	return tol == 0 ? a == b : fabs(a - b) <= tol * (fabs(b) + 1e-6);
}

/* The host path (forward with y, loss_bce, backward with dy) vs the kept
 * loss; tol 0 = bit for bit. */
static void kept_loss_equals_host_loss(const char *backend, double tol)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = r->x, .count = N };
	size_t pc;

	if (rig_open(r, backend) != 1) {
		free(r);
		return;
	}
	pc = r->m.desc.param_count;
	float *host_grads = malloc(pc * sizeof(float));
	CHECK_MSG(r->ops->forward(r->b, &in, 1, r->y, &err) == 0, "%s", err.msg);
	double host = loss_bce(r->y, r->labels, N, CLASSES, r->wp, r->wn, r->dy);
	CHECK_MSG(r->ops->backward(r->b, r->dy, NULL, NULL, NULL, &err) == 0, "%s", err.msg);
	memcpy(host_grads, r->m.grads, pc * sizeof(float));
	memset(r->m.grads, 0, pc * sizeof(float));

	double sum = -1;
	long batches = -1;
	CHECK_MSG(r->ops->forward(r->b, &in, 1, NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(r->ops->loss(r->b, r->labels, r->wp, r->wn, &err) == 0, "%s", err.msg);
	CHECK_MSG(r->ops->backward(r->b, NULL, NULL, NULL, NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(r->ops->loss_take(r->b, &sum, &batches, &err) == 0, "%s", err.msg);
	CHECK_INT(batches, 1);
	CHECK_MSG(close_enough(sum, host, tol), "%s: kept loss %.9g, host loss %.9g", backend, sum,
		  host);
	size_t bad = 0;
	double scale = 0;
	for (size_t i = 0; i < pc; i++)
		scale = fmax(scale, fabs(host_grads[i]));
	for (size_t i = 0; i < pc; i++)
		bad += tol == 0 ? host_grads[i] != r->m.grads[i]
				: fabs(host_grads[i] - r->m.grads[i]) > tol * scale;
	CHECK_MSG(bad == 0, "%s: %zu of %zu gradients differ from the host-loss path", backend,
		  bad, pc);
	free(host_grads);
	rig_close(r);
	free(r);
}

/* Two batches sum up; a take resets; unweighted equals loss_bce's. */
static void take_sums_and_resets(const char *backend, double tol)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = r->x, .count = N };
	double expect = 0, sum = -1;
	long batches = -1;

	if (rig_open(r, backend) != 1) {
		free(r);
		return;
	}
	for (int k = 0; k < 2; k++) {
		r->labels[k] = 1.0f - r->labels[k];  /* a different loss per batch */
		CHECK(r->ops->forward(r->b, &in, 1, r->y, &err) == 0);
		expect += loss_bce(r->y, r->labels, N, CLASSES, NULL, NULL, NULL);
		CHECK_MSG(r->ops->forward(r->b, &in, 1, NULL, &err) == 0, "%s", err.msg);
		CHECK_MSG(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == 0, "%s", err.msg);
		CHECK_MSG(r->ops->backward(r->b, NULL, NULL, NULL, NULL, &err) == 0, "%s", err.msg);
	}
	CHECK(r->ops->loss_take(r->b, &sum, &batches, &err) == 0);
	CHECK_INT(batches, 2);
	CHECK_MSG(close_enough(sum, expect, tol ? tol : 1e-12), "%s: sum %.9g, expected %.9g",
		  backend, sum, expect);
	CHECK(r->ops->loss_take(r->b, &sum, &batches, &err) == 0);
	CHECK_INT(batches, 0);
	CHECK(sum == 0.0);
	rig_close(r);
	free(r);
}

/* Each misuse is refused with its own message. */
static void state_rules(const char *backend)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = r->x, .count = N };

	if (rig_open(r, backend) != 1) {
		free(r);
		return;
	}
	CHECK(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "training forward with y NULL");
	CHECK(r->ops->forward(r->b, &in, 1, r->y, &err) == 0);
	CHECK(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == -1);  /* the logits went out */
	CHECK_CONTAINS(err.msg, "training forward with y NULL");
	CHECK(r->ops->forward(r->b, &in, 0, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "evaluation");
	CHECK(r->ops->forward(r->b, &in, 1, NULL, &err) == 0);
	CHECK(r->ops->backward(r->b, NULL, NULL, NULL, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "dy NULL needs loss()");
	CHECK(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == 0);
	CHECK(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "already computed");
	CHECK_MSG(r->ops->backward(r->b, NULL, NULL, NULL, NULL, &err) == 0, "%s", err.msg);
	rig_close(r);
	free(r);
}

/* A forward that fails keeps nothing: loss() refuses the logits of the
 * forward before it, backward (dy NULL) refuses that forward's gradient. */
static void failed_forward_keeps_nothing(const char *backend)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = r->x, .count = N }, bad = { .x = r->x, .count = N + 1 };

	if (rig_open(r, backend) != 1) {
		free(r);
		return;
	}
	CHECK_MSG(r->ops->forward(r->b, &in, 1, NULL, &err) == 0, "%s", err.msg);
	CHECK(r->ops->forward(r->b, &bad, 1, NULL, &err) == -1);
	CHECK_MSG(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == -1,
		  "%s: loss() took the logits of the forward before a failed one", backend);
	CHECK_CONTAINS(err.msg, "training forward with y NULL");
	CHECK_MSG(r->ops->forward(r->b, &in, 1, NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(r->ops->loss(r->b, r->labels, NULL, NULL, &err) == 0, "%s", err.msg);
	CHECK(r->ops->forward(r->b, &bad, 1, NULL, &err) == -1);
	CHECK_MSG(r->ops->backward(r->b, NULL, NULL, NULL, NULL, &err) == -1,
		  "%s: backward used the gradient of the forward before a failed one", backend);
	rig_close(r);
	free(r);
}

static void test_ref_kept_loss(void) { kept_loss_equals_host_loss("ref", 0); }
static void test_ref_take(void) { take_sums_and_resets("ref", 0); }
static void test_ref_state_rules(void) { state_rules("ref"); }
static void test_ref_failed_forward(void) { failed_forward_keeps_nothing("ref"); }
static void test_cpu_kept_loss(void) { kept_loss_equals_host_loss("cpu", 0); }
static void test_cpu_take(void) { take_sums_and_resets("cpu", 0); }
static void test_cpu_state_rules(void) { state_rules("cpu"); }
static void test_cpu_failed_forward(void) { failed_forward_keeps_nothing("cpu"); }
static void test_gpu_kept_loss(void) { kept_loss_equals_host_loss("gpu", 1e-4); }
static void test_gpu_take(void) { take_sums_and_resets("gpu", 1e-6); }
static void test_gpu_state_rules(void) { state_rules("gpu"); }
static void test_gpu_failed_forward(void) { failed_forward_keeps_nothing("gpu"); }

/* A backend without the loss ops could not train: every one this build
 * has (backend_names) has them. */
static void test_every_backend_has_loss_ops(void)
{
	char names[128];
	struct trainer_error err = { "" };
	int seen = 0;

	snprintf(names, sizeof(names), "%s", backend_names());
	for (char *save = NULL, *name = strtok_r(names, " ", &save); name;
	     name = strtok_r(NULL, " ", &save), seen++) {
		const struct backend_ops *ops = backend_find(name, &err);
		CHECK_MSG(ops && ops->loss && ops->loss_take, "backend %s lacks loss ops", name);
	}
	CHECK(seen >= 1);
}

const struct test_case backend_loss_tests[] = {
	{ "every_backend_has_loss_ops", test_every_backend_has_loss_ops },
	{ "ref_kept_loss_equals_host_loss", test_ref_kept_loss },
	{ "ref_take_sums_and_resets", test_ref_take },
	{ "ref_state_rules", test_ref_state_rules },
	{ "ref_failed_forward_keeps_nothing", test_ref_failed_forward },
	{ "cpu_kept_loss_equals_host_loss", test_cpu_kept_loss },
	{ "cpu_take_sums_and_resets", test_cpu_take },
	{ "cpu_state_rules", test_cpu_state_rules },
	{ "cpu_failed_forward_keeps_nothing", test_cpu_failed_forward },
	{ "gpu_kept_loss_close_to_host_loss", test_gpu_kept_loss },
	{ "gpu_take_sums_and_resets", test_gpu_take },
	{ "gpu_state_rules", test_gpu_state_rules },
	{ "gpu_failed_forward_keeps_nothing", test_gpu_failed_forward },
	{ 0 }
};
