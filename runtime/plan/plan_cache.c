/* plan_cache.c - see plan_cache.h. Lookup by a bucket's first tensor name
 * goes through an open-addressing table of ids (linear probing; the
 * latest bucket with a name replaces the older one's slot). */
#include "plan/plan_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "plan/wire.h"

void plan_cache_free(struct plan_cache *pc)
{
	free(pc->items);
	free(pc->entries);
	free(pc->slots);
	memset(pc, 0, sizeof(*pc));
}

/* Slot of name: the one holding it, or the empty one where it goes. */
static uint32_t slot_of(const struct plan_cache *pc, const char *name)
{
	uint32_t mask = PLAN_CACHE_SLOTS - 1;
	uint32_t i = (uint32_t)fusion_hash(FUSION_HASH_START, name, strlen(name)) & mask;
	while (pc->slots[i]) {
		const struct plan_entry *e = &pc->entries[pc->slots[i] - 1];
		if (!strcmp(pc->items[e->first_item].name, name))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

/* The arrays at their largest, at the first bucket: at most
 * PLAN_CACHE_MAX_ITEMS items in as many buckets, twice as many slots.
 * Zeroed pages cost nothing until they are written, and nothing moves. */
static int reserve(struct plan_cache *pc)
{
	if (pc->items)
		return 0;
	pc->items = calloc(PLAN_CACHE_MAX_ITEMS, sizeof(*pc->items));
	pc->entries = calloc(PLAN_CACHE_MAX_ITEMS, sizeof(*pc->entries));
	pc->slots = calloc(PLAN_CACHE_SLOTS, sizeof(*pc->slots));
	if (pc->items && pc->entries && pc->slots)
		return 0;
	plan_cache_free(pc);
	return -1;
}

int plan_cache_can_learn(const struct plan_cache *pc, const struct fusion_item *items, size_t n)
{
	if (n == 0 || n > WIRE_MAX_QUEUED || pc->nitems + n > PLAN_CACHE_MAX_ITEMS)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].kind != FUSION_ALLREDUCE)
			return 0;
	return 1;
}

int64_t plan_cache_learn(struct plan_cache *pc, const struct fusion_item *items, uint32_t n)
{
	if (pc->nitems + n > PLAN_CACHE_MAX_ITEMS || reserve(pc))
		return -1;
	struct plan_entry *e = &pc->entries[pc->nentries];
	*e = (struct plan_entry){ pc->nitems, n, fusion_signature(items, n), 0 };
	for (uint32_t k = 0; k < n; k++)
		e->bytes += items[k].count * dtype_size((enum hvd_dtype)items[k].dtype);
	memcpy(pc->items + pc->nitems, items, n * sizeof(*items));
	pc->nitems += n;
	pc->slots[slot_of(pc, items[0].name)] = ++pc->nentries;
	return pc->nentries - 1;
}

/* The tag of item `off` of bucket `id`; the cursor moves past it. */
static struct plan_tag follow(const struct plan_cache *pc, struct plan_cursor *cur, int64_t id,
			      uint32_t off)
{
	cur->id = off + 1 < plan_cache_entry(pc, id)->count ? id : -1;
	cur->off = off + 1;
	return (struct plan_tag){ (int32_t)id, off };
}

struct plan_tag plan_cursor_next(const struct plan_cache *pc, struct plan_cursor *cur,
				 const struct fusion_item *it)
{
	const struct fusion_item *want = plan_cache_item(pc, cur->id, cur->off);
	if (want && fusion_item_matches(want, it))
		return follow(pc, cur, cur->id, cur->off);
	cur->id = -1;
	if (pc->slots && it->kind == FUSION_ALLREDUCE) {
		uint32_t s = pc->slots[slot_of(pc, it->name)];
		if (s && fusion_item_matches(plan_cache_item(pc, s - 1, 0), it))
			return follow(pc, cur, s - 1, 0);
	}
	return (struct plan_tag){ -1, 0 };
}

int plan_cache_check_run(const struct plan_cache *pc, uint32_t id, uint32_t off, uint32_t count,
			 char *why, size_t whylen)
{
	if (id >= pc->nentries)
		snprintf(why, whylen, "cached bucket %u unknown (%u learnt)", id, pc->nentries);
	else if (count == 0 || off >= pc->entries[id].count || count > pc->entries[id].count - off)
		snprintf(why, whylen, "tensors %u..%u of cached bucket %u of %u tensors", off,
			 off + count - 1, id, pc->entries[id].count);
	else
		return 0;
	return -1;
}
