/* lane.h - the submission lane: while the engines agree on cached buckets
 * among themselves (agree.c), one thread's submissions of the tensors
 * inside a cached bucket skip the runtime lock. That thread (the lane's
 * owner: the first to submit once the engines agree) checks each
 * submission against the cached item it expects next (name, count,
 * dtype, op: a match is valid, since the cached one was checked when it
 * was first submitted) and pushes the entry into a single-producer ring;
 * whoever takes the runtime lock next (runtime_lock: the owner's next
 * locked submission, a waiter, the engine, the control thread) drains
 * the ring into the pending list in order, giving each entry its
 * position and moving the plan cursor past it, as a locked submission
 * would have (the owner tagged it with the item it matched).
 * A bucket's first and last tensor, anything unexpected, other threads,
 * HVD_SYNC, a full ring and a failed runtime take the locked way
 * (submit.c), which keeps the engine's wake-ups, the cycle-time flush and
 * the announcements to rank 0 where they were. An entry's tag (the
 * bucket and the item it matched) holds whatever other threads submitted
 * meanwhile: a run that another submission interrupted is broken by its
 * positions, which the vote checks (agree.c), not by its tags.
 * The owner reads rt->fast unfenced: an entry pushed just as the engines
 * disagreed (after the control thread drained for its announcements)
 * waits in the ring for the next drain, at the latest the control
 * thread's next loop (it polls every HVD_HEARTBEAT_S / 2, at most 0.1 s,
 * and drains before it announces), far inside any stall warning. A fence
 * per submission to close that window would double the lane's cost.
 * What it does not do: run, agree on or announce anything; read the plan
 * cache's lookup table (the owner follows one bucket, whose items stay
 * where they are: plan_cache.c keeps outgrown arrays until it is freed).
 */
#ifndef HVD_LANE_H
#define HVD_LANE_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "plan_cache.h"

/* Entries in flight between the owner and the drain: more than a
 * DenseNet-121 step's 364 gradients. */
#define LANE_CAP 1024u

struct entry;

struct lane {
	/* shared: the owner writes pushed (release), a drainer (lock held)
	 * writes drained (release) */
	struct entry *ring[LANE_CAP];
	uint64_t pushed;
	uint64_t drained;
	uint64_t generation;   /* this runtime's lane (a thread's claim names it) */
	int claimed;           /* lock held: some thread owns the lane */
	/* the owner's alone: the cached bucket it follows and its next item */
	const struct fusion_item *items;
	int64_t id;
	uint32_t off, count;   /* count 0: following none */
};

/* hvd_init: an empty lane of a new generation. */
void lane_init(struct lane *l);
/* The generation of the lane this thread owns (lane.c), UINT64_MAX: none. */
extern __thread uint64_t lane_claimed_generation;
/* 1 when the calling thread owns l. */
static inline int lane_mine(const struct lane *l)
{
	return lane_claimed_generation == l->generation;
}
/* Lock held, after a locked submission: the caller claims the lane when
 * may_claim and nobody has; the owner then follows the cursor again. */
void lane_follow(struct lane *l, const struct plan_cache *pc, const struct plan_cursor *cur,
		 int may_claim);
/* The owner, unlocked: the cached item it expects next when that one
 * lies inside a bucket (neither its first nor its last tensor) and the
 * ring has room; else NULL (the locked way). */
static inline const struct fusion_item *lane_expected(const struct lane *l)
{
	if (l->off + 1 >= l->count || l->pushed - __atomic_load_n(&l->drained, __ATOMIC_ACQUIRE) >= LANE_CAP)
		return NULL;
	return &l->items[l->off];
}
/* 1 when the caller's name equals the cached one (a whole HVD_NAME_MAX
 * array, NUL-terminated): fusion_name_equal, eight bytes at a time (a
 * call to strcmp was an eighth of a small repeated step). That reads the
 * caller's string up to HVD_NAME_MAX bytes from its start whatever its
 * length, so only where those bytes lie inside the (4 KiB, or larger)
 * page it starts on, which is mapped whole; nearer a page's end, strcmp.
 * Those reads may pass the caller's NUL, which AddressSanitizer reports:
 * its builds compare by strcmp. */
static inline int lane_name_equal(const char *cached, const char *name)
{
#ifndef __SANITIZE_ADDRESS__
	if (((uintptr_t)name & 4095) <= 4096 - HVD_NAME_MAX)
		return fusion_name_equal(cached, name);
#endif
	return !strcmp(cached, name);
}

/* The owner, unlocked: e (its item the expected one) goes into the ring
 * with its tag; the lane moves to the next item. */
static inline void lane_push(struct lane *l, struct entry *e, struct plan_tag *tag)
{
	*tag = (struct plan_tag){ (int32_t)l->id, l->off };
	l->off++;
	l->ring[l->pushed % LANE_CAP] = e;
	__atomic_store_n(&l->pushed, l->pushed + 1, __ATOMIC_RELEASE);
}
/* Lock held: the drain takes the entries at positions l->drained up to
 * lane_pushed() (lane_at), oldest first, then says so (lane_drained). */
static inline uint64_t lane_pushed(const struct lane *l)
{
	return __atomic_load_n(&l->pushed, __ATOMIC_ACQUIRE);
}

static inline struct entry *lane_at(const struct lane *l, uint64_t pos)
{
	return l->ring[pos % LANE_CAP];
}

static inline void lane_drained(struct lane *l, uint64_t end)
{
	__atomic_store_n(&l->drained, end, __ATOMIC_RELEASE);
}

#endif
