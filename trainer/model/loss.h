/* loss.h - sigmoid + binary cross-entropy over the (N, classes) logits,
 * on the host for every backend, optionally weighted per class as the
 * CheXNet paper's pneumonia model: w+ = N/(P+N) on positives, w- =
 * P/(P+N) on negatives, from training-set counts (`--loss bce` uses 1, 1).
 * What this is not: the metric (auroc.h).
 */
#ifndef HVD_TRAINER_LOSS_H
#define HVD_TRAINER_LOSS_H

#include <stddef.h>

/* Per-class weights from positive counts out of total records. A class
 * with no positives (or no negatives) gets w+ = w- = 1 instead of a zero
 * weight, so it still trains; returns how many classes that happened to. */
int loss_class_weights(const size_t *positives, size_t total, int classes,
		       float *w_pos, float *w_neg);

/* Mean over N*classes of
 *   -w+ y log sigmoid(z) - w- (1-y) log(1 - sigmoid(z))
 * (w_pos/w_neg NULL: both 1, torch's BCEWithLogitsLoss). dlogits (may be
 * NULL) gets d(loss)/d(logits). Only the first `count` rows count. */
double loss_bce(const float *logits, const float *labels, int count, int classes,
		const float *w_pos, const float *w_neg, float *dlogits);

/* 1 / (1 + exp(-z)) without overflow. */
float loss_sigmoid(float z);

#endif
