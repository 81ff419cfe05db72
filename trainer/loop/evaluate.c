/* loop/evaluate.c - one evaluation pass over a split on every rank: the
 * valid images' logits and labels gathered from all ranks (allgatherv),
 * loss and exact AUROC over the whole split, each image once.
 * What it does not do: report, choose thresholds or plot (cmd/eval.c,
 * cmd/eval_command.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "model/loss.h"
#include "train/dist.h"
#include "train/stop_signal.h"
#include "loop/evaluate.h"

struct outputs {
	float *logits, *labels;  /* (n, 14) each */
	float *patient;          /* (n) patient ids, the uint32 bits carried in floats */
	size_t n, capacity;
};

static int outputs_append(struct outputs *out, const float *logits, const struct batch *b)
{
	size_t need = out->n + (size_t)b->count;

	if (need > out->capacity) {
		size_t cap = 2 * need;
		float *l = realloc(out->logits, cap * CHEXNET_CLASSES * sizeof(float));
		if (l)
			out->logits = l;
		float *y = realloc(out->labels, cap * CHEXNET_CLASSES * sizeof(float));
		if (y)
			out->labels = y;
		float *p = realloc(out->patient, cap * sizeof(float));
		if (p)
			out->patient = p;
		if (!l || !y || !p)
			return -1;
		out->capacity = cap;
	}
	size_t floats = (size_t)b->count * CHEXNET_CLASSES;
	memcpy(out->logits + out->n * CHEXNET_CLASSES, logits, floats * sizeof(float));
	memcpy(out->labels + out->n * CHEXNET_CLASSES, b->labels, floats * sizeof(float));
	/* no patient ids (synthetic data): one image = one patient */
	memcpy(out->patient + out->n, b->patient ? b->patient : b->index,
	       (size_t)b->count * sizeof(uint32_t));
	out->n = need;
	return 0;
}

/* A stop request (SIGTERM/SIGUSR1) on any rank, agreed after every batch
 * (every rank has the same number of eval batches: the loader pads), so
 * all ranks leave the pass together: 1 stop, 0 go on, -1 error. */
static int stop_agreed(int world)
{
	float flag = stop_signal_received() ? 1.0f : 0.0f;

	if (world > 1 && dist_average("eval.stop", &flag, 1)) {
		fprintf(stderr, "%s\n", dist_error());
		return -1;
	}
	return flag > 0;
}

/* This rank's batches in eval mode; padded images (past batch.count) are
 * not run. 0 done, EVAL_STOPPED on a stop request, -1 on error. */
static int forward_pass(struct session *s, struct source *src, struct outputs *out)
{
	struct trainer_error err = { "" };
	float *logits = malloc((size_t)src->batch * CHEXNET_CLASSES * sizeof(float));
	struct batch *b;
	double wait;
	int rc;

	if (!logits)
		return -1;
	while ((rc = source_next(src, &b, &wait)) == 1) {
		int bad = 0;
		if (b->count > 0) {
			struct backend_input in = { .images = b, .count = b->count };
			bad = s->ops->forward(s->backend, &in, 0, logits, &err);
			if (bad)
				fprintf(stderr, "chexnet: %s\n", err.msg);
			else if (outputs_append(out, logits, b))
				bad = fprintf(stderr, "chexnet: evaluation: out of memory\n");
		}
		source_release(src, b);
		int stop = bad ? -1 : stop_agreed(src->world);
		if (stop) {
			rc = stop < 0 ? -1 : EVAL_STOPPED;
			break;
		}
	}
	free(logits);
	return rc;
}

/* Every rank's outputs, rank 0's first, into all (capacity images). */
static int gather(const struct outputs *mine, struct outputs *all)
{
	size_t floats = all->capacity * CHEXNET_CLASSES, got_l = 0, got_y = 0, got_p = 0;

	if (dist_allgather("eval.logits", mine->logits, mine->n * CHEXNET_CLASSES, all->logits,
			   floats, &got_l) ||
	    dist_allgather("eval.labels", mine->labels, mine->n * CHEXNET_CLASSES, all->labels,
			   floats, &got_y) ||
	    dist_allgather("eval.patients", mine->patient, mine->n, all->patient, all->capacity,
			   &got_p)) {
		fprintf(stderr, "%s\n", dist_error());
		return -1;
	}
	all->n = got_l / CHEXNET_CLASSES;
	return got_l == got_y && got_p == all->n ? 0 : -1;
}

/* How many scores are NaN/±Inf, and the first of them. */
static void count_nonfinite(const float *scores, size_t count, struct evaluation *ev)
{
	for (size_t i = 0; i < count; i++)
		if (!isfinite(scores[i]) && !ev->nonfinite++)
			ev->first_nonfinite = scores[i];
}

int evaluate(struct session *s, struct source *src, const float *wp, const float *wn,
	     struct evaluation *ev)
{
	struct outputs mine = { 0 }, all = { 0 };
	int rc = -1;

	all.capacity = source_images(src);
	all.logits = malloc((all.capacity + 1) * CHEXNET_CLASSES * sizeof(float));
	all.labels = malloc((all.capacity + 1) * CHEXNET_CLASSES * sizeof(float));
	all.patient = malloc((all.capacity + 1) * sizeof(float));
	if (!all.logits || !all.labels || !all.patient)
		fprintf(stderr, "chexnet: evaluation: out of memory\n");
	else
		rc = forward_pass(s, src, &mine);
	if (rc == 0 && (gather(&mine, &all) || all.n == 0))
		rc = -1;
	if (rc == 0) {
		int keep = ev->keep_outputs;
		evaluation_free(ev);   /* a previous pass's kept outputs */
		ev->images = all.n;
		ev->loss = loss_bce(all.logits, all.labels, (int)all.n, CHEXNET_CLASSES, wp, wn, NULL);
		ev->mean_auroc = auroc_all(all.logits, all.labels, all.n, CHEXNET_CLASSES, ev->auroc,
					   ev->why, &ev->defined);
		count_nonfinite(all.logits, all.n * CHEXNET_CLASSES, ev);
		if (keep) {   /* handed over: evaluation_free() */
			ev->keep_outputs = 1;
			ev->logits = all.logits;
			ev->labels = all.labels;
			ev->patient = (uint32_t *)(void *)all.patient;
			all.logits = all.labels = all.patient = NULL;
		}
	}
	free(mine.logits);
	free(mine.labels);
	free(mine.patient);
	free(all.logits);
	free(all.labels);
	free(all.patient);
	return rc;
}

void evaluation_free(struct evaluation *ev)
{
	free(ev->logits);
	free(ev->labels);
	free(ev->patient);
	memset(ev, 0, sizeof(*ev));
}
