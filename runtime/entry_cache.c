/* entry_cache.c - submitted collectives' entries, recycled through a
 * per-thread cache: a training step submits and waits for the same tensors
 * every time, and allocating, zeroing and freeing each entry was a third
 * of a small tensor's way through the runtime. A thread's cache holds at
 * most ENTRY_CACHE_MAX entries and is freed when the thread exits. It is
 * first in, first out: a program that waits for a step's tensors in the
 * order it submitted them gets, for each tensor of the next step, the
 * entry it had in this one, which (through the lane) already holds a
 * copy of its cached item, so the 144-byte copy is skipped. The fast
 * paths are inline (entry_cache.h); here are the slow ones.
 * What it does not do: share entries between threads (an entry freed by
 * one thread is reused by that thread only).
 */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "entry_cache.h"

__thread struct entry_cache entry_cache_mine;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void drop_cache(void *unused)
{
	struct entry_cache *c = &entry_cache_mine;
	(void)unused;
	c->low = c->n;
	entry_cache_trim(c);
	c->exit_hook = 0;
}

void entry_cache_trim(struct entry_cache *c)
{
	for (unsigned k = 0; k < c->low && c->head; k++) {
		struct entry *e = c->head;
		c->head = e->next;
		c->n--;
		free(e);
	}
	if (!c->head)
		c->tail = NULL;
	c->low = c->n;
	c->pops = 0;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, drop_cache);
}

struct entry *entry_new(void)
{
	struct entry *e = aligned_alloc(64, sizeof(*e)); /* the hot fields share a cache line */
	if (e)
		memset(e, 0, sizeof(*e));
	return e;
}

struct entry *entry_alloc(void)
{
	struct entry *e = entry_cache_pop();
	if (!e)
		return entry_new();
	/* Zeroed but for the name, which the caller copies: the 128 bytes
	 * it leaves alone were half of what a submission wrote. A size the
	 * compiler cannot see makes the rest libc's memset (vector stores):
	 * GCC inlines a constant size as `rep stos`, which took 18 ns of a
	 * small tensor's ~50 ns submission on AMD EPYC. */
	size_t head = offsetof(struct entry, item.name), tail = head + HVD_NAME_MAX;
	size_t rest = sizeof(*e) - tail;
	__asm__("" : "+r"(rest));
	memset(e, 0, head);
	memset((char *)e + tail, 0, rest);
	return e;
}

/* entry_alloc_as (entry_cache.h) sets every field one by one: a field
 * added to struct entry must be added there too (the assertion adds up
 * their sizes: struct entry has no padding, so any field left out
 * shows). */
#define ENTRY_FIELD(f) sizeof(((struct entry *)0)->f)
#define ENTRY_FIELDS_SIZE                                                                          \
	(ENTRY_FIELD(h) + ENTRY_FIELD(item) + ENTRY_FIELD(seq) + ENTRY_FIELD(data) +               \
	 ENTRY_FIELD(send) + ENTRY_FIELD(recv) + ENTRY_FIELD(recv_capacity) + ENTRY_FIELD(counts) + \
	 ENTRY_FIELD(ready_mark) + ENTRY_FIELD(tag) + ENTRY_FIELD(t_submit) +                      \
	 ENTRY_FIELD(nego_open) + ENTRY_FIELD(copied_from) + ENTRY_FIELD(copied_gen) +            \
	 ENTRY_FIELD(next))
_Static_assert(sizeof(struct entry) % 64 == 0 && offsetof(struct entry, item.name) == 64,
	       "aligned_alloc takes whole cache lines; the hot fields fill the first");
_Static_assert(ENTRY_FIELDS_SIZE == sizeof(struct entry),
	       "entry_alloc_as sets every field of struct entry");

void entry_free_slow(struct entry *e)
{
	struct entry_cache *c = &entry_cache_mine;
	if (c->n >= ENTRY_CACHE_MAX) {
		free(e);
		return;
	}
	/* the thread's first: free its cache when it exits */
	pthread_once(&exit_once, make_exit_key);
	pthread_setspecific(exit_key, (void *)1);
	c->exit_hook = 1;
	c->low = UINT_MAX; /* the first window: no pop has looked yet */
	c->pops = 0;
	entry_free(e);
}
