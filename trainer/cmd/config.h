/* cmd/config.h - the loops' configs (loop/loop_config.h) from a
 * command's settings (train/settings.h): each takes the fields its part reads
 * and nothing else, so a loop never sees the command line's bag.
 * What this is not: parsing, defaults or checks (cmd/cli.c, the
 * commands' own files).
 */
#ifndef HVD_TRAINER_CMD_CONFIG_H
#define HVD_TRAINER_CMD_CONFIG_H

#include "train/settings.h"
#include "loop/loop_config.h"
#include "train/run_settings.h"

struct session_config session_config_of(const struct settings *o);
struct data_config data_config_of(const struct settings *o);
struct train_config train_config_of(const struct settings *o);
struct eval_config eval_config_of(const struct settings *o);
/* The settings of o's rows that run.json records (train/settings.h),
 * as it records them. 0 or -1 (err). */
int record_of(const struct settings *o, struct run_settings *out, struct trainer_error *err);

#endif
