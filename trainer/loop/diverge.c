/* loop/diverge.c - the divergence checks and their one line (see
 * loop/diverge.h). What it does not do: decide what the run does
 * next (loop/train.c stops without writing a checkpoint).
 */
#include <math.h>
#include <stdio.h>

#include "loop/diverge.h"

int diverge_check(double lr, const struct diverge_at *at, const char *what, double value,
		  int loud)
{
	char where[64];

	if (isfinite(value))
		return 0;
	if (!loud)
		return 1;
	if (at->step)
		snprintf(where, sizeof(where), "epoch %d, step %ld", at->epoch + 1, at->step);
	else
		snprintf(where, sizeof(where), "epoch %d", at->epoch + 1);
	fprintf(stderr, "chexnet: %s: %s %s: the model diverged; lower --lr (now %g) or use "
		"--warmup-epochs\n", where, what, isnan(value) ? "nan" : value > 0 ? "inf" : "-inf",
		lr);
	return 1;
}

int diverge_check_array(double lr, const struct diverge_at *at, const char *what,
			const float *v, size_t count, int loud)
{
	for (size_t i = 0; i < count; i++)
		if (!isfinite(v[i]))
			return diverge_check(lr, at, what, v[i], loud);
	return 0;
}
