/* eval/bootstrap.h - 95% (or any level) percentile bootstrap intervals for
 * the per-class AUROC and the mean AUROC, resampling PATIENTS: every image
 * of a drawn patient enters the resample as often as the patient is drawn
 * (the NIH split is by patient, and images of one patient are correlated).
 * Seeded and reproducible. Fast: each class is sorted once; a resample is
 * a vector of patient multiplicities, and the weighted Mann-Whitney
 * statistic is one pass over the presorted scores (ties get half credit,
 * as in auroc.c), so 25,596 images x 14 classes x 1000 resamples take
 * about a second.
 * Patient ids: whatever the data gives (NIH "Patient ID", the generic
 * CSV's patient column); data without ids pass one id per image (one
 * image = one patient), which makes this the ordinary image bootstrap.
 * What this is not: the point estimates (auroc.c) or printing.
 */
#ifndef HVD_TRAINER_EVAL_BOOTSTRAP_H
#define HVD_TRAINER_EVAL_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct eval_interval {
	double lo, hi;     /* NAN when undefined (the point estimate is) */
	int resamples;     /* resamples in which the statistic was defined */
};

struct bootstrap_config {
	int resamples;     /* >= 1 */
	uint64_t seed;
	double level;      /* 0.95 */
};

/* scores/labels: (count, classes) row-major; patient: (count) ids.
 * per_class[classes] and *mean get the intervals; a class without both
 * labels or with non-finite scores gets NAN bounds; the mean covers the
 * classes whose full-data AUROC is defined (resamples where one of them
 * has a single label do not count for the mean). 0, or -1 + err (out of
 * memory, bad config). */
int eval_bootstrap_auroc(const float *scores, const float *labels, const uint32_t *patient,
			 size_t count, int classes, const struct bootstrap_config *cfg,
			 struct eval_interval *per_class, struct eval_interval *mean,
			 struct trainer_error *err);

/* The q-quantile (0..1) of sorted[0..n) by linear interpolation (type 7). */
double eval_quantile_sorted(const double *sorted, size_t n, double q);

#endif
