/* cmd/config.h - the loops' configs (loop/config.h) from the command
 * line's options (cmd/options.h): each takes the fields its part reads
 * and nothing else, so a loop never sees the command line's bag.
 * What this is not: parsing, defaults or checks (cmd/cli.c, the
 * commands' own files).
 */
#ifndef HVD_TRAINER_CMD_CONFIG_H
#define HVD_TRAINER_CMD_CONFIG_H

#include "cmd/options.h"
#include "loop/loop_config.h"

struct session_config session_config_of(const struct cli_options *o);
struct data_config data_config_of(const struct cli_options *o);
struct train_config train_config_of(const struct cli_options *o);
struct eval_config eval_config_of(const struct cli_options *o);

#endif
