/* entry_cache.h - the per-thread cache of recycled entries (entry_cache.c),
 * its fast paths inline: the lane's submission takes an entry and
 * hvd_wait returns it once per tensor per step, and the two calls into
 * entry_cache.c were an eighth of a small repeated step. A thread's cache
 * is first in, first out (entry_cache.c says why), holds at most
 * ENTRY_CACHE_MAX entries and is freed when the thread exits.
 * What it does not do: share entries between threads (an entry freed by
 * one thread is reused by that thread only).
 */
#ifndef HVD_ENTRY_CACHE_H
#define HVD_ENTRY_CACHE_H

#include "runtime.h"

#define ENTRY_CACHE_MAX 4096
/* Pops after which the entries the cache never needed are freed. */
#define ENTRY_CACHE_WINDOW 4096u

struct entry_cache {
	struct entry *head, *tail; /* oldest first */
	unsigned n;
	unsigned low;              /* the fewest it held in this window */
	unsigned pops;             /* in this window */
	int exit_hook;             /* the thread's exit frees it (entry_free_slow) */
};
extern __thread struct entry_cache entry_cache_mine;

/* An entry zeroed but for item.name, which the caller fills (NULL: out
 * of memory). */
struct entry *entry_alloc(void);
/* A new entry, every byte zero (NULL: out of memory). */
struct entry *entry_new(void);
/* entry_free when the cache has no exit hook yet or is full. */
void entry_free_slow(struct entry *e);
/* The end of a window: frees the `low` oldest entries, which no pop in
 * it needed (entry_cache_pop). */
void entry_cache_trim(struct entry_cache *c);

/* This thread's least recently freed entry, or NULL when it has none.
 * A cache that holds more than its program keeps in flight (a phase of
 * 364 tensors a step, then one of 64) would hand each tensor another
 * entry than last time, round all of them, and outgrow the L1 cache: at
 * the end of each window of pops the entries it never went below are
 * freed, and it holds what is in flight again, each tensor's own entry
 * coming back to it. */
static inline struct entry *entry_cache_pop(void)
{
	struct entry_cache *c = &entry_cache_mine;
	struct entry *e = c->head;
	if (e) {
		c->head = e->next;
		if (!c->head)
			c->tail = NULL;
		c->n--;
		if (c->n < c->low)
			c->low = c->n;
		if (++c->pops >= ENTRY_CACHE_WINDOW)
			entry_cache_trim(c);
	}
	return e;
}

/* An entry for the cached item it of the lane of generation gen (copied,
 * unless the entry holds a copy of that very item already: a learnt item
 * never changes, plan_cache.h), every other field zero, without memset
 * calls (the lane's submissions). NULL: out of memory. */
static inline struct entry *entry_alloc_as(const struct fusion_item *it, uint64_t gen)
{
	struct entry *e = entry_cache_pop();
	if (!e && !(e = entry_new()))
		return NULL;
	if (e->copied_from != it || e->copied_gen != gen) {
		e->item = *it;
		e->copied_from = it;
		e->copied_gen = gen;
	}
	e->h.done = 0;
	e->h.status = 0;
	e->seq = 0;
	e->data = NULL;
	e->send = NULL;
	e->recv = NULL;
	e->recv_capacity = 0;
	e->counts = NULL;
	e->ready_mark = NULL;
	e->tag = (struct plan_tag){ 0, 0 };
	e->t_submit = 0;
	e->nego_open = 0;
	e->next = NULL;
	return e;
}

/* Returns e (NULL: nothing) once its caller has waited for it (any
 * thread: it joins that thread's cache). */
static inline void entry_free(struct entry *e)
{
	struct entry_cache *c = &entry_cache_mine;
	if (!e)
		return;
	if (!c->exit_hook || c->n >= ENTRY_CACHE_MAX) {
		entry_free_slow(e);
		return;
	}
	e->next = NULL;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	c->n++;
}

#endif
