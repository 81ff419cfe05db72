/* test_arena.c - the backends' lifetime arena (trainer/backend/arena.c):
 * blocks alive at the same step never overlap, blocks that are not may
 * share, offsets are 64-byte aligned, and a failed request
 * makes the plan fail instead of aliasing offset 0.
 */
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/arena.h"

static int intervals_overlap(const struct arena_req *a, const struct arena_req *b)
{
	return a->first <= b->last && b->first <= a->last;
}

static int bytes_overlap(const struct arena_req *a, const struct arena_req *b)
{
	return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

static void test_live_blocks_never_share_bytes(void)
{
	struct arena_plan a;
	arena_plan_init(&a);
	unsigned seed = 7;
	for (int i = 0; i < 300; i++) {
		int first = (int)(rand_r(&seed) % 100);
		int len = (int)(rand_r(&seed) % 20);
		CHECK(arena_add(&a, 1 + rand_r(&seed) % 5000, first, first + len) == i);
	}
	size_t total = 0, sum = 0;
	CHECK(arena_plan_solve(&a, &total) == 0);
	for (int i = 0; i < a.count; i++) {
		sum += a.req[i].bytes;
		CHECK_INT(a.req[i].offset % 64, 0);
		CHECK(a.req[i].offset + a.req[i].bytes <= total);
		for (int j = i + 1; j < a.count; j++)
			if (intervals_overlap(&a.req[i], &a.req[j]) && bytes_overlap(&a.req[i], &a.req[j]))
				CHECK_MSG(0, "blocks %d [%d,%d] and %d [%d,%d] share bytes", i,
					  a.req[i].first, a.req[i].last, j, a.req[j].first, a.req[j].last);
	}
	CHECK_MSG(total < sum, "no reuse: total %zu of %zu", total, sum);
	arena_plan_free(&a);
}

static void test_disjoint_lifetimes_reuse_memory(void)
{
	struct arena_plan a;
	size_t total = 0;
	arena_plan_init(&a);
	long x = arena_add(&a, 1000, 0, 1), y = arena_add(&a, 1000, 2, 3), z = arena_add(&a, 10, 1, 2);
	CHECK(arena_plan_solve(&a, &total) == 0);
	CHECK_INT(arena_offset(&a, x), arena_offset(&a, y));   /* x dead before y starts */
	CHECK(arena_offset(&a, z) >= 1024);                     /* z overlaps both */
	CHECK_INT(total, 1024 + 64);
	arena_plan_free(&a);
}

static void test_failed_request_fails_the_plan(void)
{
	struct arena_plan a;
	size_t total = 0;
	arena_plan_init(&a);
	CHECK(arena_add(&a, 100, 0, 0) == 0);
	a.out_of_memory = 1;   /* what a failed realloc in arena_add records */
	CHECK(arena_plan_solve(&a, &total) == -1);
	arena_plan_free(&a);
}

const struct test_case arena_tests[] = {
	{ "arena_live_blocks_never_share_bytes", test_live_blocks_never_share_bytes },
	{ "arena_disjoint_lifetimes_reuse_memory", test_disjoint_lifetimes_reuse_memory },
	{ "arena_failed_request_fails_the_plan", test_failed_request_fails_the_plan },
	{ 0 }
};
