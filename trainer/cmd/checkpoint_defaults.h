/* cmd/checkpoint_defaults.h - `chexnet eval | predict | locate` take the
 * model and the image size from the checkpoint they are given: its
 * "model" metadata and its recorded settings (train/checkpoint_settings.h).
 * A --model that contradicts the checkpoint is an error naming both; a
 * different --size is allowed with a note (a checkpoint written before
 * settings were recorded keeps the --size default, a file without "model"
 * metadata both defaults). A run folder given as the checkpoint means
 * its best/ (said in a line); one without best/ is refused naming last/.
 * What this is not: loading the weights (train/checkpoint.h).
 */
#ifndef HVD_TRAINER_CMD_CHECKPOINT_DEFAULTS_H
#define HVD_TRAINER_CMD_CHECKPOINT_DEFAULTS_H

#include "cmd/options.h"

/* o->checkpoint's model and size into o (unless given on the command
 * line). 0 (also when there is no checkpoint file: loading it reports
 * that), 1 (the checkpoint is unreadable) or 2 (a contradiction), the
 * line printed. */
int checkpoint_defaults(struct cli_options *o);

#endif
