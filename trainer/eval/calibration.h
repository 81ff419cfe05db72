/* eval/calibration.h - how far predicted probabilities are from observed
 * frequencies: expected calibration error over equal-mass bins (each bin
 * holds the same number of predictions, give or take one, after sorting
 * by probability; ECE = sum over bins of n_b/n * |mean p - mean y|), per
 * class and overall (every class's predictions pooled), and the bins
 * themselves for the reliability diagram.
 * What this is not: thresholds (eval/thresholds.h) or plotting.
 */
#ifndef HVD_TRAINER_EVAL_CALIBRATION_H
#define HVD_TRAINER_EVAL_CALIBRATION_H

#include <stddef.h>

#define EVAL_ECE_BINS 10

struct calibration_bin {
	double mean_p;     /* mean predicted probability */
	double mean_y;     /* observed frequency of positives */
	size_t count;
};

/* probs/labels: count values, stride apart (probabilities in [0, 1]).
 * bins: how many (1..count); out[bins] may be NULL. Returns the ECE, NAN
 * when count is 0, bins out of range, a probability is not finite, or
 * out of memory. */
double eval_ece(const float *probs, const float *labels, size_t count, size_t stride,
		int bins, struct calibration_bin *out);

#endif
