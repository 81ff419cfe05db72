/* test_training.c - optimizer, learning-rate schedule and AUROC on cases
 * computed by hand. What it does not test: the training loop end to end
 * (test_cli.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"
#include "eval/auroc.h"
#include "train/optim.h"
#include "train/schedule.h"

static void test_sgd_momentum_hand_computed(void)
{
	struct optim o;
	struct optim_config cfg;
	float p[2] = { 1.0f, -2.0f }, g[2] = { 0.5f, 1.0f };

	optim_config_default(&cfg);
	cfg.kind = OPTIM_SGD;
	cfg.momentum = 0.9;
	CHECK(optim_init(&o, &cfg, 2, NULL) == 0);
	optim_step(&o, p, g, 0.1);   /* buf = g: p = 1 - 0.05, -2 - 0.1 */
	CHECK_NEAR(p[0], 0.95, 1e-7, 0);
	CHECK_NEAR(p[1], -2.1, 1e-6, 0);
	optim_step(&o, p, g, 0.1);   /* buf = 0.9*0.5 + 0.5 = 0.95: p = 0.95 - 0.095 */
	CHECK_NEAR(p[0], 0.855, 1e-6, 0);
	CHECK_NEAR(p[1], -2.1 - 0.19, 1e-6, 0);
	optim_free(&o);
}

static void test_weight_decay_hand_computed(void)
{
	struct optim o;
	struct optim_config cfg;
	float p[1] = { 2.0f }, g[1] = { 0.0f };

	optim_config_default(&cfg);
	cfg.kind = OPTIM_SGD;
	cfg.weight_decay = 0.01;
	CHECK(optim_init(&o, &cfg, 1, NULL) == 0);
	optim_step(&o, p, g, 0.5);   /* g' = 0.02: p = 2 - 0.01 */
	CHECK_NEAR(p[0], 1.99, 1e-6, 0);
	optim_free(&o);
}

static void test_adam_hand_computed(void)
{
	struct optim o;
	struct optim_config cfg;
	float p[2] = { 1.0f, 1.0f }, g[2] = { 0.25f, -4.0f };

	optim_config_default(&cfg);
	CHECK(optim_init(&o, &cfg, 2, NULL) == 0);
	/* step 1: m = 0.1 g, v = 0.001 g^2, bias-corrected m/sqrt(v) = sign(g) */
	optim_step(&o, p, g, 1e-3);
	CHECK_NEAR(p[0], 1.0 - 1e-3, 1e-7, 0);
	CHECK_NEAR(p[1], 1.0 + 1e-3, 1e-7, 0);
	/* step 2 with g = 0: m = 0.09 g, v = 0.000999 g^2;
	 * update = lr * (0.09/0.19) / (sqrt(0.000999/0.001999)) */
	float zero[2] = { 0, 0 };
	optim_step(&o, p, zero, 1e-3);
	double expect = 1e-3 * (0.09 / 0.19) / sqrt(0.000999 / 0.001999);
	CHECK_NEAR(p[0], 1.0 - 1e-3 - expect, 1e-7, 0);
	CHECK_INT(o.steps, 2);
	optim_free(&o);
}

/* The optimizer's vector loops against the formula one element at a time,
 * bit for bit: an odd count (a vector tail), weight decay, three steps, a
 * spread of magnitudes. Fails on any reassociation or approximate sqrt or
 * division (-ffast-math, -mrecip), or a product fused into a sum. */
static float rounded(float x)   /* as written: never fused into an FMA */
{
	volatile float r = x;
	return r;
}

static void optim_vs_scalar(enum optim_kind kind)
{
	enum { N = 1003 };
	static float p[N], g[N], q[N], m[N], v[N];
	struct optim o;
	struct optim_config cfg;
	optim_config_default(&cfg);
	cfg.kind = kind;
	cfg.momentum = 0.9;
	cfg.weight_decay = 1e-4;
	CHECK(optim_init(&o, &cfg, N, NULL) == 0);
	for (int i = 0; i < N; i++)
		p[i] = q[i] = (float)((i % 37) - 18) * 0.031f, m[i] = v[i] = 0;
	float b1 = (float)cfg.beta1, b2 = (float)cfg.beta2, wd = (float)cfg.weight_decay;
	float mu = (float)cfg.momentum, eps = (float)cfg.eps;
	for (int step = 1; step <= 3; step++) {
		for (int i = 0; i < N; i++)
			g[i] = (float)((i * 7919 + step * 104729) % 2001 - 1000) * powf(10.0f, (float)(i % 9) - 6);
		double lr = 1e-3 * step;
		optim_step(&o, p, g, lr);
		float rate = (float)(lr / (1.0 - pow(cfg.beta1, step)));
		float sq = (float)sqrt(1.0 - pow(cfg.beta2, step));
		for (int i = 0; i < N; i++) {
			float grad = g[i] + rounded(wd * q[i]);
			if (kind == OPTIM_ADAM) {
				m[i] = rounded(b1 * m[i]) + rounded((1.0f - b1) * grad);
				v[i] = rounded(b2 * v[i]) + rounded((1.0f - b2) * grad * grad);
				q[i] -= rate * m[i] / (sqrtf(v[i]) / sq + eps);
			} else {
				m[i] = step == 1 ? grad : rounded(mu * m[i]) + grad;
				q[i] -= rounded((float)lr * m[i]);
			}
		}
	}
	CHECK(memcmp(p, q, sizeof(p)) == 0);
	CHECK(memcmp(o.m, m, sizeof(m)) == 0);
	if (kind == OPTIM_ADAM)
		CHECK(memcmp(o.v, v, sizeof(v)) == 0);
	optim_free(&o);
}

static void test_adam_vector_loop_equals_scalar(void) { optim_vs_scalar(OPTIM_ADAM); }
static void test_sgd_vector_loop_equals_scalar(void) { optim_vs_scalar(OPTIM_SGD); }

static void test_plateau_reduces_after_patience(void)
{
	struct schedule s;

	schedule_init(&s, 1e-3, LR_SCALE_NONE, 1, 0, 1);
	CHECK_INT(schedule_epoch_end(&s, 1.0), 0);
	CHECK_INT(schedule_epoch_end(&s, 0.9), 0);
	CHECK_INT(schedule_epoch_end(&s, 0.95), 0);   /* 1 bad epoch: within patience */
	CHECK_NEAR(schedule_lr(&s, 3), 1e-3, 1e-12, 0);
	CHECK_INT(schedule_epoch_end(&s, 0.96), 1);   /* 2 > patience 1: x0.1 */
	CHECK_NEAR(schedule_lr(&s, 4), 1e-4, 1e-12, 0);
	CHECK_INT(schedule_epoch_end(&s, 0.85), 0);    /* improves: best 0.85 */
	CHECK_INT(s.bad_epochs, 0);
	CHECK_INT(schedule_epoch_end(&s, 0.84995), 0); /* > 0.85*(1-1e-4): not better */
	CHECK_INT(s.bad_epochs, 1);
}

static void test_warmup_and_linear_scaling(void)
{
	struct schedule s;

	schedule_init(&s, 1e-3, LR_SCALE_LINEAR, 8, 2, 1);
	CHECK_NEAR(schedule_lr(&s, 0), 1e-3, 1e-12, 0);      /* unscaled at start */
	CHECK_NEAR(schedule_lr(&s, 1), 4.5e-3, 1e-12, 0);    /* halfway to 8e-3 */
	CHECK_NEAR(schedule_lr(&s, 2), 8e-3, 1e-12, 0);
	CHECK_NEAR(schedule_lr(&s, 7.5), 8e-3, 1e-12, 0);
	schedule_init(&s, 1e-3, LR_SCALE_NONE, 8, 1, 1);
	CHECK_NEAR(schedule_lr(&s, 0), 1e-4, 1e-12, 0);
	CHECK_NEAR(schedule_lr(&s, 0.5), 5.5e-4, 1e-12, 0);
	CHECK_NEAR(schedule_lr(&s, 1), 1e-3, 1e-12, 0);
}

static void test_auroc_hand_computed_with_ties(void)
{
	/* positives 0.8, 0.4(tied with a negative), negatives 0.4, 0.1, 0.6:
	 * pairs: (0.8 > all 3) = 3, (0.4: > 0.1, tie 0.4 = 0.5, < 0.6) = 1.5
	 * AUROC = 4.5 / 6 = 0.75 */
	float s[5] = { 0.8f, 0.4f, 0.4f, 0.1f, 0.6f }, y[5] = { 1, 1, 0, 0, 0 };
	CHECK_NEAR(auroc_one(s, y, 5, 1), 0.75, 1e-12, 0);
	/* all scores tied: 0.5 */
	float t[4] = { 0.3f, 0.3f, 0.3f, 0.3f }, z[4] = { 1, 0, 1, 0 };
	CHECK_NEAR(auroc_one(t, z, 4, 1), 0.5, 1e-12, 0);
	/* perfect and inverted */
	float u[4] = { 0.1f, 0.2f, 0.3f, 0.9f }, w[4] = { 0, 0, 1, 1 }, v[4] = { 1, 1, 0, 0 };
	CHECK_NEAR(auroc_one(u, w, 4, 1), 1.0, 0, 0);
	CHECK_NEAR(auroc_one(u, v, 4, 1), 0.0, 0, 0);
	/* one label only: n/a */
	float only[4] = { 1, 1, 1, 1 };
	CHECK(isnan(auroc_one(u, only, 4, 1)));
}

static void test_auroc_mean_skips_undefined_classes(void)
{
	/* 2 classes interleaved (stride 2); class 1 has no positives */
	float s[8] = { 0.9f, 0.1f, 0.2f, 0.5f, 0.7f, 0.3f, 0.1f, 0.2f };
	float y[8] = { 1, 0, 0, 0, 1, 0, 0, 0 };
	double per[2];
	int defined;
	enum auroc_undefined why[2];
	double mean = auroc_all(s, y, 4, 2, per, why, &defined);

	CHECK_INT(defined, 1);
	CHECK_NEAR(per[0], 1.0, 0, 0);
	CHECK(isnan(per[1]));
	CHECK_INT(why[0], AUROC_DEFINED);
	CHECK_INT(why[1], AUROC_ONE_LABEL);
	CHECK_NEAR(mean, 1.0, 0, 0);
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	double all[14];
	for (int c = 0; c < 14; c++)
		all[c] = c == 3 ? NAN : 0.5;
	auroc_print_table(f, all, NULL, 14);
	fclose(f);
	CHECK_CONTAINS(buf, "Infiltration");
	CHECK_CONTAINS(buf, "n/a");
	CHECK_CONTAINS(buf, "0.9248");
	CHECK_CONTAINS(buf, "over 13 of 14 classes");
}

/* NaN, +Inf and -Inf scores (the diverged model of issue 19, whose NaN
 * made the tie scan loop forever): undefined with a reason, at once;
 * all-equal and single-element inputs too. The group deadline catches a
 * loop. */
static void test_auroc_total_on_nonfinite_and_degenerate_inputs(void)
{
	float y[4] = { 1, 0, 1, 0 };
	float nan4[4] = { NAN, NAN, NAN, NAN }, one_nan[4] = { 0.1f, NAN, 0.3f, 0.2f };
	float pinf[4] = { INFINITY, 0.1f, 0.2f, 0.3f }, ninf[4] = { 0.5f, -INFINITY, 0.2f, 0.3f };
	float equal[4] = { 0.25f, 0.25f, 0.25f, 0.25f }, single = 0.7f, pos = 1;

	CHECK(isnan(auroc_one(nan4, y, 4, 1)));
	CHECK_INT(auroc_check(nan4, y, 4, 1), AUROC_NONFINITE);
	CHECK(isnan(auroc_one(one_nan, y, 4, 1)));
	CHECK_INT(auroc_check(one_nan, y, 4, 1), AUROC_NONFINITE);
	CHECK(isnan(auroc_one(pinf, y, 4, 1)));
	CHECK_INT(auroc_check(pinf, y, 4, 1), AUROC_NONFINITE);
	CHECK(isnan(auroc_one(ninf, y, 4, 1)));
	CHECK_INT(auroc_check(ninf, y, 4, 1), AUROC_NONFINITE);
	CHECK_NEAR(auroc_one(equal, y, 4, 1), 0.5, 0, 0);
	CHECK_INT(auroc_check(equal, y, 4, 1), AUROC_DEFINED);
	CHECK(isnan(auroc_one(&single, &pos, 1, 1)));
	CHECK_INT(auroc_check(&single, &pos, 1, 1), AUROC_ONE_LABEL);
	CHECK(isnan(auroc_one(NULL, NULL, 0, 1)));
	CHECK_CONTAINS(auroc_reason(AUROC_NONFINITE), "non-finite");

	double per[14];
	enum auroc_undefined why[14];
	float s14[4 * 14], y14[4 * 14];
	int defined = -1;
	for (int i = 0; i < 4 * 14; i++) {
		s14[i] = i % 14 == 2 ? NAN : (float)(i % 5);
		y14[i] = (float)((i / 14) & 1);
	}
	double mean = auroc_all(s14, y14, 4, 14, per, why, &defined);
	CHECK_INT(defined, 13);
	CHECK(isfinite(mean));
	CHECK_INT(why[2], AUROC_NONFINITE);
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	auroc_print_table(f, per, why, 14);
	fclose(f);
	CHECK_CONTAINS(buf, "Effusion                  nan");
	CHECK_CONTAINS(buf, "1 classes have non-finite scores");
}

const struct test_case training_tests[] = {
	{ "sgd_momentum_hand_computed", test_sgd_momentum_hand_computed },
	{ "weight_decay_hand_computed", test_weight_decay_hand_computed },
	{ "adam_hand_computed", test_adam_hand_computed },
	{ "adam_vector_loop_equals_scalar", test_adam_vector_loop_equals_scalar },
	{ "sgd_vector_loop_equals_scalar", test_sgd_vector_loop_equals_scalar },
	{ "plateau_reduces_after_patience", test_plateau_reduces_after_patience },
	{ "warmup_and_linear_scaling", test_warmup_and_linear_scaling },
	{ "auroc_hand_computed_with_ties", test_auroc_hand_computed_with_ties },
	{ "auroc_mean_skips_undefined_classes", test_auroc_mean_skips_undefined_classes },
	{ "auroc_total_on_nonfinite_and_degenerate_inputs",
	  test_auroc_total_on_nonfinite_and_degenerate_inputs },
	{ 0 }
};
