/* eval/auroc.h - per-class area under the ROC curve, computed exactly as the
 * Mann-Whitney rank statistic with average ranks for tied scores (W2), the
 * mean over the classes that have both positives and negatives, and the
 * final table next to the CheXNet paper's values (Rajpurkar et al. 2017,
 * arXiv:1711.05225, Table 1).
 * What this is not: gathering predictions across ranks (the runtime).
 */
#ifndef HVD_TRAINER_AUROC_H
#define HVD_TRAINER_AUROC_H

#include <stddef.h>
#include <stdio.h>

/* Why a class has no AUROC. Every input gives one of these (NaN and
 * ±Inf scores included): the statistic is total and never loops. */
enum auroc_undefined { AUROC_DEFINED = 0, AUROC_ONE_LABEL, AUROC_NONFINITE };

/* The reason for scores/labels (count values, stride apart); O(count). */
enum auroc_undefined auroc_check(const float *scores, const float *labels, size_t count,
				 size_t stride);
/* "no positives or no negatives", "non-finite scores", ... */
const char *auroc_reason(enum auroc_undefined why);

/* AUROC of scores against 0/1 labels (stride: distance between one
 * sample's values, e.g. 14). NAN when auroc_check says undefined: all
 * labels equal, no samples, or a NaN/±Inf score. */
double auroc_one(const float *scores, const float *labels, size_t count, size_t stride);

/* Per class (out[classes], and why[classes] unless NULL); returns the
 * mean over defined classes and sets *defined to how many there were
 * (mean NAN if none). */
double auroc_all(const float *scores, const float *labels, size_t count, int classes,
		 double *out, enum auroc_undefined *why, int *defined);

/* The CheXNet paper's per-class AUROC in CheXNet class order. */
extern const double auroc_chexnet_paper[14];

/* Class | ours | paper table, then the mean line saying how many classes
 * it covers; why (may be NULL) marks classes with non-finite scores
 * "nan" instead of "n/a" and adds a line saying so. */
void auroc_print_table(FILE *f, const double *per_class, const enum auroc_undefined *why,
		       int classes);

#endif
