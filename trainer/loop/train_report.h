/* loop/train_report.h - what `chexnet train` prints (rank 0 only; the
 * config passed is rank 0's, other ranks have PROGRESS_QUIET): progress
 * lines over a window of steps, validation/test results, the AUROC table,
 * the stop notice, and at the end images/s per rank and overall, data-wait %
 * and the allreduce share of step time (gathered from every rank: every
 * rank must call train_report_throughput).
 * What this is not: the training loop (loop/train.c) or line formats
 * (progress.h, auroc.h).
 */
#ifndef HVD_TRAINER_RUN_TRAIN_REPORT_H
#define HVD_TRAINER_RUN_TRAIN_REPORT_H

#include "train/settings.h"
#include "loop/evaluate.h"

/* This rank, over the whole run. */
struct train_clock {
	double seconds;          /* in training steps (data wait included) */
	double data_wait;        /* waiting for the input pipeline */
	double allreduce_wait;   /* after backward, until gradients were averaged */
	long images;             /* this rank's images */
};

/* Steps since the last progress line. */
struct train_window {
	double t0, wait0, reduce0;
	long steps, images;      /* images: over all ranks */
};

void train_window_start(struct train_window *w, const struct train_clock *c);
void train_window_add(struct train_window *w, long global_images);
/* The window's images/s (over all ranks) and this rank's data and
 * allreduce wait as shares (0..1) of its time. */
void train_window_rates(const struct train_window *w, const struct train_clock *c,
			double *images_per_s, double *data_wait, double *allreduce_wait);

/* loss: the window's mean training loss over every rank. */
void train_report_progress(const struct train_config *run, const struct train_window *w,
			   const struct train_clock *c, double loss, int epoch, long step,
			   long steps, double lr, long remaining_steps, int epoch_end);
/* what: "validation" (epoch >= 0) or "test" (epoch -1). */
void train_report_evaluation(const struct train_config *run, const char *what, int epoch,
			     const struct evaluation *ev);
/* split: what the table is of, said in its title line. */
void train_report_table(const struct train_config *run, const char *split,
			const struct evaluation *ev);
/* sig: the signal this rank received, 0 when another rank's stopped the run;
 * in_validation: during the validation of epoch `epoch` (1-based there:
 * the state already points at the next epoch). */
void train_report_stop(const struct train_config *run, int sig, int epoch, long step,
		       int in_validation);
/* Collective. 0, or -1 when the gather failed (printed). */
int train_report_throughput(const struct train_config *run, const struct train_clock *c);

#endif
