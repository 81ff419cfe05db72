/* loop/evaluate.h - one pass over a split in eval mode on every rank, and
 * what it found (loss, AUROC, optionally the gathered outputs).
 * What this is not: the report or the thresholds (cmd/, loop/thresholds.h).
 */
#ifndef HVD_TRAINER_LOOP_EVALUATE_H
#define HVD_TRAINER_LOOP_EVALUATE_H

#include "eval/auroc.h"
#include "loop/session.h"

struct evaluation {
	double loss;
	double auroc[CHEXNET_CLASSES];
	double mean_auroc;
	int defined;      /* classes with an AUROC */
	enum auroc_undefined why[CHEXNET_CLASSES];  /* per class: why no AUROC */
	size_t images;    /* images evaluated over all ranks */
	size_t nonfinite; /* NaN/±Inf logits among images x classes */
	float first_nonfinite;  /* the first of them (its kind: nan, inf, -inf) */
	/* Set keep_outputs before evaluate() to keep the gathered outputs
	 * (every rank): logits and labels (images, 14), patient ids (images;
	 * one image = one patient where the data has none). evaluation_free. */
	int keep_outputs;
	float *logits, *labels;
	uint32_t *patient;
};

void evaluation_free(struct evaluation *ev);

/* One pass over src in eval mode on every rank; the logits and labels of
 * every valid image (batch.count) are gathered from all ranks, so loss and
 * AUROC are exact over the split, each image once, and identical on every
 * rank. 0, -1 (printed), or EVAL_STOPPED when a stop request
 * (SIGTERM/SIGUSR1, agreed over ranks after every batch) ended the pass
 * early: nothing is computed then. */
#define EVAL_STOPPED 1
int evaluate(struct session *s, struct source *src, const float *w_pos, const float *w_neg,
	     struct evaluation *ev);

#endif
