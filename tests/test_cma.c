/* test_cma.c - group "runtime-cma": the one-node cross-memory allreduce
 * (runtime/transport/cma.c) among three forked processes that share
 * their slots: sums in rank order to the bit on every rank, small (summed
 * whole) and large (a slice per rank, in pieces), with and without the
 * average's scale; a count that differs and a rank that died are errors
 * naming it.
 * What this is not: the start-up probe or the engine's use of it (the
 * slurm-runtime group runs those).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "runner.h"
#include "transport/cma.h"

#define RANKS 3

static float value(int rank, size_t i)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(rank * 40503 + 17);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return (float)(x & 0xffffff) / 16777216.0f * 3.0f - 1.5f;
}

/* Runs one call as `rank` on count elements; 0 if buf ends as the rank-
 * order sum (times scale), 1 if not, else the call's error code. */
static int one_rank(struct cma_slot *slots, int rank, size_t count, float scale, size_t claim,
		    char *err, size_t errlen)
{
	struct cma c = { .slots = slots, .rank = rank, .size = RANKS, .tmp = malloc(CMA_PIECE_BYTES) };
	float *buf = malloc(count * sizeof(float));
	for (size_t i = 0; i < count; i++)
		buf[i] = value(rank, i);
	slots[rank].pid = (int32_t)getpid();
	struct comm_wait w = { runtime_now() + 10, NULL, "test", err, errlen };
	int rc = cma_start(&c, buf, count, scale), done = 0;
	slots[rank].count = claim; /* a rank that lies about its count */
	while (!rc && !done)
		rc = cma_test(&c, &done, &w);
	for (size_t i = 0; !rc && i < count; i++) {
		float want = (value(0, i) + value(1, i)) + value(2, i);
		rc = memcmp(&buf[i], &(float){ scale != 0 ? want * scale : want }, sizeof(float)) != 0;
	}
	free(buf);
	free(c.tmp);
	return rc;
}

/* Ranks 1 and 2 in children; rank 0 here. Returns rank 0's result; the
 * children's exit statuses land in kids[]. */
static int three_ranks(size_t count, float scale, size_t rank2_claims, char *err, size_t errlen,
		       int kids[2])
{
	struct cma_slot *slots = mmap(NULL, RANKS * sizeof(*slots), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid[2];
	for (int r = 1; r < RANKS; r++)
		if ((pid[r - 1] = fork()) == 0) {
			char e[256];
			_exit(one_rank(slots, r, count, scale, r == 2 ? rank2_claims : count, e,
				       sizeof(e)) ? 1 : 0);
		}
	int rc = one_rank(slots, 0, count, scale, count, err, errlen);
	for (int r = 0; r < 2; r++) {
		if (rc)
			kill(pid[r], SIGKILL);
		int st = 0;
		waitpid(pid[r], &st, 0);
		kids[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 99;
	}
	munmap(slots, RANKS * sizeof(*slots));
	return rc;
}

static void test_sums_agree_to_the_bit_on_every_rank(void)
{
	static const size_t counts[] = { 1, 1000, CMA_WHOLE_BYTES / 4, CMA_WHOLE_BYTES / 4 + 1, 300001 };
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		for (int avg = 0; avg < 2; avg++) {
			char err[256] = "";
			int kids[2];
			int rc = three_ranks(counts[k], avg ? 1.0f / 3 : 0, counts[k], err, sizeof(err), kids);
			CHECK_MSG(rc == 0 && kids[0] == 0 && kids[1] == 0, "%zu floats%s: rank 0 %d, "
				  "ranks 1-2 %d %d: %s", counts[k], avg ? " averaged" : "", rc, kids[0],
				  kids[1], err);
		}
}

static void test_a_count_that_differs_is_named(void)
{
	char err[256] = "";
	int kids[2];
	CHECK(three_ranks(5000, 0, 4999, err, sizeof(err), kids) != 0);
	CHECK_CONTAINS(err, "5000 elements here, 4999 on rank 2");
}

static void test_a_rank_that_died_is_named(void)
{
	struct cma_slot *slots = mmap(NULL, 2 * sizeof(*slots), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t kid = fork();
	if (kid == 0) { /* publishes a call, then dies */
		struct cma c = { .slots = slots, .rank = 1, .size = 2 };
		static float buf[100000];
		slots[1].pid = (int32_t)getpid();
		cma_start(&c, buf, 100000, 0);
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	struct cma c = { .slots = slots, .rank = 0, .size = 2, .tmp = malloc(CMA_PIECE_BYTES) };
	float *buf = calloc(100000, sizeof(float));
	char err[256] = "";
	struct comm_wait w = { runtime_now() + 10, NULL, "grad.7", err, sizeof(err) };
	int done = 0, rc = cma_start(&c, buf, 100000, 0);
	while (!rc && !done)
		rc = cma_test(&c, &done, &w);
	CHECK_INT(rc, HVD_ERR_COMM);
	CHECK_CONTAINS(err, "hvd: rank 1: 'No such process': reading its buffer during the "
		       "cross-memory allreduce 'grad.7'");
	free(buf);
	free(c.tmp);
	munmap(slots, 2 * sizeof(*slots));
}

const struct test_case runtime_cma_tests[] = {
	{ "sums_agree_to_the_bit_on_every_rank", test_sums_agree_to_the_bit_on_every_rank },
	{ "a_count_that_differs_is_named", test_a_count_that_differs_is_named },
	{ "a_rank_that_died_is_named", test_a_rank_that_died_is_named },
	{ 0 },
};
