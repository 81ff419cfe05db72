/* cmd/eval.c - evaluation: one pass over a split on every rank, the valid
 * images' logits and labels gathered from all ranks (allgatherv), loss and
 * exact AUROC over the whole split; and the `chexnet eval` command (loss
 * and the per-class AUROC table beside the CheXNet paper's; under srun
 * each rank evaluates its share and rank 0 prints).
 * What it does not do: training (cmd/train.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/auroc.h"
#include "train/checkpoint.h"
#include "train/dist.h"
#include "model/loss.h"
#include "cmd/run.h"
#include "cmd/common.h"

struct outputs {
	float *logits, *labels;  /* (n, 14) each */
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
		if (!l || !y)
			return -1;
		out->capacity = cap;
	}
	size_t floats = (size_t)b->count * CHEXNET_CLASSES;
	memcpy(out->logits + out->n * CHEXNET_CLASSES, logits, floats * sizeof(float));
	memcpy(out->labels + out->n * CHEXNET_CLASSES, b->labels, floats * sizeof(float));
	out->n = need;
	return 0;
}

/* This rank's batches in eval mode; padded images (past batch.count) are
 * not run. */
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
		if (bad) {
			rc = -1;
			break;
		}
	}
	free(logits);
	return rc;
}

/* Every rank's outputs, rank 0's first, into all (capacity images). */
static int gather(const struct outputs *mine, struct outputs *all)
{
	size_t floats = all->capacity * CHEXNET_CLASSES, got_l = 0, got_y = 0;

	if (dist_allgather("eval.logits", mine->logits, mine->n * CHEXNET_CLASSES, all->logits,
			   floats, &got_l) ||
	    dist_allgather("eval.labels", mine->labels, mine->n * CHEXNET_CLASSES, all->labels,
			   floats, &got_y)) {
		fprintf(stderr, "%s\n", dist_error());
		return -1;
	}
	all->n = got_l / CHEXNET_CLASSES;
	return got_l == got_y ? 0 : -1;
}

int evaluate(struct session *s, struct source *src, const float *wp, const float *wn,
	     struct evaluation *ev)
{
	struct outputs mine = { 0 }, all = { 0 };
	int rc = -1;

	all.capacity = source_images(src);
	all.logits = malloc((all.capacity + 1) * CHEXNET_CLASSES * sizeof(float));
	all.labels = malloc((all.capacity + 1) * CHEXNET_CLASSES * sizeof(float));
	if (!all.logits || !all.labels)
		fprintf(stderr, "chexnet: evaluation: out of memory\n");
	else if (forward_pass(s, src, &mine) == 0 && gather(&mine, &all) == 0 && all.n > 0) {
		memset(ev, 0, sizeof(*ev));
		ev->images = all.n;
		ev->loss = loss_bce(all.logits, all.labels, (int)all.n, CHEXNET_CLASSES, wp, wn, NULL);
		ev->mean_auroc = auroc_all(all.logits, all.labels, all.n, CHEXNET_CLASSES, ev->auroc,
					   &ev->defined);
		rc = 0;
	}
	free(mine.logits);
	free(mine.labels);
	free(all.logits);
	free(all.labels);
	return rc;
}

static int eval_command(const struct cli_options *o)
{
	struct session s;
	struct source src;
	struct evaluation ev = { 0 };
	struct trainer_error err = { "" };
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	struct source_layout layout = { .rank = dist_rank(), .world = dist_size(), .accumulate = 1 };
	int rc = -1;

	memset(&src, 0, sizeof(src));
	if (session_open(&s, o))
		return 1;
	if (checkpoint_load_model(o->checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err))
		fprintf(stderr, "chexnet: %s\n", err.msg);
	else if (class_weights(o, wp, wn) == 0 &&
		 source_open(&src, o, strcmp(o->split, "val") == 0 ? DATA_VAL : DATA_TEST,
			     &layout) == 0 &&
		 evaluate(&s, &src, o->weighted_loss ? wp : NULL, o->weighted_loss ? wn : NULL, &ev) == 0) {
		if (layout.rank == 0) {
			printf("loss %.6f\n", ev.loss);
			auroc_print_table(stdout, ev.auroc, CHEXNET_CLASSES);
		}
		rc = 0;
	}
	source_close(&src);
	session_close(&s);
	return rc == 0 ? 0 : 1;
}

/* Under srun every rank evaluates its share of the split (the runtime
 * started as for training); alone, the whole split. */
int run_eval(const struct cli_options *o)
{
	if (!o->checkpoint || (!o->data == !o->synthetic)) {
		fprintf(stderr, "chexnet: eval: need --checkpoint DIR and one of --data DIR, --synthetic\n");
		return 2;
	}
	if (dist_init()) {
		fprintf(stderr, "%s\n", dist_error());
		return 1;
	}
	int status = eval_command(o);
	if (dist_shutdown() && status == 0) {
		fprintf(stderr, "%s\n", dist_error());
		status = 1;
	}
	return status;
}
