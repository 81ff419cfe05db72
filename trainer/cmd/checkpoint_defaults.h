/* cmd/checkpoint_defaults.h - `chexnet eval | predict | locate` take the
 * model, the image size and the view training had from the checkpoint
 * they are given: its "model" metadata and its recorded settings
 * (train/checkpoint_settings.h). The view is the stored size images were
 * area-resized to before the crop, the aspect rule (pad | squash) and
 * the normalisation: a folder's images are replayed through exactly it;
 * a pack at another size or aspect is used with a note. A checkpoint
 * recording no view (older) keeps the older rule (8/7 of the size, a
 * pack's own size, squashed) with a one-line note; one whose images
 * became 8 bits by another rule than this build decodes files by gets a
 * note when files are read (a pack keeps its own rule).
 * A --model that contradicts the checkpoint is an error naming both; a
 * different --size is allowed with a note (a checkpoint written before
 * settings were recorded keeps the --size default, a file without "model"
 * metadata both defaults). A run folder given as the checkpoint means
 * its best/ (said in a line); one without best/ is refused naming last/.
 * What this is not: loading the weights (train/checkpoint.h).
 */
#ifndef HVD_TRAINER_CMD_CHECKPOINT_DEFAULTS_H
#define HVD_TRAINER_CMD_CHECKPOINT_DEFAULTS_H

#include "train/settings.h"

/* o->checkpoint's model and size into o (unless given on the command
 * line), its view into o->train.data (stored_size, aspect). 0 (also when there is no checkpoint file: loading it reports
 * that), 1 (the checkpoint is unreadable) or 2 (a contradiction), the
 * line printed. */
int checkpoint_defaults(struct settings *o);

#endif
