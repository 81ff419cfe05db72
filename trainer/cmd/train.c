/* cmd/train.c - `chexnet train`: checks the options, installs the stop
 * signals, starts the runtime (dist.h), runs the training loop
 * (loop/train.h) and shuts the runtime down.
 * What it does not do: the loop itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/dist.h"
#include "train/stop_signal.h"
#include "cmd/run.h"
#include "cmd/config.h"
#include "cmd/eval_command.h"
#include "loop/train.h"

static int dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

/* --resume DIR continues in DIR: --out, when given, must name it. */
static int resume_dir_check(const struct cli_options *o)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (o->overwrite && o->resume) {
		fprintf(stderr, "chexnet: train: --overwrite and --resume: give one\n");
		return 2;
	}
	if (o->allow_changes && !o->resume) {
		fprintf(stderr, "chexnet: train: --allow-changes: only with --resume\n");
		return 2;
	}
	if (!o->resume || !o->out)
		return 0;
	if (realpath(o->out, a) && realpath(o->resume, b) && strcmp(a, b) == 0)
		return 0;
	fprintf(stderr, "chexnet: train: --out '%s': differs from --resume '%s': a resumed run "
		"continues in its own directory (leave --out out)\n", o->out, o->resume);
	return 2;
}

int run_train(const struct cli_options *given)
{
	struct cli_options run = *given, *o = &run;
	int usage = resume_dir_check(given);

	if (usage)
		return usage;
	if (!run.out)
		run.out = run.resume;
	if (!o->data == !o->synthetic) {
		fprintf(stderr, "chexnet: train: need exactly one of --data DIR and --synthetic\n");
		return 2;
	}
	usage = eval_options_check(o);
	if (usage)
		return usage;
	if (o->init && o->resume) {
		fprintf(stderr, "chexnet: train: --init and --resume: give one (a resumed run has its weights)\n");
		return 2;
	}
	if (stop_signal_install()) {
		fprintf(stderr, "chexnet: train: cannot install the SIGTERM/SIGUSR1 handlers: %s\n",
			strerror(errno));
		return 1;
	}
	if (dist_init()) {
		dist_failed();
		stop_signal_uninstall();
		return 1;
	}
	struct train_config config = train_config_of(o);
	int status = train_run(&config);
	if (dist_shutdown() && status == 0) {
		dist_failed();
		status = 1;
	}
	stop_signal_uninstall();
	return status;
}
