/* cmd/eval.c - `chexnet eval`: the checkpoint's model on a split (under
 * srun each rank evaluates its share and rank 0 prints): loss and the
 * per-class AUROC table beside the CheXNet paper's, the report and plots.
 * What it does not do: the pass itself (loop/evaluate.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "train/checkpoint.h"
#include "train/dist.h"
#include "cmd/run.h"
#include "cmd/config.h"
#include "loop/session.h"
#include "loop/evaluate.h"
#include "cmd/checkpoint_defaults.h"
#include "cmd/eval_command.h"
#include "train/stop_signal.h"

/* The evaluation finished but some scores are NaN/±Inf: say so, fail. */
static int report_nonfinite(const char *checkpoint, const struct evaluation *ev, int rank)
{
	if (rank == 0)
		fprintf(stderr, "chexnet: eval: '%s': %zu of %zu scores are %g: the model's outputs "
			"are not finite (a diverged checkpoint?)\n", checkpoint, ev->nonfinite,
			ev->images * CHEXNET_CLASSES, ev->first_nonfinite);
	return 1;
}

/* The split's pass once the model is loaded: the table, or why not.
 * Returns the exit status. */
static int eval_split(const struct settings *o, const struct eval_config *c,
		      struct session *s, struct source *src, int rank)
{
	struct evaluation ev = { .keep_outputs = 1 };
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	struct source_layout layout = { .rank = rank, .world = dist_size(), .accumulate = 1 };

	if (class_weights(&c->data, wp, wn) ||
	    source_open(src, &c->session, &c->data, strcmp(c->split, "val") == 0 ? DATA_VAL : DATA_TEST,
			&layout))
		return 1;
	stop_signal_listen();  /* the backend's and loader's threads keep them blocked */
	int rc = evaluate(s, src, c->weighted_loss ? wp : NULL, c->weighted_loss ? wn : NULL, &ev);
	if (rc == EVAL_STOPPED || (rc && stop_signal_received())) {
		if (rank == 0)
			fprintf(stderr, "chexnet: eval: interrupted (%s): no result; exit %d\n",
				stop_signal_received() == SIGUSR1 ? "SIGUSR1" : "SIGTERM",
				CHEXNET_EXIT_PREEMPTED);
		return CHEXNET_EXIT_PREEMPTED;
	}
	if (rc)
		return 1;
	if (ev.nonfinite) {
		if (rank == 0) {
			printf("loss %.6f\n", ev.loss);
			auroc_print_table(stdout, ev.auroc, ev.why, CHEXNET_CLASSES);
		}
		rc = report_nonfinite(c->checkpoint, &ev, rank);
	} else if (rank == 0) {
		rc = eval_present(o, s->model.desc.name, &ev);
	}
	evaluation_free(&ev);
	return rc;
}

static int eval_command(const struct settings *o)
{
	struct session s;
	struct source src;
	struct trainer_error err = { "" };
	struct eval_config c = eval_config_of(o);
	int status = 1;

	memset(&src, 0, sizeof(src));
	c.session.params_given = 1;   /* the checkpoint's, loaded strictly */
	if (session_open(&s, &c.session))
		return 1;
	if (checkpoint_load_model(c.checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err))
		fprintf(stderr, "chexnet: %s\n", err.msg);
	else
		status = eval_split(o, &c, &s, &src, dist_rank());
	source_close(&src);
	session_close(&s);
	return status;
}

/* Under srun every rank evaluates its share of the split (the runtime
 * started as for training); alone, the whole split. */
int run_eval(const struct settings *given)
{
	struct settings run = *given, *o = &run;

	if (!o->checkpoint || (!o->train.data.dir == !o->synthetic)) {
		fprintf(stderr, "chexnet: eval: need --checkpoint DIR and one of --data DIR, --synthetic\n");
		return 2;
	}
	int usage = eval_options_check(o);
	if (!usage)
		usage = checkpoint_defaults(&run);
	if (usage)
		return usage;
	if (stop_signal_install(0)) {
		fprintf(stderr, "chexnet: eval: cannot install the SIGTERM/SIGUSR1 handlers: %s\n",
			strerror(errno));
		return 1;
	}
	if (dist_init()) {
		fprintf(stderr, "%s\n", dist_error());
		stop_signal_uninstall();
		return 1;
	}
	int status = eval_command(o);
	if (dist_shutdown() && status == 0) {
		fprintf(stderr, "%s\n", dist_error());
		status = 1;
	}
	stop_signal_uninstall();
	return status;
}
