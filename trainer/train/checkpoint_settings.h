/* train/checkpoint_settings.h - the run's settings (run_settings.h) in a
 * checkpoint's model.safetensors metadata: one "setting.KEY" string per
 * setting beside "model", written with the weights, read back by eval,
 * predict, locate (defaults) and --resume (the comparison).
 * What this is not: the weights (checkpoint.h) or run.json.
 */
#ifndef HVD_TRAINER_CHECKPOINT_SETTINGS_H
#define HVD_TRAINER_CHECKPOINT_SETTINGS_H

#include <stddef.h>

#include "base/error.h"
#include "train/run_settings.h"
#include "train/safetensors.h"

/* The metadata entries for s into meta[0..max), keys written into
 * keys[RUN_SETTINGS_MAX][48], leaving out the settings of one session
 * (out, test, quiet, ...: train/settings.h); returns how many. */
int checkpoint_settings_meta(const struct run_settings *s, char keys[][48], struct st_meta *meta,
			     int max);

/* From path (a checkpoint directory or its model.safetensors): the model
 * name (its "model" metadata, model_len bytes; "" when it has none, e.g.
 * converted torchvision weights) and the settings (count 0 for a
 * checkpoint written before they were recorded). An unknown
 * "setting." key or a bad value is an error naming the file. 0 or -1. */
int checkpoint_read_settings(const char *path, char *model, size_t model_len,
			     struct run_settings *s, struct trainer_error *err);

#endif
