/* cmd/resume_defaults.h - `chexnet train --resume RUN` needs no other
 * flag: every setting of the run's record (RUN/run.json) that this
 * command line does not give is taken from it: the data (folder, or
 * synthetic and its image count), model, size, precision, batch,
 * accumulation, optimizer and its settings, learning rate, its scaling
 * and warm-up, patience, loss, seed, memory-efficient, epochs, steps,
 * save-every, progress-every and thread counts. Flags given are
 * changes, checked against the checkpoint as before (loop/run_dir.h).
 * Not taken: the backend (auto chooses on this machine), --init.
 * What this is not: the comparison, or reading the checkpoint.
 */
#ifndef HVD_TRAINER_CMD_RESUME_DEFAULTS_H
#define HVD_TRAINER_CMD_RESUME_DEFAULTS_H

#include "train/settings.h"

/* o->train.resume's record into o. 0 (also when RUN has no run.json: the
 * flags rule, as before), 1 (an unreadable record) or 2 (another
 * --model, or a recorded value no flag accepts), the line printed. */
int resume_defaults(struct settings *o);
/* Once the runtime says how many ranks there are: when they differ from
 * the record's and --accumulate was not given, the accumulation that
 * keeps the micro-batches per step the run keeps to (run.json's
 * micro_batches_kept; a record without it: its ranks x accumulate), or
 * the nearest (recover/survivors.h's rule), whose change of the global batch
 * then needs --allow-changes as any other. *kept: the micro-batches per
 * step this session keeps to (0: its own ranks x accumulate, as a new run
 * or a given --accumulate has). say: print what was decided (rank 0).
 * 0, or 2 (printed). */
int resume_keep_global_batch(struct settings *o, int ranks, int say, long *kept);

#endif
