/* test_data_tool.c - `chexnet-data`, a test-only program that runs the input
 * pipeline's subcommands (pack, synth) exactly as ./chexnet dispatches them,
 * so the tests and bench/loader can exercise them before and besides the
 * full trainer binary. What it does not do: anything of its own.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/data_cmds.h"

int main(int argc, char **argv)
{
	const struct data_command *c = argc > 1 ? data_command_find(argv[1]) : NULL;
	if (!c) {
		fprintf(stderr, "chexnet: command '%s': unknown (pack, synth)\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	return c->run(argc - 1, argv + 1);
}
