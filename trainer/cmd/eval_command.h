/* eval_command.h - what `chexnet eval` and `chexnet train` do with a
 * finished evaluation beyond the loss: check the evaluation options before
 * any work (--choose-thresholds only on the val split, one threshold rule,
 * a writable --plots directory), choose and store operating thresholds,
 * or read the stored ones, and present the report (table or --json) and
 * the plots.
 * What this is not: the forward pass and gathering (cmd/eval.c), the
 * statistics themselves (eval_*.c).
 */
#ifndef HVD_TRAINER_EVAL_COMMAND_H
#define HVD_TRAINER_EVAL_COMMAND_H

#include "cmd/cli.h"
#include "cmd/common.h"
#include "cmd/thresholds_file.h"

/* 0, or 2 after printing the one-line reason (bad usage). */
int eval_options_check(const struct cli_options *o);

/* The rule --sensitivity / --specificity ask for (default Youden's J). */
struct threshold_choice eval_threshold_rule(const struct cli_options *o);

/* Chooses a threshold per class on ev's kept outputs and stores them with
 * the checkpoint (split: where ev came from). 0 or -1 (printed). */
int eval_store_thresholds(const char *checkpoint, const char *model, const char *split,
			  const struct threshold_choice *rule, const struct evaluation *ev,
			  struct thresholds *out);

/* `chexnet train` at a new best epoch, after OUT/best is written: rank 0
 * chooses thresholds on the validation outputs ev kept and stores them
 * in OUT/best (the rule from --sensitivity/--specificity). 0 or -1. */
int eval_train_thresholds(const struct cli_options *o, int rank, const char *model,
			  const struct evaluation *ev);

/* Rank 0 after a finished `chexnet eval` pass with kept outputs: the
 * thresholds (chosen or read), the report on stdout, the plots. Returns
 * the exit status. */
int eval_present(const struct cli_options *o, const char *model, const struct evaluation *ev);

#endif
