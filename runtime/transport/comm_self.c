/* comm_self.c - the one-rank backend: a program run without srun (or in a
 * one-task step without PMIx) is a world of one, where every collective is
 * the identity; and what every backend shares (the deadline and abort
 * check, the pause between polls, the block split, host memory).
 * What it does not do: start MPI (a singleton MPI_Init forks orted and is
 * where the PMIx crash traps live; see the facts file).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/comm.h"

int comm_wait_check(const struct comm_wait *w, const char *call)
{
	if (w->abort && *w->abort)
		return HVD_ERR_ABORTED;
	double now = runtime_now();
	if (now <= w->deadline || (w->naming_until && now < *w->naming_until))
		return 0;
	if (call)
		snprintf(w->err, w->errlen, "hvd: %s: '%s': did not complete before the deadline "
			 "(HVD_TIMEOUT_S)", call, w->what);
	return HVD_ERR_COMM;
}

void comm_block(size_t count, int size, int b, size_t *first, size_t *n)
{
	*first = count * (size_t)b / (size_t)size;
	*n = count * (size_t)(b + 1) / (size_t)size - *first;
}

#define COMM_SPIN_POLLS 64
#define COMM_YIELD_POLLS 1024
#define COMM_NAP_NS 100000

void comm_poll_pause(unsigned polls)
{
	static const struct timespec nap = { 0, COMM_NAP_NS };
	if (polls >= COMM_SPIN_POLLS + COMM_YIELD_POLLS)
		nanosleep(&nap, NULL);
	else if (polls >= COMM_SPIN_POLLS)
		sched_yield();
}

/* Host memory, for every host backend (comm.h). */
void *comm_host_alloc(void *ctx, size_t bytes, char *err, size_t n)
{
	void *p = malloc(bytes ? bytes : 1);
	if (!p)
		snprintf(err, n, "hvd: fusion buffer: '%zu bytes': out of host memory", bytes);
	return p;
}

void comm_host_release(void *ctx, void *p)
{
	free(p);
}

int comm_host_copy(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t n)
{
	if (bytes) /* empty buckets pass NULL */
		memmove(dst, src, bytes);
	return 0;
}

static int self_allreduce_start(void *ctx, void *buf, size_t count, enum hvd_dtype t,
				enum hvd_op op, const struct comm_wait *w)
{
	return 0; /* sum and average over one rank leave the data as it is */
}

int comm_done_test(void *ctx, int *done, const struct comm_wait *w)
{
	*done = 1;
	return 0;
}

static int self_broadcast(void *ctx, void *buf, size_t bytes, int root, const struct comm_wait *w)
{
	return 0;
}

static int self_allgatherv(void *ctx, const void *send, size_t send_bytes, void *recv,
			   size_t cap, size_t *bytes_per_rank, const struct comm_wait *w)
{
	if (send_bytes > cap)
		return HVD_ERR_USAGE;
	memmove(recv, send, send_bytes);
	bytes_per_rank[0] = send_bytes;
	return 0;
}

static const struct comm_ops self_ops = {
	.name = "self",
	.allreduce_phase = "SELF_ALLREDUCE",
	.broadcast_phase = "SELF_BCAST",
	.allgather_phase = "SELF_ALLGATHER",
	.alloc = comm_host_alloc,
	.release = comm_host_release,
	.copy = comm_host_copy,
	.allreduce_start = self_allreduce_start,
	.allreduce_test = comm_done_test,
	.broadcast = self_broadcast,
	.allgatherv = self_allgatherv,
};

int comm_self_open(struct comm *c, char *err, size_t errlen)
{
	c->ops = &self_ops;
	c->ctx = NULL;
	return 0;
}
