/* plan_cache.h - the plan cache (Horovod's response cache, DIGEST C1): the
 * allreduce buckets rank 0 has planned, kept on every rank in the same
 * order (each rank learns a bucket when its EXEC says so), so that a later
 * step submitting the same tensors in the same order is recognised locally
 * ("same as last time") and announced to rank 0 as a short run of cache
 * positions instead of one SUBMIT per tensor. Entries are append-only:
 * an id means the same bucket on every rank for the whole run, so a
 * worker's announcement stays valid whatever rank 0 learnt meanwhile.
 * When PLAN_CACHE_MAX_ITEMS tensors are cached nothing more is learnt (new
 * sequences are negotiated tensor by tensor, as without a cache).
 * A learnt bucket's items never move: the arrays are allocated at their
 * largest with the first bucket (untouched pages cost nothing), so a
 * pointer to an item stays good until plan_cache_free.
 * Pure: no sockets, no locks, unit-tested directly.
 * What it does not do: decide buckets (coord.c) or talk to ranks.
 */
#ifndef HVD_PLAN_CACHE_H
#define HVD_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "plan/fusion.h"

/* 32768 x 152-byte items: 5 MiB per rank, 90 DenseNet-121 steps' worth
 * of buckets re-planned because of timing. */
#define PLAN_CACHE_MAX_ITEMS 32768u
/* The name table's slots: at most half of them in use. */
#define PLAN_CACHE_SLOTS (2 * PLAN_CACHE_MAX_ITEMS)

struct plan_entry {
	uint32_t first_item;   /* index into items */
	uint32_t count;        /* tensors in the bucket */
	uint64_t signature;    /* fusion_signature of its items */
	uint64_t bytes;        /* their payload */
};

struct plan_cache {
	struct fusion_item *items;      /* every entry's items, back to back */
	uint32_t nitems;
	struct plan_entry *entries;     /* id = index */
	uint32_t nentries;
	uint32_t *slots;                /* hash of the first name -> latest id + 1 */
};

/* Where a rank's submissions stand against the cache. */
struct plan_cursor {
	int64_t id;            /* bucket being followed, -1 none */
	uint32_t off;          /* next expected item in it */
};

/* A submission's place in the cache; id -1 = not cached (a miss). */
struct plan_tag {
	int32_t id;
	uint32_t off;
};

/* An all-zero plan_cache is empty; plan_cache_free empties it again. */
void plan_cache_free(struct plan_cache *pc);
/* 1 when a bucket of these items would be learnt: every item an allreduce,
 * 1..WIRE_MAX_QUEUED of them, and room left. */
int plan_cache_can_learn(const struct plan_cache *pc, const struct fusion_item *items, size_t n);
/* Appends a bucket. Returns its id, or -1 (memory; the caller fails). */
int64_t plan_cache_learn(struct plan_cache *pc, const struct fusion_item *items, uint32_t n);
/* Bucket `id`'s entry; an unknown id's is all zeros (no tensors). Inline,
 * as plan_cache_item: the submission and the vote look these up once
 * per tensor per step. */
static inline const struct plan_entry *plan_cache_entry(const struct plan_cache *pc, int64_t id)
{
	static const struct plan_entry none;
	return id >= 0 && id < pc->nentries ? &pc->entries[id] : &none;
}

/* The item `off` of bucket `id`, NULL when out of range. */
static inline const struct fusion_item *plan_cache_item(const struct plan_cache *pc, int64_t id,
							 uint32_t off)
{
	const struct plan_entry *e = plan_cache_entry(pc, id);
	return off < e->count ? &pc->items[e->first_item + off] : NULL;
}

/* Tags a rank's next submission and moves its cursor: continues the
 * followed bucket when `it` is its next item, else starts the latest
 * bucket whose first item is `it`, else a miss. */
struct plan_tag plan_cursor_next(const struct plan_cache *pc, struct plan_cursor *cur,
				 const struct fusion_item *it);
/* HIT frame check (rank 0): id known, 1 <= count, off + count within the
 * bucket. 0, or -1 with why. */
int plan_cache_check_run(const struct plan_cache *pc, uint32_t id, uint32_t off, uint32_t count,
			 char *why, size_t whylen);

#endif
