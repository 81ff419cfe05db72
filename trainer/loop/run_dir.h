/* loop/run_dir.h - the run directory of `chexnet train` at start: the
 * run's effective settings (after defaults and `auto`: the resolved
 * backend and what it uses, precision, sizes, batch, ranks, accumulation,
 * global batch, optimizer, effective learning rate, loss, seed, data and
 * its fingerprint) and OUT/run.json, written (or appended to on
 * --resume) by rank 0.
 * What this is not: the file formats (train/run_record.h,
 * train/checkpoint_settings.h) or the training loop.
 */
#ifndef HVD_TRAINER_LOOP_RUN_DIR_H
#define HVD_TRAINER_LOOP_RUN_DIR_H

#include "loop/options.h"
#include "loop/session.h"
#include "train/run_settings.h"

/* This session's settings (every rank; world: the rank count). 0 or -1
 * (printed). */
int run_dir_settings(const struct cli_options *o, const struct session *s, int world,
		     struct run_settings *out);

/* Rank 0: OUT/run.json for a new run, or the resumed session appended
 * (epoch, step: where it resumed). 0 or -1 (printed). */
int run_dir_record(const struct cli_options *o, const struct run_settings *now,
		   const struct run_change *changes, int change_count, int epoch, long step);

#endif
