/* arena.h - offsets in one buffer for blocks with known lifetimes.
 *
 * Each request is (bytes, first step, last step); two requests whose step
 * intervals overlap get disjoint byte ranges, others may share. Greedy
 * first fit in order of start step, 64-byte aligned. Pure logic (tested
 * directly); the cpu backend's step arena and the gpu backend's pool plan
 * use it. What it does not do: allocate the buffer.
 */
#ifndef HVD_TRAINER_BACKEND_ARENA_H
#define HVD_TRAINER_BACKEND_ARENA_H

#include <stddef.h>

struct arena_req {
	size_t bytes;
	int first, last;      /* steps, inclusive */
	size_t offset;        /* result */
};

struct arena_plan {
	struct arena_req *req;
	int count, cap;
	int out_of_memory;    /* an arena_add failed: solve refuses */
};

int arena_plan_init(struct arena_plan *a);
/* Returns the request's id (>= 0), or -1 when out of memory. A request of
 * 0 bytes gets an id and offset 0. */
long arena_add(struct arena_plan *a, size_t bytes, int first, int last);
/* Assign offsets; *total_bytes = the buffer size needed. -1 when out of
 * memory, now or in an earlier arena_add (whose id was -1: no block may
 * silently share offset 0 with another). */
int arena_plan_solve(struct arena_plan *a, size_t *total_bytes);
size_t arena_offset(const struct arena_plan *a, long id);
void arena_plan_free(struct arena_plan *a);

#endif
