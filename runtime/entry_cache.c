/* entry_cache.c - submitted collectives' entries, recycled through a
 * per-thread cache: a training step submits and waits for the same tensors
 * every time, and allocating, zeroing and freeing each entry was a third
 * of a small tensor's way through the runtime. A thread's cache holds at
 * most ENTRY_CACHE_MAX entries and is freed when the thread exits. It is
 * first in, first out: a program that waits for a step's tensors in the
 * order it submitted them gets, for each tensor of the next step, the
 * entry it had in this one, which (through the lane) already holds a
 * copy of its cached item, so the 152-byte copy is skipped.
 * What it does not do: share entries between threads (an entry freed by
 * one thread is reused by that thread only).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define ENTRY_CACHE_MAX 4096

static __thread struct entry *cached, *cached_tail; /* oldest first */
static __thread unsigned ncached;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void drop_cache(void *unused)
{
	(void)unused;
	while (cached) {
		struct entry *e = cached;
		cached = e->next;
		free(e);
	}
	cached_tail = NULL;
	ncached = 0;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, drop_cache);
}

/* This thread's least recently freed entry, or a new zeroed one when it
 * has none (*fresh = 1); NULL: out of memory. */
static inline struct entry *cache_pop(int *fresh)
{
	struct entry *e = cached;
	*fresh = !e;
	if (!e)
		return calloc(1, sizeof(*e));
	cached = e->next;
	if (!cached)
		cached_tail = NULL;
	ncached--;
	return e;
}

struct entry *entry_alloc(void)
{
	int fresh;
	struct entry *e = cache_pop(&fresh);
	if (!e || fresh)
		return e;
	/* Zeroed but for the name, which the caller copies: the 128 bytes
	 * it leaves alone were half of what a submission wrote. A size the
	 * compiler cannot see makes the rest libc's memset (vector stores):
	 * GCC inlines a constant size as `rep stos`, which took 18 ns of a
	 * small tensor's ~50 ns submission on AMD EPYC. */
	size_t head = offsetof(struct entry, item.name), tail = offsetof(struct entry, item.count);
	size_t rest = sizeof(*e) - tail;
	__asm__("" : "+r"(rest));
	memset(e, 0, head);
	memset((char *)e + tail, 0, rest);
	return e;
}

/* Every field set one by one: a field added to struct entry must be
 * added here too (the assertion adds up their sizes: struct entry has
 * no padding, so any field left out shows). */
#define ENTRY_FIELD(f) sizeof(((struct entry *)0)->f)
#define ENTRY_FIELDS_SIZE                                                                          \
	(ENTRY_FIELD(h) + ENTRY_FIELD(item) + ENTRY_FIELD(seq) + ENTRY_FIELD(data) +               \
	 ENTRY_FIELD(send) + ENTRY_FIELD(recv) + ENTRY_FIELD(recv_capacity) + ENTRY_FIELD(counts) + \
	 ENTRY_FIELD(ready_mark) + ENTRY_FIELD(tag) + ENTRY_FIELD(t_submit) +                      \
	 ENTRY_FIELD(nego_open) + ENTRY_FIELD(copied_from) + ENTRY_FIELD(copied_gen) +            \
	 ENTRY_FIELD(next))
_Static_assert(ENTRY_FIELDS_SIZE == sizeof(struct entry),
	       "entry_alloc_as sets every field of struct entry");

struct entry *entry_alloc_as(const struct fusion_item *it, uint64_t gen)
{
	int fresh;
	struct entry *e = cache_pop(&fresh);
	if (!e)
		return NULL;
	/* a learnt item never changes (plan_cache.h): a copy of it in this
	 * runtime's lane is still its copy */
	if (e->copied_from != it || e->copied_gen != gen) {
		e->item = *it;
		e->copied_from = it;
		e->copied_gen = gen;
	}
	if (fresh)
		return e;
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

void entry_free(struct entry *e)
{
	if (!e)
		return;
	if (ncached >= ENTRY_CACHE_MAX) {
		free(e);
		return;
	}
	if (!cached) { /* the thread's first: free the cache when it exits */
		pthread_once(&exit_once, make_exit_key);
		pthread_setspecific(exit_key, (void *)1);
	}
	e->next = NULL;
	if (cached_tail)
		cached_tail->next = e;
	else
		cached = e;
	cached_tail = e;
	ncached++;
}
