/* loop/run_files.h - what `chexnet train` may touch in its run folder
 * (OUT). An entry is the run's own only when all of these hold: its name
 * is one a run writes (run.json, metrics.csv, tb, last, best, test.json,
 * or a leftover NAME.tmp-* / NAME.old-* of one); the record lists it
 * (run.json's "files"; a record from before that list: run.json,
 * metrics.csv, tb, last, best; no record: nothing, except last/ and best/
 * on --resume); lstat shows the kind a run writes (file or folder); the
 * running user owns it; a folder holds only what a run writes there
 * (event files in tb/, the checkpoint's files in last/, best/). Only
 * those are ever deleted or replaced, each named in one line. A record's
 * names that chexnet never writes are named and not believed. Anything
 * else is foreign: a new run into a folder holding foreign entries is
 * refused, and with --overwrite each is renamed NAME.foreign-N (named in
 * one line), never deleted, but only in a folder whose run.json is a
 * record of chexnet's (otherwise --overwrite is refused in one line:
 * not a run folder, such as a home directory); entries already named *.foreign-N are left
 * alone, and --resume leaves every foreign entry alone. A symbolic link or
 * anything neither a regular file nor a directory (a FIFO, a socket, a
 * device) in the folder, or inside its own directories, is refused in one
 * line: never followed, opened or waited on. OUT itself may be a link to
 * a directory.
 * What this is not: the checks of the run's settings (loop/run_dir.h).
 */
#ifndef HVD_TRAINER_LOOP_RUN_FILES_H
#define HVD_TRAINER_LOOP_RUN_FILES_H

#include "train/settings.h"

/* The names a run of c writes in OUT (for run.json's "files"); *count set. */
const char *const *run_files_written(const struct train_config *c, int *count);

/* Rank 0, before anything is written to c->out. A new run: -1 (printed)
 * without --overwrite when the folder holds a run (a checkpoint: last/
 * or best/), the records of a run that ended (run.json has an "end":
 * a results folder keeps its record, metrics and tb/ without
 * checkpoints) or foreign entries; with --overwrite -1 (printed) for
 * foreign entries beside no chexnet run.json, else the old run's own
 * entries are removed and foreign ones set aside. A record without an
 * "end" and without any checkpoint (a run killed before its first;
 * nothing to resume, as a requeued batch job finds it) is removed with
 * its metrics, with a note, and the run starts again. Every run: -1
 * (printed) for a link or a special file. */
int run_files_guard(const struct train_config *c);

#endif
