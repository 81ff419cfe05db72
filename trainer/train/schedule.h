/* schedule.h - the learning rate over training: linear scaling by the
 * micro-batches of a step, ranks x accumulation (`--lr-scale linear`,
 * R1), linear warm-up over the first epochs, and reduce-on-plateau (x0.1 when the validation loss has not improved
 * for more than `patience` epochs, torch's ReduceLROnPlateau: relative
 * threshold 1e-4, no cooldown).
 * Warm-up ramps from the unscaled LR to the scaled one (Goyal et al.
 * 2017); with no scaling it ramps from 0.1 x LR. Pure: no I/O.
 * What this is not: the optimizer (optim.h).
 */
#ifndef HVD_TRAINER_SCHEDULE_H
#define HVD_TRAINER_SCHEDULE_H

#include "base/error.h"

enum lr_scale { LR_SCALE_NONE, LR_SCALE_LINEAR };

struct schedule {
	double base_lr;        /* 1e-3 */
	double scale;          /* 1, or the micro-batches per step (R x K) with LR_SCALE_LINEAR */
	double warmup_epochs;  /* 0 = none */
	int patience;          /* epochs without improvement tolerated */
	double factor;         /* 0.1 */
	double plateau_mult;   /* product of the reductions so far */
	double best_loss;      /* best validation loss (INFINITY at start) */
	int bad_epochs;
};

void schedule_init(struct schedule *s, double base_lr, enum lr_scale scale,
		   int micro_batches, double warmup_epochs, int patience);
/* LR at fractional epoch position (epoch + step/steps_per_epoch). */
double schedule_lr(const struct schedule *s, double epoch_position);
/* After each validation: 1 if the LR was just reduced, else 0. */
int schedule_epoch_end(struct schedule *s, double val_loss);

#endif
