/* predict_output.h - what `chexnet predict` prints per image: the line of
 * 14 probabilities (header "image <14 names>"), and, when the checkpoint
 * has stored thresholds, one line per finding with its probability, the
 * threshold and positive/negative; with --json one object per image
 * instead ({"image", "findings": [{"finding", "probability", "threshold",
 * "positive"}]}, threshold and positive null without thresholds).
 * What this is not: running the model (cmd/predict.c) or CAMs.
 */
#ifndef HVD_TRAINER_PREDICT_OUTPUT_H
#define HVD_TRAINER_PREDICT_OUTPUT_H

#include <stdio.h>

#include "eval/thresholds_file.h"

void predict_print_header(FILE *f, int json);
/* probs: (14) probabilities; t NULL when there are no thresholds. */
void predict_print(FILE *f, const char *path, const float *probs, const struct thresholds *t,
		   int json);

#endif
