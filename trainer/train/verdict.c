/* train/verdict.c - the per-step agreement vector and its verdict
 * (see train/verdict.h). What it does not do: communicate.
 */
#include "train/verdict.h"

void train_verdict_pack(float stats[TRAIN_STATS], int stop, int found_inf)
{
	stats[TRAIN_STAT_STOP] = stop ? 1.0f : 0.0f;
	stats[TRAIN_STAT_INF] = found_inf ? 1.0f : 0.0f;
}

void train_verdict_read(const float averaged[TRAIN_STATS], struct train_verdict *v)
{
	v->stop = averaged[TRAIN_STAT_STOP] > 0.0f;
	/* a NaN average (a rank sent garbage) must not pass for "clean" */
	v->skip = !(averaged[TRAIN_STAT_INF] <= 0.0f);
}
