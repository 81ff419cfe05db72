/* chunk_tune.h - the chunk size of agreed allreduce buckets, tuned by
 * rank 0 while the job runs (HVD_FUSION_CHUNK unset or `auto`). The best
 * size depends on where the ranks sit, not on the program: measured on
 * one 2-vCPU VM, the DenseNet-121 step ran fastest in 1-2 MiB pieces
 * while both vCPUs shared a cache (1.3x bare MPI) and in 16 MiB pieces
 * or whole while they did not (there 1 MiB pieces ran at 0.47x, 16 MiB at
 * 0.79x), and the machine moves between the two for tens of seconds.
 * So rank 0 measures the throughput of the agreed buckets larger than
 * 1 MiB (a window of CHUNK_TUNE_WINDOW bytes per figure) and climbs the
 * candidates 1 MiB x 4^k (1 .. 64 MiB; smaller pieces were slower at
 * every size there): it measures the current size, probes the next
 * larger one and, when that is not better by CHUNK_TUNE_GAIN, the next
 * smaller one, moves while a neighbour is better, and re-probes after
 * CHUNK_TUNE_SETTLED windows.
 * The size rides in the engines' vote (agree.c), so every rank reduces
 * a bucket in the same pieces. Pure: no clock, no locks; unit-tested.
 * What it does not do: time anything (engine.c) or tune buckets rank 0
 * planned itself (those use the starting size).
 */
#ifndef HVD_CHUNK_TUNE_H
#define HVD_CHUNK_TUNE_H

#include <stdint.h>

#define CHUNK_TUNE_SIZES 4                          /* 1, 4, 16, 64 MiB */
#define CHUNK_TUNE_START 0                          /* 1 MiB, as HVD_FUSION_CHUNK's default */
#define CHUNK_TUNE_WINDOW ((uint64_t)32 << 20)      /* bytes of buckets per figure */
#define CHUNK_TUNE_GAIN 1.05                        /* a neighbour must be 5% faster */
#define CHUNK_TUNE_SETTLED 32                       /* windows between re-probes */

enum chunk_tune_phase { TUNE_MEASURE, TUNE_PROBE, TUNE_SETTLED };

struct chunk_tune {
	int cur;                  /* index of the size in use */
	int trial;                /* index being measured */
	int dir;                  /* TUNE_PROBE: +1 larger, -1 smaller */
	int moved;                /* this round has moved (no turning back) */
	enum chunk_tune_phase phase;
	double ref;               /* bytes/s of cur in this round */
	uint64_t bytes;           /* the window so far */
	double seconds;
	unsigned settled;         /* windows since the round ended */
	unsigned moves;           /* rounds that changed the size (tests) */
};

uint64_t chunk_tune_size(int index);
/* The index of a candidate size, -1 when `bytes` is none. */
int chunk_tune_index(uint64_t bytes);
void chunk_tune_init(struct chunk_tune *t);
/* The size the next agreed bucket uses. */
uint64_t chunk_tune_next(const struct chunk_tune *t);
/* An agreed bucket of `bytes` reduced in pieces of `chunk` took `seconds`
 * (run to completion). Buckets no larger than the smallest size (one
 * piece whatever the size), and
 * buckets whose chunk is not the one under trial, are not counted. */
void chunk_tune_observe(struct chunk_tune *t, uint64_t chunk, uint64_t bytes, double seconds);

#endif
