/* run_train.c - `chexnet train` and `chexnet eval`: the training loop
 * (forward, weighted BCE, backward, optimizer, LR schedule, progress,
 * validation, checkpoints OUT/last and OUT/best) and evaluation (loss and
 * the per-class AUROC table beside the CheXNet paper's).
 * What it does not do: parse options (cli.c) or compute layers (backends).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auroc.h"
#include "checkpoint.h"
#include "loss.h"
#include "run.h"
#include "run_common.h"

struct evaluation {
	double loss;
	double auroc[CHEXNET_CLASSES];
	double mean_auroc;
	int defined;
};

/* One pass over src in eval mode: mean loss and AUROC over valid images. */
static int evaluate(struct session *s, struct source *src, const float *wp, const float *wn,
		    struct evaluation *ev)
{
	size_t cap = 1024, n = 0;
	float *scores = malloc(cap * CHEXNET_CLASSES * sizeof(float));
	float *labels = malloc(cap * CHEXNET_CLASSES * sizeof(float));
	float logits[4096 * CHEXNET_CLASSES];
	struct trainer_error err = { "" };
	struct batch *b;
	double wait, loss_sum = 0;
	int rc;

	while (scores && labels && (rc = source_next(src, &b, &wait)) == 1) {
		struct backend_input in = { .images = b, .count = b->count };
		if (s->ops->forward(s->backend, &in, 0, logits, &err)) {
			source_release(src, b);
			fprintf(stderr, "chexnet: %s\n", err.msg);
			rc = -1;
			break;
		}
		loss_sum += loss_bce(logits, b->labels, b->count, CHEXNET_CLASSES, wp, wn, NULL) * b->count;
		if (n + (size_t)b->count > cap) {
			cap = 2 * (n + (size_t)b->count);
			scores = realloc(scores, cap * CHEXNET_CLASSES * sizeof(float));
			labels = realloc(labels, cap * CHEXNET_CLASSES * sizeof(float));
		}
		for (int i = 0; scores && labels && i < b->count * CHEXNET_CLASSES; i++) {
			scores[n * CHEXNET_CLASSES + i] = logits[i];
			labels[n * CHEXNET_CLASSES + i] = b->labels[i];
		}
		n += (size_t)b->count;
		source_release(src, b);
	}
	if (rc == 0 && n) {
		ev->loss = loss_sum / (double)n;
		ev->mean_auroc = auroc_all(scores, labels, n, CHEXNET_CLASSES, ev->auroc, &ev->defined);
	}
	free(scores);
	free(labels);
	return rc == 0 && n ? 0 : -1;
}

struct trainer {
	const struct cli_options *o;
	struct session s;
	struct optim optim;
	struct schedule sched;
	struct train_state state;
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	float *logits, *dlogits;
	long total_steps;
	double started;
};

/* One optimizer step on b; returns the loss or NAN on error. */
static double train_step(struct trainer *t, struct batch *b, double lr)
{
	struct session *s = &t->s;
	struct trainer_error err = { "" };
	struct backend_input in = { .images = b, .count = b->count };
	const float *wp = t->o->weighted_loss ? t->wp : NULL, *wn = t->o->weighted_loss ? t->wn : NULL;

	if (s->ops->forward(s->backend, &in, 1, t->logits, &err))
		goto fail;
	double loss = loss_bce(t->logits, b->labels, b->count, CHEXNET_CLASSES, wp, wn, t->dlogits);
	if (s->ops->backward(s->backend, t->dlogits, NULL, NULL, NULL, &err))
		goto fail;
	optim_step(&t->optim, s->model.params, s->model.grads, lr);
	s->model.batches_tracked++;
	if (s->ops->load_params(s->backend, &err))
		goto fail;
	return loss;
fail:
	fprintf(stderr, "chexnet: %s\n", err.msg);
	return NAN;
}

static void report(struct trainer *t, int epoch, long step, long steps, double loss, double lr,
		   long images, double seconds, double wait, int epoch_end)
{
	long remaining = (t->o->epochs - epoch - 1) * steps + (steps - step);
	if (t->o->steps)
		remaining = t->o->steps - t->total_steps;
	struct progress_point p = {
		.epoch_end = epoch_end, .epoch = epoch + 1, .epochs = (int)t->o->epochs,
		.step = step, .steps = steps, .loss = loss, .lr = lr,
		.images_per_s = seconds > 0 ? images / seconds : 0,
		.data_wait_pct = seconds > 0 ? 100.0 * wait / seconds : 0,
		.eta_s = images ? remaining * (seconds / images) * t->o->batch : 0,
	};
	progress_print(t->o->progress == PROGRESS_JSON ? stdout : stderr, t->o->progress, &p);
}

/* One epoch; 1 if --steps was reached, 0 otherwise, -1 on error. */
static int train_epoch(struct trainer *t, struct source *src, int epoch)
{
	long steps = source_batches_per_epoch(src), step = 0, images = 0;
	double t0 = now_seconds(), wait_sum = 0, loss_sum = 0, wait;
	int since = 0, rc;
	struct batch *b;

	while ((rc = source_next(src, &b, &wait)) == 1) {
		double lr = schedule_lr(&t->sched, epoch + (double)step / (steps ? steps : 1));
		double loss = train_step(t, b, lr);
		source_release(src, b);
		if (isnan(loss))
			return -1;
		step++;
		t->total_steps++;
		images += t->o->batch;
		wait_sum += wait;
		loss_sum += loss;
		since++;
		int last = step == steps || (t->o->steps && t->total_steps >= t->o->steps);
		if (step % t->o->progress_every == 0 || last) {
			report(t, epoch, step, steps, loss_sum / since, lr, images, now_seconds() - t0,
			       wait_sum, last);
			loss_sum = 0;
			since = 0;
		}
		if (t->o->steps && t->total_steps >= t->o->steps)
			return 1;
	}
	return rc < 0 ? -1 : 0;
}

static int save(struct trainer *t, const char *name)
{
	char dir[4096];
	struct trainer_error err = { "" };

	if (!t->o->out)
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", t->o->out, name);
	if (t->s.ops->store_state(t->s.backend, &err) ||
	    checkpoint_save(dir, &t->s.model, &t->optim, &t->sched, &t->state, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Validation, LR plateau, checkpoints after an epoch. */
static int end_of_epoch(struct trainer *t, struct source *val, int epoch, struct evaluation *ev)
{
	const float *wp = t->o->weighted_loss ? t->wp : NULL, *wn = t->o->weighted_loss ? t->wn : NULL;

	if (evaluate(&t->s, val, wp, wn, ev))
		return -1;
	int improved = ev->loss < t->state.best_val_loss;
	if (schedule_epoch_end(&t->sched, ev->loss) && t->o->progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: validation loss has not improved for %ld epochs: lr x0.1\n",
			t->o->patience + 1);
	if (t->o->progress == PROGRESS_JSON)
		printf("{\"event\":\"validation\",\"epoch\":%d,\"val_loss\":%.6g,\"mean_auroc\":%.6g,"
		       "\"auroc_classes\":%d}\n", epoch + 1, ev->loss, ev->mean_auroc, ev->defined);
	else if (t->o->progress == PROGRESS_TEXT)
		fprintf(stderr, "chexnet: epoch %d: validation loss %.4f, mean AUROC %.4f over %d classes\n",
			epoch + 1, ev->loss, ev->mean_auroc, ev->defined);
	t->state.epoch = epoch + 1;
	t->state.step = 0;
	if (improved) {
		t->state.best_val_loss = ev->loss;
		if (save(t, "best"))
			return -1;
	}
	return save(t, "last");
}

static int trainer_setup(struct trainer *t, const struct cli_options *o)
{
	struct trainer_error err = { "" };
	char note[256] = "";

	memset(t, 0, sizeof(*t));
	t->o = o;
	if (session_open(&t->s, o))
		return -1;
	if (o->init && checkpoint_load_model(o->init, &t->s.model, CHECKPOINT_INIT, note, &err))
		goto fail;
	if (note[0])
		fprintf(stderr, "chexnet: %s\n", note);
	if (t->s.ops->load_params(t->s.backend, &err) ||
	    optim_init(&t->optim, &o->optim, t->s.model.desc.param_count, &err))
		goto fail;
	schedule_init(&t->sched, o->lr, o->lr_scale, (int)o->world_size, o->warmup_epochs, (int)o->patience);
	t->state.best_val_loss = INFINITY;
	rng_seed(&t->state.rng, o->seed);
	t->logits = malloc((size_t)o->batch * CHEXNET_CLASSES * sizeof(float));
	t->dlogits = malloc((size_t)o->batch * CHEXNET_CLASSES * sizeof(float));
	if (o->out && mkdir(o->out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "chexnet: --out: '%s': %s\n", o->out, strerror(errno));
		return -1;
	}
	return class_weights(o, t->wp, t->wn);
fail:
	fprintf(stderr, "chexnet: %s\n", err.msg);
	return -1;
}

static void trainer_free(struct trainer *t)
{
	optim_free(&t->optim);
	free(t->logits);
	free(t->dlogits);
	session_close(&t->s);
}

int run_train(const struct cli_options *o)
{
	struct trainer t;
	struct source train, val;
	struct evaluation ev = { 0 };
	int rc = -1, trained = 0;

	if (!o->data == !o->synthetic) {
		fprintf(stderr, "chexnet: train: need exactly one of --data DIR and --synthetic\n");
		return 2;
	}
	memset(&train, 0, sizeof(train));
	memset(&val, 0, sizeof(val));
	if (trainer_setup(&t, o) == 0 && source_open(&train, o, DATA_TRAIN) == 0 &&
	    source_open(&val, o, DATA_VAL) == 0) {
		rc = 0;
		for (int epoch = 0; epoch < o->epochs && rc == 0; epoch++) {
			int r = train_epoch(&t, &train, epoch);
			trained = 1;
			if (r < 0 || end_of_epoch(&t, &val, epoch, &ev))
				rc = -1;
			if (r == 1)
				break;
		}
	}
	if (rc == 0 && trained && o->progress != PROGRESS_QUIET)
		auroc_print_table(o->progress == PROGRESS_JSON ? stderr : stdout, ev.auroc,
				  CHEXNET_CLASSES);
	source_close(&train);
	source_close(&val);
	trainer_free(&t);
	return rc == 0 ? 0 : 1;
}

int run_eval(const struct cli_options *o)
{
	struct session s;
	struct source src;
	struct evaluation ev = { 0 };
	struct trainer_error err = { "" };
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	int rc = -1;

	if (!o->checkpoint || (!o->data == !o->synthetic)) {
		fprintf(stderr, "chexnet: eval: need --checkpoint DIR and one of --data DIR, --synthetic\n");
		return 2;
	}
	memset(&src, 0, sizeof(src));
	if (session_open(&s, o))
		return 1;
	if (checkpoint_load_model(o->checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err))
		fprintf(stderr, "chexnet: %s\n", err.msg);
	else if (class_weights(o, wp, wn) == 0 &&
		 source_open(&src, o, strcmp(o->split, "val") == 0 ? DATA_VAL : DATA_TEST) == 0 &&
		 evaluate(&s, &src, o->weighted_loss ? wp : NULL, o->weighted_loss ? wn : NULL, &ev) == 0) {
		printf("loss %.6f\n", ev.loss);
		auroc_print_table(stdout, ev.auroc, CHEXNET_CLASSES);
		rc = 0;
	}
	source_close(&src);
	session_close(&s);
	return rc == 0 ? 0 : 1;
}
