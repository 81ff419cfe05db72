/* auroc.h - per-class area under the ROC curve, computed exactly as the
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

/* AUROC of scores against 0/1 labels (stride: distance between one
 * sample's values, e.g. 14). NAN when all labels are equal (n/a). */
double auroc_one(const float *scores, const float *labels, size_t count, size_t stride);

/* Per class (out[classes]); returns the mean over defined classes and
 * sets *defined to how many there were (mean NAN if none). */
double auroc_all(const float *scores, const float *labels, size_t count, int classes,
		 double *out, int *defined);

/* The CheXNet paper's per-class AUROC in CheXNet class order. */
extern const double auroc_chexnet_paper[14];

/* Class | ours | paper table, then the mean line saying how many classes
 * it covers. */
void auroc_print_table(FILE *f, const double *per_class, int classes);

#endif
