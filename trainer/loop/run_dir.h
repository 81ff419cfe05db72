/* loop/run_dir.h - the run directory of `chexnet train` at start: the
 * run's effective settings (after defaults and `auto`: the resolved
 * backend and what it uses, precision, sizes, batch, ranks, accumulation,
 * global batch, optimizer, effective learning rate, loss, seed, data and
 * its fingerprint); the --resume comparison of
 * the checkpoint's recorded settings with this session's (a change of
 * meaning is refused unless --allow-changes); and OUT/run.json, written
 * (or appended to on --resume) by rank 0 once the checks passed.
 * What this is not: what may be touched in the folder (loop/run_files.h), the file formats (train/run_record.h,
 * train/checkpoint_settings.h) or the training loop.
 */
#ifndef HVD_TRAINER_LOOP_RUN_DIR_H
#define HVD_TRAINER_LOOP_RUN_DIR_H

#include "train/settings.h"
#include "loop/session.h"
#include "train/run_record.h"
#include "train/run_settings.h"

/* This session's settings (every rank; world: the rank count). 0 or -1
 * (printed). */
int run_dir_settings(const struct train_config *c, const struct session *s, int world,
		     struct run_settings *out);

/* --config: the derived values the file names (ranks, global_batch,
 * data_fingerprint, ...) against this run's now; the differences in one
 * line when loud. Never sets anything. */
void run_dir_config_check(const struct train_config *c, const struct run_settings *now, int loud);

/* --resume: the checkpoint dir's recorded settings against now's; fills
 * changes (at most 2 * RUN_SETTINGS_MAX) and *count with every
 * difference. -1 (printed when loud) when a MEANING setting differs
 * without --allow-changes, or the record is unreadable; otherwise the
 * accepted changes are named in one line (when loud, unless --quiet). A
 * checkpoint without recorded settings compares as equal. */
int run_dir_compare(const struct train_config *c, const char *checkpoint,
		    const struct run_settings *now, struct run_change *changes, int *count,
		    int loud);

/* --resume: OUT/run.json, when there, reads back (checked before any
 * file of the run changes). 0, or -1 (printed when loud). */
int run_dir_check_record(const struct train_config *c, int loud);

/* Rank 0: OUT/run.json for a new run, or the resumed session appended
 * (epoch, step: where it resumed; membership: what a lost peer changed,
 * may be none; a run without run.json gets a new one).
 * Collective (the hosts are gathered). 0 or -1 (printed). */
int run_dir_record(const struct train_config *c, const struct session *s,
		   const struct run_settings *now,
		   const struct run_change *changes, int change_count,
		   const struct run_record_pair *membership, int membership_count, int epoch,
		   long step);

/* Rank 0: OUT/run.json's end record for this session's exit status
 * (0 finished, CHEXNET_EXIT_PREEMPTED stopped by signal sig, else
 * failed: error, the last error line, the reason); steps: from the run's
 * start. 0 or -1 (printed). */
int run_dir_end(const struct train_config *c, int status, int sig, const char *error,
		long steps, int best_epoch, double best_value);

#endif
