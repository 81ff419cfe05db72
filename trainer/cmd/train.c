/* cmd/train.c - `chexnet train`: checks the options, installs the stop
 * signals (SIGINT too), starts the runtime (dist.h), names the run folder
 * when no --out was given (loop/run_name.h), runs the training loop
 * (loop/train.h), says where the run is and shuts the runtime down.
 * What it does not do: the loop itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/dist.h"
#include "train/peer_lost.h"
#include "train/stop_signal.h"
#include "cmd/cli.h"
#include "cmd/go_on.h"
#include "cmd/resume_defaults.h"
#include "cmd/run.h"
#include "cmd/config.h"
#include "cmd/config_file.h"
#include "cmd/eval_command.h"
#include "cmd/train_options.h"
#include "recover/lost_peer.h"
#include "loop/run_name.h"
#include "recover/survivors.h"
#include "loop/train.h"

/* What the training loop calls after a lost peer (train/settings.h). */
static const struct train_recovery recovery = {
	.reset = survivors_reset,
	.read_saved = survivors_read_saved,
	.survive = trainer_survive_lost_peer,
};

static int dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

/* One session of the run in o (its out and --resume's defaults filled
 * in); name: room for a new run's name; r: where it starts from; *target:
 * the micro-batches per step the run keeps to (0: the record's, or this
 * session's own), set here for the sessions after it. A world of the
 * ranks left that does not form (members that never joined) is a lost
 * peer like any other (recover/lost_peer.h). */
static int train_session(struct settings *o, char name[RUN_NAME_MAX], struct rejoined *r,
			 long *target)
{
	long kept = 0;
	int named = !o->train.out && !o->train.resume;
	int usage = train_options_check(o);

	if (usage)
		return usage;
	stop_signal_hold();   /* the handlers are run_train's: no default between sessions */
	r->formed = (r->world.size ? dist_init_world(&r->world) : dist_init()) == 0;
	if (!r->formed) {
		dist_failed();
		return r->size ? survivors_after_failed_start(o->train.out, o->train.shrink, r->rank,
							      r->size, &r->saved) : 1;
	}
	if (resume_keep_global_batch(o, dist_size(), dist_rank() == 0, &kept)) {
		dist_shutdown();
		return 2;
	}
	if (!o->train.out && run_name_new(name)) {
		dist_shutdown();
		return 1;
	}
	if (!o->train.out && dist_rank() == 0)
		fprintf(stderr, "chexnet: train: no --out: the run is kept in '%s'\n", name);
	o->train.out = o->train.out ? o->train.out : name;
	struct run_settings record;
	struct trainer_error err = { "" };
	struct train_config config = o->train;
	*target = *target ? *target : kept ? kept : o->train.accumulate * dist_size();
	config.micro_batches_kept = *target;
	config.record = &record;
	config.write_test = eval_write_test;
	config.recovery = &recovery;
	int status = record_of(o, &record, &err) ? fprintf(stderr, "chexnet: train: %s\n", err.msg), 1
		     : train_run(&config);
	if (named && status && dist_rank() == 0)
		rmdir(name);   /* only when the run left nothing in it */
	if (dist_rank() == 0 && status == 0 && (named || o->train.progress != PROGRESS_QUIET))
		fprintf(stderr, "chexnet: train: the run is kept in '%s' (run.json says how it "
			"ended; best/ for eval and predict, last/ for --resume)\n", o->train.out);
	if (dist_shutdown() && status == 0) {
		dist_failed();
		status = 1;
	}
	return status;
}

/* The run's sessions: the first from the command line (a spare's rank,
 * --join: the world it joins), then one more in this process after each
 * lost peer that the ranks left go on from (--shrink), up to the
 * runtime's own limit on losses. The stop signals' handlers stay from the
 * first session's start to the last one's end: a SIGTERM or SIGUSR1
 * between two sessions stops the next one at its first step, with a
 * checkpoint, rather than killing the process. */
/* --print-config: what this command line, its recipe and --resume's
 * record set, as a recipe. */
static int print_config(const struct settings *given)
{
	struct settings o = *given;
	int usage = train_options_check(&o);

	if (usage)
		return usage;
	config_file_print(stdout, &o);
	return fflush(stdout) ? 1 : 0;
}

int run_train(const struct settings *given)
{
	struct settings run = *given, next;
	char name[RUN_NAME_MAX];   /* a new run's folder: run.out points here */
	long target = 0;           /* micro-batches per step the run keeps to */
	static struct rejoined r;  /* srun's world first */
	int status = 0;

	if (given->print_config)
		return print_config(given);
	if (given->train.spares && !given->train.shrink) {
		fprintf(stderr, "chexnet: train: --spares: only with --shrink\n");
		return 2;
	}
	if (stop_signal_install(1)) {
		fprintf(stderr, "chexnet: train: cannot install the SIGTERM/SIGUSR1/SIGINT handlers: %s\n",
			strerror(errno));
		return 1;
	}
	if (given->relaunch && (status = go_on_relaunch(given, &next)) == 0)
		run = next;
	if (status == 0 && run.join && (status = go_on_join(&run, &target, &r, &next)) == 0)
		run = next;
	if (status == 0)
		status = train_session(&run, name, &r, &target);
	while (status == CHEXNET_EXIT_PEER_LOST && run.train.shrink &&
	       (status = go_on_in_process(&run, &target, &r, &next)) == 0) {
		run = next;
		status = train_session(&run, name, &r, &target);
		if (status == 0 && dist_rank() == 0)
			survivors_mark_finished(run.train.out);   /* for the driver: srun waits on the lost node */
	}
	stop_signal_uninstall();
	return status == GO_ON_WITHOUT_IT ? 0 : status;
}
