/* data/load/order.h - which record goes where: the epoch permutation, the
 * rank/micro-batch layout and the per-record augmentation bits of the
 * loader contract (data/load/loader.h). Pure functions of (seed, epoch,
 * position): no state, no I/O, no threads, so any worker computes any
 * batch and the result never depends on the thread count.
 *
 * The permutation is a 4-round Feistel network on the smallest even-bit
 * power of two >= N, cycle-walked into [0, N): a bijection computed per
 * position in O(1) memory (no shuffled array to share or rebuild).
 * What this is not: reading records or making batches (data/load/loader.c).
 */
#ifndef HVD_TRAINER_DATA_ORDER_H
#define HVD_TRAINER_DATA_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct data_plan {
	uint64_t records;       /* N */
	int world, batch, accumulation;  /* R, B, K */
	int train;              /* 1: permuted and cut; 0: identity, padded */
	long micro_per_epoch;   /* M: micro-batches per rank per epoch */
	uint64_t used;          /* positions used per epoch (train: U; eval: N) */
};

/* Returns 0, or -1 (train with N < R*B*K, or a bad R/B/K) and why. */
int data_plan_init(struct data_plan *p, uint64_t records, int world, int batch,
		   int accumulation, int train, const char **why);

/* Position in the epoch of slot t of rank's micro-batch j: (j*R+rank)*B+t.
 * Contiguous blocks of B, so rank r's micro-batch j of an R-rank run is
 * micro-batch j*R+r of a one-rank run with K*R accumulation: the same
 * images in the same batch norm batch (the end-to-end equivalence test). */
uint64_t data_plan_position(const struct data_plan *p, int rank, long micro, int slot);

/* Record at that position: the permuted one (train), the position itself
 * (eval), or -1 for eval padding (position >= N). */
int64_t data_plan_record(const struct data_plan *p, uint64_t seed, int epoch,
			 uint64_t position);

/* Bijection of [0, n) seeded by (seed, epoch). */
uint64_t data_order_permute(uint64_t seed, int epoch, uint64_t n, uint64_t position);

/* 64 random bits for the augmentation of one position in one epoch. */
uint64_t data_order_aug_bits(uint64_t seed, int epoch, uint64_t position);

#endif
