/* eval/curves.h - the ranking curves of one class: the ROC curve's points
 * (for plots) and the area under the precision-recall curve as average
 * precision (sum over recall steps of precision, tied scores taken as one
 * step, as scikit-learn's average_precision_score). Imbalanced findings
 * (Hernia: 0.2% positive) show there what AUROC hides.
 * What this is not: AUROC (auroc.c) or intervals (eval/bootstrap.c).
 */
#ifndef HVD_TRAINER_EVAL_CURVES_H
#define HVD_TRAINER_EVAL_CURVES_H

#include <stddef.h>

/* scores/labels: count values, stride apart. NAN when there are no
 * positives, no images or a non-finite score. */
double eval_auprc(const float *scores, const float *labels, size_t count, size_t stride);

/* ROC points from the highest threshold down: fpr[0] = tpr[0] = 0, then
 * one point per distinct score, last (1, 1). fpr/tpr hold count + 1
 * values; returns the number of points, 0 when undefined (one label,
 * non-finite scores) or out of memory. */
size_t eval_roc_points(const float *scores, const float *labels, size_t count, size_t stride,
		       float *fpr, float *tpr);

#endif
