/* lane.c - see lane.h. */
#include "lane.h"

/* Every runtime's lane is a new generation (from 1): a thread's claim on
 * an earlier runtime's lane (hvd_shutdown, hvd_init) is no claim on this
 * one, and a thread that claimed none matches no lane, not even a zeroed
 * one that lane_init never saw. */
static uint64_t generations;
__thread uint64_t lane_claimed_generation = UINT64_MAX;

void lane_init(struct lane *l)
{
	l->pushed = l->drained = 0;
	l->generation = __atomic_add_fetch(&generations, 1, __ATOMIC_RELAXED);
	l->claimed = 0;
	l->items = NULL;
	l->id = -1;
	l->off = l->count = 0;
}

void lane_follow(struct lane *l, const struct plan_cache *pc, const struct plan_cursor *cur,
		 int may_claim)
{
	if (!l->claimed && may_claim) {
		l->claimed = 1;
		lane_claimed_generation = l->generation;
	}
	if (!lane_mine(l))
		return;
	uint32_t count = plan_cache_count(pc, cur->id);
	l->id = cur->id;
	l->off = cur->off;
	l->count = count;
	l->items = count ? plan_cache_item(pc, cur->id, 0) : NULL;
}
