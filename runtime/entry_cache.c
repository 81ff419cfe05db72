/* entry_cache.c - submitted collectives' entries, recycled through a
 * per-thread cache: a training step submits and waits for the same tensors
 * every time, and allocating, zeroing and freeing each entry was a third
 * of a small tensor's way through the runtime. A thread's cache holds at
 * most ENTRY_CACHE_MAX entries and is freed when the thread exits.
 * What it does not do: share entries between threads (an entry freed by
 * one thread is reused by that thread only).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define ENTRY_CACHE_MAX 4096

static __thread struct entry *cached;
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
	ncached = 0;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, drop_cache);
}

struct entry *entry_alloc(void)
{
	struct entry *e = cached;
	if (!e)
		return calloc(1, sizeof(*e));
	cached = e->next;
	ncached--;
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
	e->next = cached;
	cached = e;
	ncached++;
}
