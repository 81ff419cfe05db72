/* cmd/config.h - what a command's settings give beyond the configs they
 * hold (train/settings.h: o->train, o->train.session, o->train.data are
 * the loops' own): eval's config, and the settings run.json records.
 * What this is not: parsing, defaults or checks (cmd/cli.c, the
 * commands' own files).
 */
#ifndef HVD_TRAINER_CMD_CONFIG_H
#define HVD_TRAINER_CMD_CONFIG_H

#include "train/settings.h"
#include "train/run_settings.h"

struct eval_config eval_config_of(const struct settings *o);
/* The settings of o's rows that run.json records (train/settings.h),
 * as it records them. 0 or -1 (err). */
int record_of(const struct settings *o, struct run_settings *out, struct trainer_error *err);

#endif
