/* cmd/train.c - `chexnet train`: checks the options, installs the stop
 * signals (SIGINT too), starts the runtime (dist.h), names the run folder
 * when no --out was given (loop/run_name.h), runs the training loop
 * (loop/train.h), says where the run is and shuts the runtime down.
 * What it does not do: the loop itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/dist.h"
#include "train/peer_lost.h"
#include "train/rejoin.h"
#include "train/stop_signal.h"
#include "cmd/cli.h"
#include "cmd/run.h"
#include "cmd/config.h"
#include "cmd/eval_command.h"
#include "cmd/resume_defaults.h"
#include "loop/run_name.h"
#include "loop/survivors.h"
#include "loop/train.h"

static int dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

/* --resume DIR continues in DIR: --out, when given, must name it. */
static int resume_dir_check(const struct settings *o)
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

static const struct settings *test_options;  /* this command's, for write_test */
/* This process's generation of the run (train/rejoin.h): read from OUT at
 * its first session, the new world's after going on in-process. */
static long generation = -1;

static int write_test(const char *out, const char *model, const struct evaluation *ev)
{
	return eval_write_test(out, ev, (int)test_options->bootstrap, test_options->seed);
}

/* The command line of the in-process session: the given one without
 * --resume, --accumulate and --allow-changes, then --resume OUT
 * --accumulate K [--allow-changes]. Kept for the process's life. */
static char **in_process_argv(const struct settings *given, const char *out, long k,
			      int changes, int *argc)
{
	static char **argv;
	static char k_text[32];
	free(argv);
	if (!(argv = calloc((size_t)given->argc + 6, sizeof(char *))))
		return NULL;
	int n = 0;
	for (int i = 0; i < given->argc; i++) {
		const char *a = given->argv[i];
		int valued = !strcmp(a, "--resume") || !strcmp(a, "--accumulate");
		if (valued || !strncmp(a, "--resume=", 9) || !strncmp(a, "--accumulate=", 13) ||
		    !strcmp(a, "--allow-changes")) {
			i += valued;
			continue;
		}
		argv[n++] = given->argv[i];
	}
	snprintf(k_text, sizeof(k_text), "%ld", k);
	argv[n++] = "--resume";
	argv[n++] = (char *)out;
	argv[n++] = "--accumulate";
	argv[n++] = k_text;
	if (changes)
		argv[n++] = "--allow-changes";
	*argc = n;
	return argv;
}

/* After a lost peer under --shrink, when the survivors' summary says
 * `next=in-process` and names this rank a member: leave the broken
 * runtime, join the ranks left (train/rejoin.h) and resume from OUT/last
 * in this process with the same global batch R x K where an integer K
 * allows, else the nearest (ties: the larger), recorded. Else exit 76. */
static int go_on_in_process(const struct settings *given, const char *out)
{
	struct survivors_saved s;
	int rank, size, argc, old = dist_rank(), old_size = dist_size();
	if (survivors_read_saved(out, &s) != 1 || strcmp(s.next, "in-process") ||
	    survivors_member(&s, old, &rank, &size))
		return CHEXNET_EXIT_PEER_LOST;
	dist_release();   /* the broken runtime: its failure was said */
	long want = (long)s.ranks * s.accumulate;
	int exact;
	long k = survivors_accumulate(&s, size, &exact);
	char **argv = in_process_argv(given, out, k, !exact, &argc);
	struct settings o;
	if (!argv || rejoin_prepare(out, rank, size, &generation) || cli_parse(argc, argv, &o))
		return CHEXNET_EXIT_PEER_LOST;
	if (rank == 0)
		fprintf(stderr, "chexnet: train: rank %d of %d goes on as rank %d of %d in the same "
			"process: --accumulate %ld %s (%ld micro-batches per step, was %ld)\n", old,
			old_size, rank, size, k, exact ? "keeps the global batch" : "gives the nearest "
			"global batch (--allow-changes)", k * size, want);
	int status = run_train(&o);
	if (status == 0 && dist_rank() == 0)
		survivors_mark_finished(out);   /* for the driver: srun waits on the lost node */
	return status;
}

int run_train(const struct settings *given)
{
	struct settings run = *given, *o = &run;
	int usage = resume_dir_check(given);

	if (usage)
		return usage;
	if (!run.out)
		run.out = run.resume;
	if (o->resume && (usage = resume_defaults(o)))
		return usage;
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
	if (o->init && access(o->init, R_OK) != 0) {
		fprintf(stderr, "chexnet: train: --init '%s': %s\n", o->init, strerror(errno));
		return 2;
	}
	struct stat sb;
	if (o->resume && (stat(o->resume, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
		fprintf(stderr, "chexnet: train: --resume '%s': not a run folder (no %s/last to "
			"continue from)\n", o->resume, o->resume);
		return 2;
	}
	if (stop_signal_install(1)) {
		fprintf(stderr, "chexnet: train: cannot install the SIGTERM/SIGUSR1/SIGINT handlers: %s\n",
			strerror(errno));
		return 1;
	}
	if (dist_init()) {
		dist_failed();
		stop_signal_uninstall();
		return 1;
	}
	char name[RUN_NAME_MAX];
	if (!o->out && run_name_new(name)) {
		dist_shutdown();
		stop_signal_uninstall();
		return 1;
	}
	if (!o->out && dist_rank() == 0)
		fprintf(stderr, "chexnet: train: no --out: the run is kept in '%s'\n", name);
	run.out = run.out ? run.out : name;
	if (generation < 0 && o->shrink && (generation = rejoin_generation(run.out)) < 0) {
		dist_shutdown();
		stop_signal_uninstall();
		return 1;
	}
	struct train_config config = train_config_of(o);
	config.generation = generation;
	test_options = o;
	config.write_test = write_test;
	int status = train_run(&config);
	if (!given->out && !given->resume && status && dist_rank() == 0)
		rmdir(name);   /* only when the run left nothing in it */
	if (dist_rank() == 0 && status == 0 && (!given->out || o->progress != PROGRESS_QUIET))
		fprintf(stderr, "chexnet: train: the run is kept in '%s' (run.json says how it "
			"ended; best/ for eval and predict, last/ for --resume)\n", run.out);
	if (dist_shutdown() && status == 0) {
		dist_failed();
		status = 1;
	}
	stop_signal_uninstall();
	return status == CHEXNET_EXIT_PEER_LOST && o->shrink ? go_on_in_process(given, run.out)
		: status;
}
