/* transport/cma.h - an allreduce among the ranks of one node by cross-
 * memory reads (process_vm_readv), for f32 host buffers: rank r sums
 * slice r of every rank's buffer into its own (x0 + x1 + ... in rank
 * order, then the average's scale while the piece is still in cache),
 * then reads every other slice from the rank that owns it. Each element
 * is summed once, by one rank, in rank order, so every rank holds the
 * same bits; the memory traffic is a read of the peers' slices and one
 * of the results, with no staging copy of the buffer and no second pass
 * over it for the average. Small calls (CMA_WHOLE_BYTES) are summed
 * whole by every rank, in the same order.
 * The ranks meet in slots of the coordination plane's shared memory
 * (vote_shm.c), which also checks at start-up that every rank may read
 * every other (a kernel with Yama's ptrace_scope >= 1 forbids it; then
 * the data backend reduces as before). A call moves through three stages
 * per rank: published (address, count), own slice summed, done with the
 * others' memory; a rank returns only when all are done with its own.
 * A test goes as far as it can without waiting for a peer: the caller
 * polls it against the deadline and the abort flag.
 * What it does not do: device memory, dtypes other than f32 (the others
 * go to the data backend; f16/bf16 buckets are widened to f32 first), or
 * ranks on other nodes.
 */
#ifndef HVD_CMA_H
#define HVD_CMA_H

#include <stddef.h>
#include <stdint.h>

#include "transport/comm.h"

/* Bytes of tmp: a piece's sum and a peer's piece, halves of it. Up to
 * CMA_WHOLE_BYTES every rank sums the whole vector instead: one read per
 * peer and two meetings instead of two reads and three. */
#define CMA_PIECE_BYTES ((size_t)256 * 1024)
#define CMA_WHOLE_BYTES ((size_t)16 * 1024)

struct cma_slot {
	_Alignas(64) uint64_t stage; /* 3 per call (cma.c) */
	uint64_t addr, count;        /* the call's buffer in this rank's memory */
	int32_t pid;
};

struct cma {
	struct cma_slot *slots;      /* size of them, in shared memory */
	int rank, size;
	uint64_t calls;
	float *tmp;                  /* CMA_PIECE_BYTES */
	float *buf;                  /* the call in flight */
	size_t count, done_to;       /* own slice summed up to done_to */
	float scale;
	int step, next;              /* where the call is (cma_step), the next slice to read */
	unsigned polls;
};

/* Starts the sum (times scale when not 0) over the ranks of count floats
 * of buf, in place. */
int cma_start(struct cma *c, float *buf, size_t count, float scale);
/* Advances it as far as it can without waiting; *done = 1 once buf
 * holds the result and every rank is done with this rank's memory. */
int cma_test(struct cma *c, int *done, const struct comm_wait *w);
/* Reads n bytes at the peer's address into dst: 0, or -1 with errno. */
int cma_read(int pid, void *dst, uint64_t addr, size_t n);

#endif
