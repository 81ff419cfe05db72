/* schedule.c - LR scaling, warm-up and reduce-on-plateau arithmetic.
 * What it does not do: decide when epochs end (the training loop).
 */
#include <math.h>
#include <string.h>

#include "train/schedule.h"

void schedule_init(struct schedule *s, double base_lr, enum lr_scale scale,
		   int micro_batches, double warmup_epochs, int patience)
{
	memset(s, 0, sizeof(*s));
	s->base_lr = base_lr;
	s->scale = (scale == LR_SCALE_LINEAR && micro_batches > 1) ? micro_batches : 1.0;
	s->warmup_epochs = warmup_epochs;
	s->patience = patience;
	s->factor = 0.1;
	s->plateau_mult = 1.0;
	s->best_loss = INFINITY;
}

double schedule_lr(const struct schedule *s, double epoch_position)
{
	double target = s->base_lr * s->scale * s->plateau_mult;

	if (s->warmup_epochs <= 0 || epoch_position >= s->warmup_epochs)
		return target;
	double start = s->scale > 1 ? target / s->scale : 0.1 * target;
	return start + (target - start) * epoch_position / s->warmup_epochs;
}

int schedule_epoch_end(struct schedule *s, double val_loss)
{
	if (val_loss < s->best_loss * (1.0 - 1e-4)) {
		s->best_loss = val_loss;
		s->bad_epochs = 0;
		return 0;
	}
	if (++s->bad_epochs <= s->patience)
		return 0;
	s->plateau_mult *= s->factor;
	s->bad_epochs = 0;
	return 1;
}

