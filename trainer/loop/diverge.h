/* loop/diverge.h - divergence: a NaN/±Inf training loss, parameter
 * or BN statistic, or validation loss/score stops the run with one line
 * naming where (epoch, step), what, the value and a hint, before any
 * checkpoint is written from that state (so OUT/last and OUT/best stay
 * the last ones written from finite weights).
 * What this is not: fp16 overflow handling (skipped steps with a halved
 * loss scale, train/verdict.h), which is not divergence.
 */
#ifndef HVD_TRAINER_RUN_TRAIN_DIVERGE_H
#define HVD_TRAINER_RUN_TRAIN_DIVERGE_H

#include <stddef.h>


/* Where the run is, for the message: step 0 means "at the epoch's end". */
struct diverge_at {
	int epoch;   /* 0-based */
	long step;   /* 1-based step within the epoch, or 0 */
};

/* 1 (and the line on stderr when loud) if value is not finite (lr: the
 * run's --lr, named in the hint):
 * `chexnet: epoch 2, step 5: training loss is nan: the model diverged;
 * lower --lr (now 100) or use --warmup-epochs`. */
int diverge_check(double lr, const struct diverge_at *at, const char *what, double value,
		  int loud);
/* The first non-finite value of v[count] as diverge_check reports it, or 0. */
int diverge_check_array(double lr, const struct diverge_at *at, const char *what,
			const float *v, size_t count, int loud);

#endif
