/* data_cmds.c - table of the input pipeline's chexnet subcommands.
 * What it does not do: implement them (each lives in its own cmd_*.c).
 */
#include <stddef.h>
#include <string.h>

#include "data_cmds.h"

const struct data_command data_commands[] = {
	{ NULL, NULL, NULL }
};

const struct data_command *data_command_find(const char *name)
{
	for (const struct data_command *c = data_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}
