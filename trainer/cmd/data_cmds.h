/* data_cmds.h - the input pipeline's subcommands of ./chexnet (pack, synth,
 * ...). main.c looks a name up here after its own commands. What this is
 * not: the commands themselves (data_*.c, cmd_*.c).
 */
#ifndef HVD_TRAINER_DATA_CMDS_H
#define HVD_TRAINER_DATA_CMDS_H

#include "base/option_table.h"

struct data_command {
	const char *name;
	const char *summary;                   /* one line for `chexnet --help` */
	int (*run)(int argc, char **argv);     /* argv[0] is the command name; returns exit status */
	const struct option_table *options;    /* its options (command bit 1) */
};

/* NULL-terminated table of the pipeline's commands. */
extern const struct data_command data_commands[];

/* The command called name, or NULL. */
const struct data_command *data_command_find(const char *name);

#endif
