/* commands.h - chexnet's own commands, one row each (name, summary, the
 * settings table's bit or an option table of its own, the function):
 * usage, dispatch, option parsing and the tests read this table. The
 * input pipeline's commands (pack, synth) are data_cmds.h's, which the
 * data tool links without the trainer; main.c looks there after here.
 * What this is not: the commands themselves (run.h, curves.h).
 */
#ifndef HVD_TRAINER_CMD_COMMANDS_H
#define HVD_TRAINER_CMD_COMMANDS_H

#include <stdio.h>

#include "base/option_table.h"
#include "train/settings.h"

struct command {
	const char *name;
	const char *summary;                     /* one line for `chexnet --help` */
	int bit;                                 /* its bit in train/settings.h's rows; 0: none */
	int (*run)(const struct settings *o);    /* a command of the settings table (bit) */
	int (*run_args)(int argc, char **argv);  /* one with its own options: argv[0] is its name */
	const struct option_table *options;      /* those options (run_args) */
	int operands;                            /* takes arguments that are not options */
};

/* The table; a row with a NULL name ends it. */
extern const struct command commands[];
/* The row called name, or NULL. */
const struct command *command_find(const char *name);
/* `chexnet --help`'s list: these commands, then data_cmds.h's. */
void commands_usage(FILE *f);

#endif
