/* loop/thresholds.h - operating thresholds chosen on an evaluation's kept
 * outputs and stored with a checkpoint.
 * What this is not: the statistics (eval/thresholds.h), the file
 * (eval/thresholds_file.h).
 */
#ifndef HVD_TRAINER_LOOP_THRESHOLDS_H
#define HVD_TRAINER_LOOP_THRESHOLDS_H

#include "eval/thresholds_file.h"
#include "loop/evaluate.h"
#include "train/settings.h"

/* The rule --sensitivity / --specificity ask for (0: not given; both 0:
 * Youden's J). */
struct threshold_choice eval_threshold_rule(double sensitivity, double specificity);

/* Chooses a threshold per class on ev's kept outputs and stores them with
 * the checkpoint (split: where ev came from). 0 or -1 (printed). */
int eval_store_thresholds(const char *checkpoint, const char *model, const char *split,
			  const struct threshold_choice *rule, const struct evaluation *ev,
			  struct thresholds *out);

/* `chexnet train` at a new best epoch, after OUT/best is written: rank 0
 * chooses thresholds on the validation outputs ev kept and stores them
 * in OUT/best (the rule from --sensitivity/--specificity). 0 or -1. */
int eval_train_thresholds(const struct train_config *c, int rank, const char *model,
			  const struct evaluation *ev);

#endif
