/* cmd/config_file.h - `chexnet train --config FILE`, a recipe, and
 * --print-config, which writes one. A recipe's keys are run.json's: every
 * row of the settings table with a flag and a key that train takes
 * (train/settings.c); `data: synthetic` is --synthetic. Each key sets its
 * row as if given, below the command line (a row the command line gave,
 * or another row of the same value, keeps the command line's) and above
 * --resume's record and the defaults, so that a key that changes a
 * resumed run's meaning needs --allow-changes as a flag would. Types are
 * YAML's: numbers unquoted, switches true or false, text quoted or not;
 * a run.json's 0 and 1 for its switches. The keys of derived values
 * (ranks, global_batch, data_fingerprint, ...) set nothing: the run
 * checks them against its own (loop/run_dir.h). Refused in one line
 * naming the file, the line, the key and the value: an unknown key, a
 * flag of this command line only (resume, overwrite, ...), a wrong type,
 * a value its row refuses.
 * What it is not: reading the file (cmd/recipe_read.h).
 */
#ifndef HVD_TRAINER_CMD_CONFIG_FILE_H
#define HVD_TRAINER_CMD_CONFIG_FILE_H

#include <stdio.h>

#include "train/settings.h"

/* o->train.config's keys into o (after the command line's). 0, or 2 with
 * one line printed. */
int config_file_apply(struct settings *o);

/* train's effective settings in o as a recipe --config reads back: one
 * `key: value` line per key in the table's order, rows without a value
 * (no --init, whole epochs) left out; auto as what it chose. */
void config_file_print(FILE *f, const struct settings *o);

#endif
