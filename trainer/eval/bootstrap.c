/* eval/bootstrap.c - patient-grouped percentile bootstrap of AUROC: sort
 * each class once, then per resample draw patient multiplicities and walk
 * the presorted scores once per class. What it does not do: point
 * estimates (auroc.c), thresholds or calibration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "eval/bootstrap.h"
#include "base/rng.h"

/* One class presorted by score: for sorted position k, the dense patient
 * index, the label and whether k ends a run of tied scores. */
struct sorted_class {
	uint32_t *group;   /* (count) */
	uint8_t *positive; /* (count) */
	uint8_t *tie_end;  /* (count) */
	int defined;
};

struct keyed { float key; uint32_t i; };

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->i > y->i) - (x->i < y->i);
}

struct id_at { uint32_t id; uint32_t i; };

static int by_id(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;
	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->i > y->i) - (x->i < y->i);
}

/* group[i] = dense index 0..P-1 of image i's patient; returns P (0 on
 * out of memory). */
static size_t dense_patients(const uint32_t *patient, size_t count, uint32_t *group)
{
	struct id_at *p = malloc(count * sizeof(*p));
	size_t groups = 0;

	if (!p)
		return 0;
	for (size_t i = 0; i < count; i++)
		p[i] = (struct id_at){ patient[i], (uint32_t)i };
	qsort(p, count, sizeof(*p), by_id);
	for (size_t i = 0; i < count; i++) {
		if (i > 0 && p[i].id != p[i - 1].id)
			groups++;
		group[p[i].i] = (uint32_t)groups;
	}
	free(p);
	return groups + 1;
}

static int sort_class(const float *scores, const float *labels, size_t count, int classes,
		      int c, const uint32_t *group, struct sorted_class *sc)
{
	struct keyed *k = malloc(count * sizeof(*k));

	sc->group = malloc(count * sizeof(uint32_t));
	sc->positive = malloc(count);
	sc->tie_end = malloc(count);
	if (!k || !sc->group || !sc->positive || !sc->tie_end) {
		free(k);
		return -1;
	}
	sc->defined = auroc_check(scores + c, labels + c, count, (size_t)classes) == AUROC_DEFINED;
	for (size_t i = 0; i < count; i++)
		k[i] = (struct keyed){ scores[i * classes + c], (uint32_t)i };
	if (sc->defined)
		qsort(k, count, sizeof(*k), by_key);
	for (size_t j = 0; j < count; j++) {
		sc->group[j] = group[k[j].i];
		sc->positive[j] = labels[(size_t)k[j].i * classes + c] > 0.5f;
		sc->tie_end[j] = j + 1 == count || k[j + 1].key != k[j].key;
	}
	free(k);
	return 0;
}

/* Weighted Mann-Whitney AUROC: image weight = its patient's multiplicity. */
static double weighted_auroc(const struct sorted_class *sc, size_t count, const uint32_t *mult)
{
	double neg_below = 0, credit = 0, wpos = 0, wneg = 0, gpos = 0, gneg = 0;

	for (size_t j = 0; j < count; j++) {
		double w = mult[sc->group[j]];
		if (sc->positive[j])
			gpos += w;
		else
			gneg += w;
		if (sc->tie_end[j]) {
			credit += gpos * (neg_below + 0.5 * gneg);
			neg_below += gneg;
			wpos += gpos;
			wneg += gneg;
			gpos = gneg = 0;
		}
	}
	return wpos > 0 && wneg > 0 ? credit / (wpos * wneg) : NAN;
}

static void draw_multiplicities(struct rng *r, size_t patients, uint32_t *mult)
{
	memset(mult, 0, patients * sizeof(*mult));
	for (size_t d = 0; d < patients; d++)
		mult[(size_t)(((rng_next(r) >> 32) * (uint64_t)patients) >> 32)]++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double eval_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double h = q * (double)(n - 1);
	size_t i = (size_t)floor(h);
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* The interval from one statistic's resample values (NaNs dropped). */
static struct eval_interval interval_of(double *values, int resamples, double level)
{
	size_t n = 0;
	for (int r = 0; r < resamples; r++)
		if (!isnan(values[r]))
			values[n++] = values[r];
	qsort(values, n, sizeof(double), cmp_double);
	double a = (1 - level) / 2;
	struct eval_interval iv = { eval_quantile_sorted(values, n, a),
				    eval_quantile_sorted(values, n, 1 - a), (int)n };
	return iv;
}

/* values: (classes + 1, resamples): per class, then the mean. */
static void run_resamples(const struct sorted_class *sc, size_t count, int classes,
			  size_t patients, const struct bootstrap_config *cfg, uint32_t *mult,
			  double *values)
{
	struct rng r;
	const int R = cfg->resamples;

	rng_seed(&r, cfg->seed);
	for (int s = 0; s < R; s++) {
		double sum = 0;
		int used = 0, lost = 0;
		draw_multiplicities(&r, patients, mult);
		for (int c = 0; c < classes; c++) {
			double a = sc[c].defined ? weighted_auroc(&sc[c], count, mult) : NAN;
			values[(size_t)c * R + s] = a;
			if (sc[c].defined) {
				lost |= isnan(a);
				sum += a;
				used++;
			}
		}
		values[(size_t)classes * R + s] = used && !lost ? sum / used : NAN;
	}
}

int eval_bootstrap_auroc(const float *scores, const float *labels, const uint32_t *patient,
			 size_t count, int classes, const struct bootstrap_config *cfg,
			 struct eval_interval *per_class, struct eval_interval *mean,
			 struct trainer_error *err)
{
	if (cfg->resamples < 1 || !(cfg->level > 0 && cfg->level < 1) || count == 0 || classes < 1)
		return trainer_error_set(err, "bootstrap: %d resamples at level %g of %zu images: "
					 "need >= 1 resample, a level in (0, 1) and images",
					 cfg->resamples, cfg->level, count);
	struct sorted_class *sc = calloc((size_t)classes, sizeof(*sc));
	uint32_t *group = malloc(count * sizeof(uint32_t));
	uint32_t *mult = malloc(count * sizeof(uint32_t));
	double *values = malloc((size_t)(classes + 1) * cfg->resamples * sizeof(double));
	size_t patients = 0;
	int rc = -1;

	if (sc && group && mult && values && (patients = dense_patients(patient, count, group))) {
		rc = 0;
		for (int c = 0; c < classes && rc == 0; c++)
			rc = sort_class(scores, labels, count, classes, c, group, &sc[c]);
	}
	if (rc == 0) {
		run_resamples(sc, count, classes, patients, cfg, mult, values);
		for (int c = 0; c <= classes; c++) {
			struct eval_interval iv = interval_of(values + (size_t)c * cfg->resamples,
							      cfg->resamples, cfg->level);
			if (c < classes && !sc[c].defined)
				iv = (struct eval_interval){ NAN, NAN, 0 };
			*(c < classes ? &per_class[c] : mean) = iv;
		}
	} else {
		trainer_error_set(err, "bootstrap: out of memory (%zu images)", count);
	}
	for (int c = 0; sc && c < classes; c++) {
		free(sc[c].group);
		free(sc[c].positive);
		free(sc[c].tie_end);
	}
	free(sc);
	free(group);
	free(mult);
	free(values);
	return rc;
}
