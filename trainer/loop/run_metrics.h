/* loop/run_metrics.h - rank 0's metrics of a training run in OUT: a row
 * of OUT/metrics.csv (train/metrics_csv.h) and the same values in a
 * TensorBoard event file in OUT/tb/ (train/tb_events.h) at every
 * progress line (tags train/loss, train/lr, train/images_per_s,
 * train/data_wait, train/allreduce_wait) and every validation
 * (val/loss, val/mean_auroc, val/auroc/CLASS), at the optimizer step
 * counted from the run's start. Event values are the float32 of the
 * CSV's text. On --resume, rows after the checkpoint's step are dropped
 * (the file rewritten whole, atomically) and a new event file starts with
 * a SessionLog START at the next step, so TensorBoard drops the orphaned
 * points; an existing metrics.csv or event file that does not read back
 * is refused before anything changes, except a last record cut short (a
 * short write: a full disk, a node dying mid-append), which is dropped
 * with one line per file once both read back. A row or event is
 * appended only while the process's generation is the newest
 * (base/fence.h): a process a newer generation went on without adds
 * nothing to either.
 * What this is not: the formats, or when rows come (loop/train.c).
 */
#ifndef HVD_TRAINER_LOOP_RUN_METRICS_H
#define HVD_TRAINER_LOOP_RUN_METRICS_H

#include <stdio.h>

#include "loop/evaluate.h"

struct run_metrics {
	FILE *csv, *tb;
	char out[4096];            /* the run folder */
	long global_batch;         /* images per optimizer step */
	int best_epoch;            /* --resume: the kept rows' lowest val_loss epoch (0: none) */
};

/* resume_step: the checkpoint's step (from the run's start), or -1 for a
 * new run; ranks: this session's, the TensorBoard series run/ranks at
 * its first step (a lost node shows as a drop); hosts_lost: the hosts
 * lost since the session before (run/hosts_lost: a spare that took a
 * lost node's place shows there, run/ranks staying). 0 or -1 (printed). */
/* --resume (resume_step >= 0): metrics.csv and tb/'s events read back
 * (a torn last record passes: run_metrics_open drops it), changing
 * nothing. 0 or -1 (printed). */
int run_metrics_check(const char *out, long resume_step);

/* metrics.csv and tb/ named to the fence as appended in place (every
 * claim copies them afresh: base/fence.h); run_metrics_open does it too.
 * A claimant calls it before its claim. */
void run_metrics_fence(void);

int run_metrics_open(struct run_metrics *m, const char *out, long global_batch,
		     long resume_step, int ranks, int hosts_lost);

/* shares: of step time, 0..1. 0 or -1 (printed). A closed m: nothing. */
int run_metrics_train(struct run_metrics *m, int epoch, long step, double loss, double lr,
		      double images_per_s, double data_wait, double allreduce_wait);
int run_metrics_val(struct run_metrics *m, int epoch, long step, const struct evaluation *ev);

void run_metrics_close(struct run_metrics *m);

#endif
