/* eval/thresholds.h - operating thresholds per finding and the confusion
 * numbers at them. A prediction is positive when its probability is >= the
 * threshold. Rules, over every distinct probability as a candidate (plus
 * "above the highest": nothing positive):
 *   youden       maximise sensitivity + specificity - 1 (the highest such
 *                threshold when several tie);
 *   sensitivity  the highest threshold whose sensitivity is >= target
 *                (the best specificity that keeps it);
 *   specificity  the lowest threshold whose specificity is >= target.
 * What this is not: storing them (thresholds_file.h).
 */
#ifndef HVD_TRAINER_EVAL_THRESHOLDS_H
#define HVD_TRAINER_EVAL_THRESHOLDS_H

#include <stddef.h>

enum threshold_rule { THRESHOLD_YOUDEN, THRESHOLD_SENSITIVITY, THRESHOLD_SPECIFICITY };

struct threshold_choice {
	enum threshold_rule rule;
	double target;     /* sensitivity/specificity rules: in (0, 1] */
};

/* probs/labels: count values, stride apart. NAN when the class has no
 * positives or no negatives or a probability is not finite. */
double eval_threshold_choose(const float *probs, const float *labels, size_t count,
			     size_t stride, const struct threshold_choice *rule);

struct operating_point {
	size_t tp, fp, tn, fn;
	double sensitivity, specificity, ppv, npv, f1;  /* NAN where the denominator is 0 */
};

struct operating_point eval_operating_point(const float *probs, const float *labels,
					    size_t count, size_t stride, double threshold);

const char *threshold_rule_name(enum threshold_rule r);  /* "youden", ... */

#endif
