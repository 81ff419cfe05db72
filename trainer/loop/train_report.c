/* loop/train_report.c - the training run's printed output (see
 * loop/train_report.h). Progress and notices go to stderr, the tables to
 * stdout; in --json mode events are JSON lines on stdout and the tables go
 * to stderr. What it does not do: decide when to print (loop/train.c).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "train/dist.h"
#include "train/progress.h"
#include "loop/train_report.h"
#include "train/stop_signal.h"

void train_window_start(struct train_window *w, const struct train_clock *c)
{
	memset(w, 0, sizeof(*w));
	w->t0 = now_seconds();
	w->wait0 = c->data_wait;
	w->reduce0 = c->allreduce_wait;
}

void train_window_rates(const struct train_window *w, const struct train_clock *c,
			double *images_per_s, double *data_wait, double *allreduce_wait)
{
	double seconds = now_seconds() - w->t0;

	*images_per_s = seconds > 0 ? w->images / seconds : 0;
	*data_wait = seconds > 0 ? (c->data_wait - w->wait0) / seconds : 0;
	*allreduce_wait = seconds > 0 ? (c->allreduce_wait - w->reduce0) / seconds : 0;
}

void train_window_add(struct train_window *w, long global_images)
{
	w->steps++;
	w->images += global_images;
}

void train_report_progress(const struct train_config *run, const struct train_window *w,
			   const struct train_clock *c, double loss, int epoch, long step,
			   long steps, double lr, long remaining_steps, int epoch_end)
{
	double seconds = now_seconds() - w->t0;

	if (run->progress == PROGRESS_QUIET || w->steps == 0)
		return;
	struct progress_point p = {
		.epoch_end = epoch_end, .epoch = epoch + 1, .epochs = (int)run->epochs,
		.step = step, .steps = steps, .loss = loss, .lr = lr,
		.images_per_s = seconds > 0 ? w->images / seconds : 0,
		.data_wait_pct = seconds > 0 ? 100.0 * (c->data_wait - w->wait0) / seconds : 0,
		.eta_s = remaining_steps * seconds / w->steps,
	};
	progress_print(run->progress == PROGRESS_JSON ? stdout : stderr, run->progress, &p);
}

void train_report_evaluation(const struct train_config *run, const char *what, int epoch,
			     const struct evaluation *ev)
{
	if (run->progress == PROGRESS_JSON)
		printf("{\"event\":\"%s\",\"epoch\":%d,\"images\":%zu,\"%s\":%.6g,\"mean_auroc\":%.6g,"
		       "\"auroc_classes\":%d}\n", what, epoch + 1, ev->images,
		       strcmp(what, "test") ? "val_loss" : "test_loss", ev->loss, ev->mean_auroc,
		       ev->defined);
	else if (run->progress == PROGRESS_TEXT && epoch >= 0)
		fprintf(stderr, "chexnet: epoch %d: %s loss %.4f, mean AUROC %.4f over %d classes "
			"(%zu images)\n", epoch + 1, what, ev->loss, ev->mean_auroc, ev->defined,
			ev->images);
	else if (run->progress == PROGRESS_TEXT)
		fprintf(stderr, "chexnet: %s split: loss %.4f, mean AUROC %.4f over %d classes "
			"(%zu images)\n", what, ev->loss, ev->mean_auroc, ev->defined, ev->images);
	fflush(stdout);
}

void train_report_table(const struct train_config *run, const char *split,
			const struct evaluation *ev)
{
	FILE *f = run->progress == PROGRESS_JSON ? stderr : stdout;

	if (run->progress == PROGRESS_QUIET)
		return;
	fprintf(f, "AUROC on %s (%zu images)\n", split, ev->images);
	auroc_print_table(f, ev->auroc, ev->why, CHEXNET_CLASSES);
}

void train_report_stop(const struct train_config *run, int sig, int epoch, long step,
		       int in_validation)
{
	const char *why = sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
			  : sig == SIGINT ? "SIGINT" : "stop requested on another rank";
	char where[96];

	if (dist_rank() != 0)
		return;
	if (in_validation)  /* the state is already the next epoch's start */
		snprintf(where, sizeof(where), "during the validation of epoch %d", epoch);
	else
		snprintf(where, sizeof(where), "at epoch %d step %ld", epoch + 1, step);
	if (run->out)
		fprintf(stderr, "chexnet: %s: stopped %s, checkpoint %s/last written; "
			"exit %d (continue with --resume %s%s)\n", why, where, run->out,
			CHEXNET_EXIT_PREEMPTED, run->out,
			in_validation ? ", which redoes that validation" : "");
	else
		fprintf(stderr, "chexnet: %s: stopped %s without a checkpoint (no --out); "
			"exit %d\n", why, where, CHEXNET_EXIT_PREEMPTED);
}

static double percent(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

int train_report_throughput(const struct train_config *run, const struct train_clock *c)
{
	int world = dist_size();
	float mine[4] = { (float)c->images, (float)c->seconds, (float)c->data_wait,
			  (float)c->allreduce_wait };
	float *all = calloc((size_t)world * 4, sizeof(float));
	size_t got = 0;

	if (!all || dist_allgather("train.clock", mine, 4, all, (size_t)world * 4, &got) ||
	    got != (size_t)world * 4) {
		fprintf(stderr, "%s\n", all ? dist_error() : "chexnet: out of memory");
		free(all);
		return -1;
	}
	double images = 0, longest = 0, wait = 0, reduce = 0, seconds = 0;
	for (int r = 0; r < world; r++) {
		const float *x = all + 4 * r;
		if (run->progress != PROGRESS_QUIET)
			fprintf(stderr, "chexnet: rank %d: %.1f images/s, data wait %.1f%%, "
				"allreduce wait %.1f%% of step time\n", r, x[1] > 0 ? x[0] / x[1] : 0,
				percent(x[2], x[1]), percent(x[3], x[1]));
		images += x[0];
		longest = x[1] > longest ? x[1] : longest;
		seconds += x[1];
		wait += x[2];
		reduce += x[3];
	}
	if (run->progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: overall: %.1f images/s on %d rank%s, data wait %.1f%%, "
			"allreduce wait %.1f%% of step time\n", longest > 0 ? images / longest : 0,
			world, world == 1 ? "" : "s", percent(wait, seconds), percent(reduce, seconds));
	free(all);
	return 0;
}
