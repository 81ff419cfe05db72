/* test_eval_stats.c - the pure evaluation statistics: patient-grouped
 * bootstrap intervals (contain the estimate, 95% coverage on 400 seeded
 * simulated test sets from a population of known AUROC, wider when one
 * patient's images are correlated, reproducible, fast on an official-size
 * split), average precision, equal-mass ECE, threshold rules and the
 * confusion numbers on hand-made score sets with known answers.
 * What it does not test: the command line (test_eval_cli.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"
#include "eval/auroc.h"
#include "eval/bootstrap.h"
#include "eval/calibration.h"
#include "eval/curves.h"
#include "eval/thresholds.h"
#include "base/rng.h"

/* Binormal population: negatives N(0,1), positives N(d,1); its AUROC is
 * Phi(d / sqrt 2). Fills n images of one class, every image its own
 * patient unless per_patient > 1 (then consecutive images share a
 * patient, score and label: perfectly correlated). */
static void simulate(struct rng *r, size_t n, double prevalence, double d, int per_patient,
		     float *scores, float *labels, uint32_t *patient)
{
	for (size_t i = 0; i < n; i++) {
		if (i % per_patient == 0) {
			labels[i] = rng_uniform(r) < prevalence;
			scores[i] = (float)(rng_normal(r) + (labels[i] > 0.5f ? d : 0));
		} else {
			labels[i] = labels[i - 1];
			scores[i] = scores[i - 1];
		}
		patient[i] = (uint32_t)(i / per_patient);
	}
}

struct sim { float *s, *y; uint32_t *p; };

static int sim_alloc(struct sim *m, size_t n)
{
	m->s = malloc(n * sizeof(float));
	m->y = malloc(n * sizeof(float));
	m->p = malloc(n * sizeof(uint32_t));
	return m->s && m->y && m->p ? 0 : -1;
}

static void sim_free(struct sim *m)
{
	free(m->s);
	free(m->y);
	free(m->p);
}

static void test_interval_contains_estimate(void)
{
	struct rng r;
	const size_t n = 500;
	const int classes = 3;
	float s[500 * 3], y[500 * 3];
	uint32_t p[500];
	struct eval_interval iv[3], mean;
	struct bootstrap_config cfg = { 500, 7, 0.95 };
	struct trainer_error err = { "" };

	rng_seed(&r, 3);
	for (size_t i = 0; i < n; i++) {
		p[i] = (uint32_t)(i / 2);
		for (int c = 0; c < classes; c++) {
			y[i * classes + c] = rng_uniform(&r) < 0.2;
			s[i * classes + c] = (float)(rng_normal(&r) + y[i * classes + c] * (c + 0.5));
		}
	}
	CHECK_MSG(eval_bootstrap_auroc(s, y, p, n, classes, &cfg, iv, &mean, &err) == 0, "%s", err.msg);
	double a[3];
	int defined;
	double m = auroc_all(s, y, n, classes, a, NULL, &defined);
	for (int c = 0; c < classes; c++) {
		CHECK_MSG(iv[c].lo <= a[c] && a[c] <= iv[c].hi, "class %d: %.4f not in [%.4f, %.4f]",
			  c, a[c], iv[c].lo, iv[c].hi);
		CHECK(iv[c].hi - iv[c].lo > 0.01);
		CHECK_INT(iv[c].resamples, 500);
	}
	CHECK_MSG(mean.lo <= m && m <= mean.hi, "mean %.4f not in [%.4f, %.4f]", m, mean.lo, mean.hi);
	/* same seed, same interval; another seed, another one */
	struct eval_interval again[3], mean2;
	eval_bootstrap_auroc(s, y, p, n, classes, &cfg, again, &mean2, &err);
	CHECK(again[1].lo == iv[1].lo && again[1].hi == iv[1].hi && mean2.lo == mean.lo);
	cfg.seed = 8;
	eval_bootstrap_auroc(s, y, p, n, classes, &cfg, again, &mean2, &err);
	CHECK(again[1].lo != iv[1].lo || again[1].hi != iv[1].hi);
}

/* 400 seeded test sets of 2,000 cases (20% positive) from a binormal
 * population with AUROC 0.85: the percentile interval must cover 0.85 in
 * 90-98% of them. */
static void test_coverage_on_simulated_sets(void)
{
	const size_t n = 2000;
	const double d = M_SQRT2 * 1.0364333894937898;  /* Phi^-1(0.85) */
	const double truth = 0.85;
	struct sim m;
	int covered = 0, sets = 400;
	struct trainer_error err = { "" };

	if (sim_alloc(&m, n))
		SKIP("out of memory");
	for (int k = 0; k < sets; k++) {
		struct rng r;
		struct eval_interval iv, mean;
		struct bootstrap_config cfg = { 1000, 1000 + (uint64_t)k, 0.95 };
		rng_seed(&r, 500 + (uint64_t)k);
		simulate(&r, n, 0.2, d, 1, m.s, m.y, m.p);
		if (eval_bootstrap_auroc(m.s, m.y, m.p, n, 1, &cfg, &iv, &mean, &err))
			break;
		covered += iv.lo <= truth && truth <= iv.hi;
	}
	double coverage = covered / (double)sets;
	printf("    coverage of the 95%% percentile interval: %d of %d sets = %.3f\n", covered,
	       sets, coverage);
	CHECK_MSG(coverage >= 0.90 && coverage <= 0.98, "coverage %.3f (%d of %d) %s", coverage,
		  covered, sets, err.msg);
	sim_free(&m);
}

/* 400 patients with 5 identical images each: resampling images pretends
 * there are 2,000 independent cases; resampling patients must give an
 * interval about sqrt(5) times wider. */
static void test_patient_grouping_widens_interval(void)
{
	const size_t n = 2000;
	struct sim m;
	struct rng r;
	struct eval_interval grouped, single, mean;
	struct bootstrap_config cfg = { 1000, 11, 0.95 };
	struct trainer_error err = { "" };

	if (sim_alloc(&m, n))
		SKIP("out of memory");
	rng_seed(&r, 21);
	simulate(&r, n, 0.3, 1.2, 5, m.s, m.y, m.p);
	CHECK(eval_bootstrap_auroc(m.s, m.y, m.p, n, 1, &cfg, &grouped, &mean, &err) == 0);
	for (size_t i = 0; i < n; i++)
		m.p[i] = (uint32_t)i;   /* every image its own patient */
	CHECK(eval_bootstrap_auroc(m.s, m.y, m.p, n, 1, &cfg, &single, &mean, &err) == 0);
	double wg = grouped.hi - grouped.lo, ws = single.hi - single.lo;
	printf("    width grouped %.4f, per image %.4f, ratio %.2f (sqrt 5 = 2.24)\n", wg, ws, wg / ws);
	CHECK_MSG(wg > 1.7 * ws && wg < 3 * ws, "grouped %.4f vs per image %.4f", wg, ws);
	sim_free(&m);
}

/* The official test split's size: 25,596 images x 14 classes x 1000
 * resamples must take seconds, not minutes. */
static void test_bootstrap_is_fast(void)
{
	const size_t n = 25596;
	const int classes = 14;
	float *s = malloc(n * classes * sizeof(float)), *y = malloc(n * classes * sizeof(float));
	uint32_t *p = malloc(n * sizeof(uint32_t));
	struct eval_interval iv[14], mean;
	struct bootstrap_config cfg = { 1000, 1, 0.95 };
	struct trainer_error err = { "" };
	struct rng r;

	if (!s || !y || !p)
		SKIP("out of memory");
	rng_seed(&r, 5);
	for (size_t i = 0; i < n; i++) {
		p[i] = (uint32_t)(i / 3);
		for (int c = 0; c < classes; c++) {
			y[i * classes + c] = rng_uniform(&r) < 0.05 + 0.01 * c;
			s[i * classes + c] = (float)(rng_normal(&r) + y[i * classes + c]);
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(eval_bootstrap_auroc(s, y, p, n, classes, &cfg, iv, &mean, &err) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	printf("    25,596 images x 14 classes x 1000 resamples: %.2f s\n", sec);
	CHECK_MSG(sec < 30, "%.1f s", sec);
	CHECK(mean.lo < mean.hi);
	free(s);
	free(y);
	free(p);
}

static void test_bootstrap_undefined_class(void)
{
	float s[6] = { 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f }, y[6] = { 0 };
	uint32_t p[6] = { 0, 1, 2, 3, 4, 5 };
	struct eval_interval iv, mean;
	struct bootstrap_config cfg = { 100, 1, 0.95 };
	struct trainer_error err = { "" };

	CHECK(eval_bootstrap_auroc(s, y, p, 6, 1, &cfg, &iv, &mean, &err) == 0);
	CHECK(isnan(iv.lo) && isnan(iv.hi) && isnan(mean.lo));
	cfg.resamples = 0;
	CHECK(eval_bootstrap_auroc(s, y, p, 6, 1, &cfg, &iv, &mean, &err) == -1);
	CHECK_CONTAINS(err.msg, "0 resamples");
}

static void test_auprc_known_values(void)
{
	/* descending: + - + -  => AP = 0.5*1 + 0.5*(2/3) = 0.8333 */
	float s[4] = { 0.9f, 0.8f, 0.7f, 0.6f }, y[4] = { 1, 0, 1, 0 };
	CHECK_NEAR(eval_auprc(s, y, 4, 1), 5.0 / 6.0, 1e-9, 0);
	float perfect[4] = { 0.9f, 0.1f, 0.8f, 0.2f };
	CHECK_NEAR(eval_auprc(perfect, y, 4, 1), 1.0, 1e-12, 0);
	float tied[4] = { 0.5f, 0.5f, 0.5f, 0.5f };   /* one step: precision 1/2 */
	CHECK_NEAR(eval_auprc(tied, y, 4, 1), 0.5, 1e-12, 0);
	float none[4] = { 0 };
	CHECK(isnan(eval_auprc(s, none, 4, 1)));
	float fpr[5], tpr[5];
	CHECK_INT(eval_roc_points(s, y, 4, 1, fpr, tpr), 5);
	CHECK(fpr[1] == 0 && tpr[1] == 0.5f && fpr[4] == 1 && tpr[4] == 1);
}

/* Calibrated: within each bin the positive rate equals the probability. */
static void test_ece_calibrated_and_not(void)
{
	enum { N = 1000 };
	float p[N], y[N];
	struct calibration_bin bins[EVAL_ECE_BINS];

	for (int i = 0; i < N; i++) {   /* 10 blocks of 100 at 0.05, 0.15, ...: k*10+5 positives */
		int block = i / 100, in = i % 100;
		p[i] = (float)(0.05 + 0.1 * block);
		y[i] = in < 10 * block + 5;
	}
	CHECK_NEAR(eval_ece(p, y, N, 1, EVAL_ECE_BINS, bins), 0.0, 1e-6, 0);
	CHECK_INT(bins[3].count, 100);
	CHECK_NEAR(bins[3].mean_p, 0.35, 1e-6, 0);
	CHECK_NEAR(bins[3].mean_y, 0.35, 1e-9, 0);
	/* overconfident: the same outcomes claimed at 0.95 in every bin */
	for (int i = 0; i < N; i++)
		p[i] = 0.95f;
	/* every bin has mean p 0.95; pooled positive rate 0.5: ECE = mean |0.95 - rate_b| */
	double e = eval_ece(p, y, N, 1, EVAL_ECE_BINS, NULL);
	CHECK_NEAR(e, 0.45, 1e-6, 0);
	/* a bad bin count is not a silent default */
	CHECK(isnan(eval_ece(p, y, N, 1, 0, NULL)));
	CHECK(isnan(eval_ece(p, y, 5, 1, 10, NULL)));
}

static void test_thresholds_known_answers(void)
{
	/* p:  .9 .8 .7 .6 .5 .4 .3 .2 ; y: 1 1 0 1 0 0 1 0 */
	float p[8] = { 0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f, 0.3f, 0.2f };
	float y[8] = { 1, 1, 0, 1, 0, 0, 1, 0 };
	struct threshold_choice youden = { THRESHOLD_YOUDEN, 0 };
	/* J at .8: .5 + 1 - 1 = .5; at .6: .75 + .75 - 1 = .5 (a tie: the
	 * highest, 0.8); at .3: 1 + .25 - 1 = .25 */
	CHECK(eval_threshold_choose(p, y, 8, 1, &youden) == 0.8f);
	float y2[8] = { 1, 1, 0, 1, 1, 0, 0, 0 };   /* J max at 0.5 alone: 1 + .75 - 1 */
	CHECK(eval_threshold_choose(p, y2, 8, 1, &youden) == 0.5f);
	struct threshold_choice sens = { THRESHOLD_SENSITIVITY, 0.75 };
	CHECK(eval_threshold_choose(p, y, 8, 1, &sens) == 0.6f);
	sens.target = 0.9;
	CHECK(eval_threshold_choose(p, y, 8, 1, &sens) == 0.3f);
	struct threshold_choice spec = { THRESHOLD_SPECIFICITY, 0.75 };
	CHECK(eval_threshold_choose(p, y, 8, 1, &spec) == 0.6f);
	spec.target = 1.0;
	CHECK(eval_threshold_choose(p, y, 8, 1, &spec) == 0.8f);
	float none[8] = { 0 };
	CHECK(isnan(eval_threshold_choose(p, none, 8, 1, &youden)));

	struct operating_point o = eval_operating_point(p, y, 8, 1, 0.6);
	CHECK(o.tp == 3 && o.fp == 1 && o.tn == 3 && o.fn == 1);
	CHECK_NEAR(o.sensitivity, 0.75, 1e-12, 0);
	CHECK_NEAR(o.specificity, 0.75, 1e-12, 0);
	CHECK_NEAR(o.ppv, 0.75, 1e-12, 0);
	CHECK_NEAR(o.npv, 0.75, 1e-12, 0);
	CHECK_NEAR(o.f1, 0.75, 1e-12, 0);
	o = eval_operating_point(p, y, 8, 1, 0.95);   /* nothing positive: PPV undefined */
	CHECK(isnan(o.ppv) && o.specificity == 1 && o.sensitivity == 0);
}

const struct test_case eval_stats_tests[] = {
	{ "interval_contains_estimate", test_interval_contains_estimate },
	{ "coverage_on_simulated_sets", test_coverage_on_simulated_sets },
	{ "patient_grouping_widens_interval", test_patient_grouping_widens_interval },
	{ "bootstrap_is_fast", test_bootstrap_is_fast },
	{ "bootstrap_undefined_class", test_bootstrap_undefined_class },
	{ "auprc_known_values", test_auprc_known_values },
	{ "ece_calibrated_and_not", test_ece_calibrated_and_not },
	{ "thresholds_known_answers", test_thresholds_known_answers },
	{ 0 }
};
