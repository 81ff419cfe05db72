/* data_cmds.c - table of the input pipeline's chexnet subcommands.
 * What it does not do: implement them (each lives in its own cmd_*.c).
 */
#include <stddef.h>
#include <string.h>

#include "cmd/data_cmds.h"

int cmd_pack(int argc, char **argv);
int cmd_synth(int argc, char **argv);
extern const struct option_table pack_options, synth_options;

const struct data_command data_commands[] = {
	{ "pack", "decode a data set once into CRC-checked shards (--data DIR --out DIR)", cmd_pack,
	  &pack_options },
	{ "synth", "generate a learnable data set in the NIH layout (--out DIR --count N)", cmd_synth,
	  &synth_options },
	{ NULL, NULL, NULL, NULL }
};

const struct data_command *data_command_find(const char *name)
{
	for (const struct data_command *c = data_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}
