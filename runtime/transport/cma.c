/* transport/cma.c - see cma.h. Stages of call k (1-based) in a rank's
 * slot: 3k-2 published, 3k-1 own slice summed (a small call: every
 * buffer read), 3k done with the others' memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "core/dtype.h"
#include "transport/cma.h"

#define HALF (CMA_PIECE_BYTES / 2 / sizeof(float)) /* floats: tmp is two halves */

int cma_read(int pid, void *dst, uint64_t addr, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	errno = got < 0 ? errno : EIO;
	return -1;
}

static void raise_stage(struct cma *c, uint64_t s)
{
	__atomic_store_n(&c->slots[c->rank].stage, s, __ATOMIC_RELEASE);
}

/* 1 when every rank reached stage s. */
static int all_at(const struct cma *c, uint64_t s)
{
	for (int r = 0; r < c->size; r++)
		if (__atomic_load_n(&c->slots[r].stage, __ATOMIC_ACQUIRE) < s)
			return 0;
	return 1;
}

static size_t slice_lo(const struct cma *c, int r) { return c->count * (size_t)r / (size_t)c->size; }

int cma_start(struct cma *c, float *buf, size_t count, float scale)
{
	*c = (struct cma){ .slots = c->slots, .rank = c->rank, .size = c->size, .calls = c->calls + 1,
			   .tmp = c->tmp, .buf = buf, .count = count, .scale = scale };
	c->done_to = slice_lo(c, c->rank);
	c->slots[c->rank].addr = (uint64_t)(uintptr_t)buf;
	c->slots[c->rank].count = count;
	raise_stage(c, 3 * c->calls - 2);
	return 0;
}

static int failed(int r, const char *what, const struct comm_wait *w)
{
	snprintf(w->err, w->errlen, "hvd: rank %d: '%s': %s during the cross-memory allreduce "
		 "'%s' (the process died or failed)", r, strerror(errno), what, w->what);
	return HVD_ERR_COMM;
}

/* out = elements [lo, lo + n) of every rank summed in rank order, times
 * the scale: the same operands in the same order on any rank, so the
 * same bits. Rank 0 or 1 adds into its own values in place when out is
 * them (x0 + x1 == x1 + x0). n <= HALF. */
static int sum_range(struct cma *c, size_t lo, size_t n, float *out, const struct comm_wait *w)
{
	float *mine = c->buf + lo, *theirs = c->tmp + HALF;
	int in_place = out == mine && c->rank <= 1;
	float *acc = in_place ? mine : c->tmp;
	for (int r = 0; r < c->size; r++) {
		float *x = r == c->rank ? mine : r == 0 && !in_place ? acc : theirs;
		if (in_place && r == c->rank)
			continue;
		if (x != mine && cma_read(c->slots[r].pid, x, c->slots[r].addr + lo * sizeof(float),
					  n * sizeof(float)))
			return failed(r, "reading its buffer", w);
		if (r == 0 && x == mine)
			memcpy(acc, mine, n * sizeof(float));
		else if (x != acc)
			dtype_add_f32(acc, x, n);
	}
	if (c->scale != 0)
		dtype_scale_f32(acc, n, c->scale);
	if (acc != out)
		memcpy(out, acc, n * sizeof(float));
	return 0;
}

/* Every rank publishes the same count (the plan makes it so). */
static int same_count(const struct cma *c, const struct comm_wait *w)
{
	int r = 0;
	while (r < c->size && c->slots[r].count == c->count)
		r++;
	if (r < c->size)
		snprintf(w->err, w->errlen, "hvd: cross-memory allreduce: '%s': %zu elements here, "
			 "%llu on rank %d", w->what, c->count, (unsigned long long)c->slots[r].count, r);
	return r < c->size ? HVD_ERR_COMM : 0;
}

/* One step; *moved = 0 when it waits for a peer. Steps: 0 wait until all
 * published; a large call 1 sum this rank's slice, 2 read the others'
 * (each once its owner summed it), 3 wait until all read this one's; a
 * small call 4 sum it whole into tmp, 5 wait until all read this rank's
 * buffer, then write it. */
static int cma_step(struct cma *c, int *done, int *moved, const struct comm_wait *w)
{
	uint64_t k = 3 * c->calls;
	int rc = 0, r = c->next;
	size_t lo = slice_lo(c, r), n = slice_lo(c, r + 1) - lo, end = slice_lo(c, c->rank + 1);
	*moved = 1;
	switch (c->step) {
	case 0:
		if ((*moved = all_at(c, k - 2)) && !(rc = same_count(c, w)))
			c->step = c->count <= CMA_WHOLE_BYTES / sizeof(float) ? 4 : 1;
		break;
	case 1:
		n = end - c->done_to < HALF ? end - c->done_to : HALF;
		if (!(rc = sum_range(c, c->done_to, n, c->buf + c->done_to, w)) &&
		    (c->done_to += n) == end) {
			raise_stage(c, k - 1);
			c->step = 2;
		}
		break;
	case 2:
		if (r != c->rank && !(*moved = __atomic_load_n(&c->slots[r].stage, __ATOMIC_ACQUIRE) >= k - 1))
			break;
		if (r != c->rank && n && cma_read(c->slots[r].pid, c->buf + lo,
						  c->slots[r].addr + lo * sizeof(float), n * sizeof(float)))
			return failed(r, "reading its summed slice", w);
		if (++c->next == c->size) {
			raise_stage(c, k);
			c->step = 3;
		}
		break;
	case 3:
		*done = *moved = all_at(c, k);
		break;
	case 4:
		if (!(rc = sum_range(c, 0, c->count, c->tmp, w))) {
			raise_stage(c, k - 1);
			c->step = 5;
		}
		break;
	default:
		if ((*done = *moved = all_at(c, k - 1))) {
			memcpy(c->buf, c->tmp, c->count * sizeof(float));
			raise_stage(c, k);
		}
	}
	return rc;
}

int cma_test(struct cma *c, int *done, const struct comm_wait *w)
{
	int rc = 0, moved = 1;
	*done = 0;
	while (!rc && moved && !*done)
		rc = cma_step(c, done, &moved, w);
	if (rc || *done || (c->polls++ & 63))
		return rc;
	rc = comm_wait_check(w);
	if (rc == HVD_ERR_COMM)
		snprintf(w->err, w->errlen, "hvd: cross-memory allreduce: '%s': did not complete "
			 "before the deadline (HVD_TIMEOUT_S)", w->what);
	return rc;
}
