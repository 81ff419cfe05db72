/* cmd/eval_command.h - the evaluation options of `chexnet eval` and
 * `chexnet train`, checked before any work (--choose-thresholds only on
 * the val split, one threshold rule, a writable --plots directory), and
 * what `chexnet eval` does with a finished pass: thresholds chosen or
 * read, the report (table or --json) and the plots.
 * What this is not: the pass (loop/evaluate.h), storing thresholds
 * (loop/thresholds.h), the statistics (eval/).
 */
#ifndef HVD_TRAINER_EVAL_COMMAND_H
#define HVD_TRAINER_EVAL_COMMAND_H

#include "train/settings.h"
#include "loop/evaluate.h"

/* 0, or 2 after printing the one-line reason (bad usage). */
int eval_options_check(const struct settings *o);

/* Rank 0 after a finished `chexnet eval` pass with kept outputs: the
 * thresholds (chosen or read), the report on stdout, the plots. Returns
 * the exit status. */
int eval_present(const struct settings *o, const char *model, const struct evaluation *ev);

/* `train --test`: out/test.json, the report `eval --json` prints for
 * the test split of the final weights (out/last), written whole
 * (temporary file, rename); bootstrap resamples and seed as eval's.
 * 0 or -1 (printed). */
int eval_write_test(const char *out, const struct evaluation *ev, int bootstrap, uint64_t seed);

#endif
