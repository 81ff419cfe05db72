/* eval_report.h - everything `chexnet eval` says about one split, computed
 * once from the gathered outputs: per class AUROC with its patient-grouped
 * bootstrap interval, AUPRC, ECE (equal-mass bins), and, when thresholds
 * are known, sensitivity, specificity, PPV, NPV and F1 at them; the mean
 * AUROC with its interval and the overall ECE with its reliability bins.
 * Printed as a table (text) or one JSON object (--json).
 * What this is not: running the model (loop/evaluate.h) or plotting (plot_png.h).
 */
#ifndef HVD_TRAINER_EVAL_REPORT_H
#define HVD_TRAINER_EVAL_REPORT_H

#include <stdio.h>

#include "eval/bootstrap.h"
#include "eval/calibration.h"
#include "eval/thresholds.h"
#include "loop/evaluate.h"
#include "eval/thresholds_file.h"

struct eval_report {
	size_t images, patients;
	int bootstrap;                               /* resamples; 0: no intervals */
	uint64_t seed;
	double auroc[CHEXNET_CLASSES], mean_auroc;
	int defined;
	struct eval_interval ci[CHEXNET_CLASSES], mean_ci;
	double auprc[CHEXNET_CLASSES];
	double ece[CHEXNET_CLASSES], ece_all;
	struct calibration_bin bins[EVAL_ECE_BINS];  /* every class pooled */
	int have_thresholds;
	struct thresholds thresholds;
	struct operating_point at[CHEXNET_CLASSES];
	float *probs;                                /* (images, 14) sigmoid of the logits */
	const float *labels;                         /* (images, 14): the evaluation's */
};

/* ev must hold kept outputs (keep_outputs). thresholds may be NULL.
 * 0 or -1 + err. */
int eval_report_compute(const struct evaluation *ev, int bootstrap, uint64_t seed,
			const struct thresholds *thresholds, struct eval_report *r,
			struct trainer_error *err);
void eval_report_free(struct eval_report *r);

/* The table: class, AUROC, 95% CI, CheXNet's, AUPRC, ECE, and the
 * operating point columns when thresholds are known. */
void eval_report_print(FILE *f, const struct eval_report *r);
/* One JSON object (one line) with the same numbers; NaN is null. */
void eval_report_json(FILE *f, const struct eval_report *r, const char *checkpoint,
		      const char *split, double loss);

#endif
