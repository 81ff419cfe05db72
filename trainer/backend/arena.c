/* arena.c - lifetime-based offsets in one buffer (see arena.h).
 * What it does not do: allocate, or know what the blocks hold.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/arena.h"

int arena_plan_init(struct arena_plan *a)
{
	memset(a, 0, sizeof(*a));
	return 0;
}

void arena_plan_free(struct arena_plan *a)
{
	free(a->req);
	memset(a, 0, sizeof(*a));
}

long arena_add(struct arena_plan *a, size_t bytes, int first, int last)
{
	if (a->count == a->cap) {
		int cap = a->cap ? 2 * a->cap : 256;
		struct arena_req *r = realloc(a->req, sizeof(*r) * cap);
		if (!r) {
			a->out_of_memory = 1;
			return -1;
		}
		a->req = r;
		a->cap = cap;
	}
	struct arena_req *r = &a->req[a->count];
	r->bytes = (bytes + 63) & ~(size_t)63;
	r->first = first;
	r->last = last < first ? first : last;
	r->offset = 0;
	return a->count++;
}

size_t arena_offset(const struct arena_plan *a, long id)
{
	return id >= 0 && id < a->count ? a->req[id].offset : 0;
}

static const struct arena_req *sort_base;

static int by_start_then_size(const void *pa, const void *pb)
{
	const struct arena_req *a = &sort_base[*(const int *)pa];
	const struct arena_req *b = &sort_base[*(const int *)pb];
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return *(const int *)pa - *(const int *)pb;
}

static int by_offset(const void *pa, const void *pb)
{
	const struct arena_req *a = &sort_base[*(const int *)pa];
	const struct arena_req *b = &sort_base[*(const int *)pb];
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Lowest offset where `bytes` fits between the live blocks. */
static size_t first_fit(const struct arena_req *req, int *live, int nlive, size_t bytes)
{
	sort_base = req;
	qsort(live, nlive, sizeof(*live), by_offset);
	size_t at = 0;
	for (int i = 0; i < nlive; i++) {
		const struct arena_req *r = &req[live[i]];
		if (r->offset >= at + bytes)
			break;
		if (r->offset + r->bytes > at)
			at = r->offset + r->bytes;
	}
	return at;
}

int arena_plan_solve(struct arena_plan *a, size_t *total_bytes)
{
	int *order = malloc(sizeof(int) * (a->count + 1));
	int *live = malloc(sizeof(int) * (a->count + 1));
	int nlive = 0;
	size_t total = 0;
	if (!order || !live || a->out_of_memory) {
		free(order);
		free(live);
		return -1;
	}
	for (int i = 0; i < a->count; i++)
		order[i] = i;
	sort_base = a->req;
	qsort(order, a->count, sizeof(int), by_start_then_size);
	for (int k = 0; k < a->count; k++) {
		struct arena_req *r = &a->req[order[k]];
		if (!r->bytes)
			continue;
		int keep = 0;
		for (int i = 0; i < nlive; i++)
			if (a->req[live[i]].last >= r->first)
				live[keep++] = live[i];
		nlive = keep;
		r->offset = first_fit(a->req, live, nlive, r->bytes);
		live[nlive++] = order[k];
		if (r->offset + r->bytes > total)
			total = r->offset + r->bytes;
	}
	free(order);
	free(live);
	*total_bytes = total;
	return 0;
}
