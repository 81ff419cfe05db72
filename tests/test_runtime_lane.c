/* test_runtime_lane.c - the submission lane (runtime/lane.h) in a real
 * one-rank runtime (hvd_init without a launcher: the self backend, the
 * engine and control threads, the plan cache and the engines' agreement
 * all running): a repeated step's inner tensors go through the lane and
 * come back as submitted; a changed tensor leaves the lane for the locked
 * way and the lane carries the steps after it; a second thread that
 * submits beside the lane's owner loses nothing; an entry pushed after
 * the runtime failed completes with its error instead of hanging. The
 * lane's name compare (lane_name_equal) agrees with strcmp everywhere,
 * names that end at a page followed by an unmapped one included.
 * What it does not do: start ranks (test_runtime_slurm.c checks the
 * lane's sums on two ranks against a run without it).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "entry_cache.h"
#include "runtime.h"

#define LANE_TENSORS 16
#define LANE_FLOATS (LANE_TENSORS * (LANE_TENSORS + 3) / 2 + 1)

/* One step of LANE_TENSORS tensors "prefix.k" of k + 1 floats (tensor
 * `odd` one more), slices of buf, submitted then waited for. Names are
 * formatted into one reused buffer, as programs often do: the lane must
 * compare what they say, not where they are. One rank: the sum is the
 * tensor itself, so each handle's entry is checked too before its wait:
 * its own name, count and data (the lane copies the cached item it
 * matched). 0 when every entry was its tensor's, every wait succeeded
 * and every value came back. */
static int lane_step(float *buf, const char *prefix, int odd, float value, int waits_backwards)
{
	hvd_handle *h[LANE_TENSORS];
	size_t off = 0;
	for (int k = 0; k < LANE_TENSORS; k++) {
		char name[32];
		size_t n = (size_t)k + 1 + (k == odd);
		snprintf(name, sizeof(name), "%s.%d", prefix, k);
		for (size_t i = 0; i < n; i++)
			buf[off + i] = value + (float)i;
		if (hvd_allreduce_async(name, buf + off, n, HVD_F32, HVD_SUM, &h[k]))
			return -1;
		const struct entry *e = (const struct entry *)h[k]; /* the handle is its first member */
		if (strcmp(e->item.name, name) || e->item.count != n || e->data != buf + off)
			return -2;
		off += n;
	}
	int bad = 0;
	for (int k = 0; k < LANE_TENSORS; k++)
		bad |= hvd_wait(h[waits_backwards ? LANE_TENSORS - 1 - k : k]) != HVD_OK;
	off = 0;
	for (int k = 0; k < LANE_TENSORS; k++) {
		size_t n = (size_t)k + 1 + (k == odd);
		for (size_t i = 0; i < n; i++)
			bad |= buf[off + i] != value + (float)i;
		off += n;
	}
	return bad;
}

static uint64_t lane_pushed_now(struct runtime *rt)
{
	runtime_lock(rt);
	uint64_t n = rt->lane.pushed;
	pthread_mutex_unlock(&rt->lock);
	return n;
}

/* HVD_CYCLE_TIME_MS=1000: a test thread descheduled in the first step
 * must not split the step's bucket (as the slurm tests do). */
static struct runtime *lane_runtime(void)
{
	unsetenv("HVD_SYNC");
	setenv("HVD_CYCLE_TIME_MS", "1000", 1);
	CHECK_MSG(hvd_init() == HVD_OK, "hvd_init: %s", hvd_error());
	struct runtime *rt = runtime_current();
	CHECK(rt && rt->boot.size == 1);
	return rt;
}

/* 30 steps: once the plan is cached, the 14 tensors inside the step's
 * bucket take the lane; a step whose eighth tensor grew takes the locked
 * way for it (the plan is broken there) and still completes; the steps
 * after it take the lane again, also when some wait for their tensors
 * last first (the entries come back in another order). */
static void test_lane_carries_a_repeated_step(void)
{
	struct runtime *rt = lane_runtime();
	float *buf = calloc(LANE_FLOATS, sizeof(float));
	for (int step = 0; step < 30; step++)
		CHECK_MSG(lane_step(buf, "lane", -1, (float)step, 0) == 0, "step %d", step);
	uint64_t before = lane_pushed_now(rt);
	CHECK_MSG(before >= 20 * (LANE_TENSORS - 2), "%llu submissions through the lane in 30 steps",
		  (unsigned long long)before);
	CHECK_MSG(lane_step(buf, "lane", 7, 100, 0) == 0, "the changed step");
	for (int step = 0; step < 30; step++)
		CHECK_MSG(lane_step(buf, "lane", -1, (float)step, 0) == 0, "step %d after", step);
	uint64_t after = lane_pushed_now(rt);
	CHECK_MSG(after - before >= 20 * (LANE_TENSORS - 2), "%llu through the lane after the change",
		  (unsigned long long)(after - before));
	/* waits in the other order: the recycled entries come back to other
	 * tensors, each must hold its own tensor's item, not the last one's */
	for (int step = 0; step < 20; step++)
		CHECK_MSG(lane_step(buf, "lane", -1, (float)step, step % 3 == 0) == 0,
			  "step %d, waits %s", step, step % 3 == 0 ? "backwards" : "in order");
	free(buf);
	CHECK_INT(hvd_shutdown(), HVD_OK);
}

struct side {
	int steps, bad;
};

static void *side_thread(void *arg)
{
	struct side *s = arg;
	float *buf = calloc(LANE_FLOATS, sizeof(float));
	for (int step = 0; step < s->steps && !s->bad; step++)
		s->bad = lane_step(buf, "side", -1, (float)(1000 + step), step % 2);
	free(buf);
	return NULL;
}

/* The lane's owner and another thread submit at once: the other thread
 * takes the locked way, which drains the owner's ring first, and its
 * tensors land between the owner's (the runs they break go the ordinary
 * way). Every handle completes with its own tensor. */
static void test_lane_and_a_second_thread_lose_nothing(void)
{
	struct runtime *rt = lane_runtime();
	float *buf = calloc(LANE_FLOATS, sizeof(float));
	for (int step = 0; step < 10; step++) /* the owner claims the lane */
		CHECK(lane_step(buf, "lane", -1, (float)step, 0) == 0);
	CHECK(lane_pushed_now(rt) > 0);
	struct side s = { .steps = 300 };
	pthread_t t;
	CHECK_INT(pthread_create(&t, NULL, side_thread, &s), 0);
	int bad = 0;
	for (int step = 0; step < 300 && !bad; step++)
		bad = lane_step(buf, "lane", -1, (float)step, 0);
	pthread_join(t, NULL);
	CHECK_MSG(!bad && !s.bad, "owner %d, other thread %d: %s", bad, s.bad, hvd_error());
	free(buf);
	CHECK_INT(hvd_shutdown(), HVD_OK);
}

/* The owner checked the failure flag, the runtime failed and its engine
 * thread failed what was pending and left, and only then did the owner
 * push: the next holder of the lock completes the entry with the failure
 * (nothing would ever run it), so its wait returns it instead of hanging.
 * Entries drained before the failure complete with it too. */
static void test_lane_entries_fail_with_the_runtime(void)
{
	struct runtime *rt = lane_runtime();
	float *buf = calloc(LANE_FLOATS, sizeof(float));
	for (int step = 0; step < 10; step++)
		CHECK(lane_step(buf, "lane", -1, (float)step, 0) == 0);
	hvd_handle *h[3];
	size_t off = 0;
	for (int k = 0; k < 2; k++) { /* the bucket's first (locked) and one inside it */
		char name[32];
		snprintf(name, sizeof(name), "lane.%d", k);
		CHECK_INT(hvd_allreduce_async(name, buf + off, (size_t)k + 1, HVD_F32, HVD_SUM, &h[k]),
			  HVD_OK);
		off += (size_t)k + 1;
	}
	runtime_fail(rt, HVD_ERR_ABORTED, "hvd: test: 'lane': failed on purpose");
	pthread_join(rt->engine_thread, NULL); /* it failed what was pending and left */
	rt->engine_started = 0;
	const struct fusion_item *want = lane_expected(&rt->lane); /* lane.2, as the owner would */
	CHECK(want && !strcmp(want->name, "lane.2"));
	struct entry *late = want ? entry_alloc_as(want, rt->lane.generation) : NULL;
	if (late) {
		late->data = buf + off;
		lane_push(&rt->lane, late, &late->tag);
		h[2] = &late->h;
	}
	for (int k = 0; k < 2 + (late != NULL); k++)
		CHECK_MSG(hvd_wait(h[k]) == HVD_ERR_ABORTED, "tensor lane.%d", k);
	CHECK_INT(hvd_allreduce_async("lane.3", buf, 4, HVD_F32, HVD_SUM, &h[0]), HVD_ERR_ABORTED);
	free(buf);
	hvd_shutdown();
}

/* lane_name_equal against strcmp: every length of a cached name (0 to
 * HVD_NAME_MAX - 1) against the same name, each one-byte change of it
 * (a high byte too: no zero-byte false alarm), a prefix and an extension
 * (by 0x80 too: its bit is the one that marks the cached name's NUL);
 * the caller's copy placed at every offset inside a word at a page's end
 * (its NUL the last byte before a PROT_NONE page: strcmp's side), at the
 * last place the word compare takes (its reads end at that page: a read
 * past it would crash) and inside the page. */
static int same_answer(const char *cached, const char *name)
{
	return lane_name_equal(cached, name) == !strcmp(cached, name);
}

/* 0 when every variant of the cached name (len bytes) written at `at`
 * (room for len + 2 bytes) compares as strcmp does. */
static int variants_differ(const char *cached, size_t len, char *at)
{
	int bad = 0;
	memcpy(at, cached, len + 1);
	bad |= !same_answer(cached, at);
	for (size_t i = 0; i < len; i++) {
		char was = at[i];
		at[i] = (char)(was == 'z' ? 'a' : was + 1);
		bad |= !same_answer(cached, at);
		at[i] = (char)0x90;
		bad |= !same_answer(cached, at);
		at[i] = was;
	}
	if (len) {
		at[len - 1] = '\0';   /* a prefix */
		bad |= !same_answer(cached, at);
		at[len - 1] = cached[len - 1];
	}
	at[len] = 'q';          /* one byte longer */
	at[len + 1] = '\0';
	bad |= !same_answer(cached, at);
	at[len] = (char)0x80;   /* its only bit where the cached NUL's test bit is */
	bad |= !same_answer(cached, at);
	return bad;
}

static void test_lane_name_compare_is_strcmp(void)
{
	long page = sysconf(_SC_PAGESIZE); /* lane_name_equal guards 4 KiB: a page's end is one */
	char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
	int bad = 0;
	for (size_t len = 0; len < HVD_NAME_MAX && !bad; len++) {
		char cached[HVD_NAME_MAX] = { 0 };
		for (size_t i = 0; i < len; i++)
			cached[i] = (char)('a' + (i * 7 + len) % 26);
		for (size_t shift = 0; shift < 8; shift++) {
			bad |= variants_differ(cached, len, map + page - (len + 2) - shift);
			bad |= variants_differ(cached, len, map + shift);
		}
		size_t last = len + 2 > HVD_NAME_MAX ? len + 2 : HVD_NAME_MAX;
		bad |= variants_differ(cached, len, map + page - last);
		CHECK_MSG(!bad, "a cached name of %zu bytes: lane_name_equal disagrees with strcmp", len);
	}
	munmap(map, 2 * (size_t)page);
}

const struct test_case runtime_lane_tests[] = {
	{ "lane_name_compare_is_strcmp", test_lane_name_compare_is_strcmp },
	{ "lane_carries_a_repeated_step", test_lane_carries_a_repeated_step },
	{ "lane_and_a_second_thread_lose_nothing", test_lane_and_a_second_thread_lose_nothing },
	{ "lane_entries_fail_with_the_runtime", test_lane_entries_fail_with_the_runtime },
	{ 0 }
};
