/* cmd/train_options.h - `chexnet train`'s usage checks, made before the
 * runtime starts (eval's, which train's include, are eval_command.h's
 * eval_options_check): one run folder (--out names --resume's, one of
 * --overwrite and --resume, --allow-changes only with --resume), one
 * input (--data or --synthetic), one start (--init or --resume) whose
 * file or folder is there. --resume's recorded settings are filled in
 * first (resume_defaults.h), so they are checked as given ones are.
 * What it does not do: start anything, or check what only the run can
 * (the data's contents, the checkpoint's fit: loop/).
 */
#ifndef HVD_TRAINER_CMD_TRAIN_OPTIONS_H
#define HVD_TRAINER_CMD_TRAIN_OPTIONS_H

#include "train/settings.h"

/* Defaults o->train.out to --resume's folder and fills in --resume's recorded
 * settings, then checks: 0, 2 after printing the one-line reason (bad
 * usage), or 1 (a recorded run that cannot be read, printed). */
int train_options_check(struct settings *o);

#endif
