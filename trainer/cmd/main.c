/* main.c - `chexnet`: dispatches to the commands of commands.h (train,
 * eval, predict, bench, locate, curves) and the input pipeline's (pack,
 * synth, ... from data_cmds.h), and ends a trainer command: a failed rank of a
 * multi-rank run ends the whole Slurm step (the rule in dist.h), a
 * finished one releases the runtime. Command line and exit only. What it
 * does not do: anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/data_cmds.h"
#include "train/dist.h"

/* The exit path of a trainer command that ended with `status` (its error
 * line already printed): end the step or release the runtime. */
static int finish(int status)
{
	if (dist_status_ends_step(status, dist_size())) {
		fflush(stdout);   /* rank 0's tables: the step is killed next */
		if (dist_abort_job(status) == 0)
			return status;
		fprintf(stderr, "%s\n", dist_error());
	}
	if (dist_release() && status == 0) {
		fprintf(stderr, "%s\n", dist_error());
		return 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct settings o;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		commands_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("chexnet %s\n", HVD_VERSION);
		return 0;
	}
	const struct command *c = command_find(argv[1]);
	if (c && c->run_args)
		return c->run_args(argc - 1, argv + 1);
	if (c) {
		int rc = cli_parse(c, argc - 1, argv + 1, &o);
		/* one process: the runtime's start-up report only when asked */
		dist_show_startup(o.verbose);
		/* the runtime follows the trainer: a host backend reduces host
		 * buffers (never NCCL), unless the user said otherwise */
		if (rc == 0 && strcmp(o.train.session.backend, "gpu"))
			setenv("HVD_BACKEND", "host", 0);
		return rc < 0 ? 2 : rc > 0 ? 0 : finish(c->run(&o));
	}
	const struct data_command *d = data_command_find(argv[1]);
	if (d)
		return d->run(argc - 1, argv + 1);
	fprintf(stderr, "chexnet: '%s': unknown command (chexnet --help)\n", argv[1]);
	return 2;
}
