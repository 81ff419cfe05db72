/* chunk_tune.c - see chunk_tune.h. */
#include "chunk_tune.h"

uint64_t chunk_tune_size(int index)
{
	return ((uint64_t)1 << 20) << (2 * index);
}

int chunk_tune_index(uint64_t bytes)
{
	for (int k = 0; k < CHUNK_TUNE_SIZES; k++)
		if (chunk_tune_size(k) == bytes)
			return k;
	return -1;
}

void chunk_tune_init(struct chunk_tune *t)
{
	*t = (struct chunk_tune){ .cur = CHUNK_TUNE_START, .trial = CHUNK_TUNE_START,
				  .phase = TUNE_MEASURE };
}

uint64_t chunk_tune_next(const struct chunk_tune *t)
{
	return chunk_tune_size(t->trial);
}

static void settle(struct chunk_tune *t)
{
	t->phase = TUNE_SETTLED;
	t->trial = t->cur;
	t->settled = 0;
}

static void probe(struct chunk_tune *t, int dir)
{
	t->phase = TUNE_PROBE;
	t->dir = dir;
	t->trial = t->cur + dir;
}

static int in_range(int i)
{
	return i >= 0 && i < CHUNK_TUNE_SIZES;
}

/* A window's figure for t->trial. */
static void judge(struct chunk_tune *t, double rate)
{
	switch (t->phase) {
	case TUNE_MEASURE:
		t->ref = rate;
		t->moved = 0;
		if (in_range(t->cur + 1))
			probe(t, +1);
		else if (in_range(t->cur - 1))
			probe(t, -1);
		else
			settle(t);
		return;
	case TUNE_PROBE:
		if (rate > t->ref * CHUNK_TUNE_GAIN) {
			if (!t->moved)
				t->moves++;
			t->cur = t->trial;
			t->ref = rate;
			t->moved = 1;
			if (in_range(t->cur + t->dir))
				probe(t, t->dir);
			else
				settle(t);
		} else if (t->dir > 0 && !t->moved && in_range(t->cur - 1)) {
			probe(t, -1);
		} else {
			settle(t);
		}
		return;
	case TUNE_SETTLED:
		if (++t->settled >= CHUNK_TUNE_SETTLED) {
			t->phase = TUNE_MEASURE;
			t->trial = t->cur;
		}
		return;
	}
}

void chunk_tune_observe(struct chunk_tune *t, uint64_t chunk, uint64_t bytes, double seconds)
{
	if (bytes <= chunk_tune_size(0) || chunk != chunk_tune_size(t->trial) || !(seconds > 0))
		return;
	t->bytes += bytes;
	t->seconds += seconds;
	if (t->bytes < CHUNK_TUNE_WINDOW)
		return;
	double rate = (double)t->bytes / t->seconds;
	t->bytes = 0;
	t->seconds = 0;
	judge(t, rate);
}
