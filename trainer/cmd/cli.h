/* cli.h - the options of `chexnet train | eval | predict | bench | locate`, parsed
 * strictly by the settings table (unknown flag, missing value or
 * malformed number: one-line error, exit 2) into struct settings, and the
 * per-command help.
 * What this is not: running the commands (run.h).
 */
#ifndef HVD_TRAINER_CLI_H
#define HVD_TRAINER_CLI_H

#include <stdio.h>

#include "cmd/commands.h"
#include "train/settings.h"

/* Command c's options (argv[0] is its name): 0 ok, 1 --help printed, -1
 * error (message printed). --backend auto is resolved here
 * (backend/choice.h): o->train.session.backend names a backend. */
int cli_parse(const struct command *c, int argc, char **argv, struct settings *o);

#endif
