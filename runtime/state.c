/* state.c - what every part of the runtime shares: the running runtime
 * (runtime_rt), the first failure (runtime_fail*: recorded once, every
 * waiter woken), this thread's hvd_error() text, the rank suffix of
 * messages, the monotonic clock and the control thread's wake-up pipe
 * (control_wake). Leaf of the runtime: api.c, engine.c and the control
 * plane call it; it calls none of them.
 * What it does not do: start or stop anything (api.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "dtype.h"
#include "runtime.h"

struct runtime *runtime_rt;
static __thread char tls_error[2048];

static int set_error(int code, const char *text)
{
	snprintf(tls_error, sizeof(tls_error), "%s", text);
	return code;
}

const char *hvd_error(void)
{
	return tls_error;
}

const char *hvd_version(void)
{
	return HVD_VERSION;
}

void runtime_suffix(const struct runtime *rt, char *out, size_t len)
{
	snprintf(out, len, " [rank %d/%d %s]", rt->boot.rank, rt->boot.size, rt->boot.hostname);
}

void runtime_fail_text(struct runtime *rt, int code, const char *text, int remote)
{
	pthread_mutex_lock(&rt->lock);
	if (!rt->aborted) {
		snprintf(rt->error, sizeof(rt->error), "%s", text);
		rt->error_code = code;
		rt->fail_pending_send = !remote;
		rt->aborted = 1;
	}
	pthread_cond_broadcast(&rt->cond);
	pthread_cond_broadcast(&rt->work);
	pthread_mutex_unlock(&rt->lock);
	control_wake(rt);
}

void runtime_fail(struct runtime *rt, int code, const char *fmt, ...)
{
	char text[2048], suffix[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	runtime_suffix(rt, suffix, sizeof(suffix));
	if (strlen(text) + strlen(suffix) < sizeof(text))
		strcat(text, suffix);
	runtime_fail_text(rt, code, text, 0);
}

struct runtime *runtime_current(void)
{
	return runtime_rt;
}

int runtime_set_error(int code, const char *text)
{
	return set_error(code, text);
}

double runtime_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void runtime_queue_entry(struct runtime *rt, struct entry *e)
{
	e->seq = rt->next_seq++;
	e->t_submit = rt->fast && e->seq == rt->fast_pos ? runtime_now() : 0; /* agree.c: else later */
	e->tag = plan_cursor_next(&rt->cache, &rt->cursor, &e->item);
	if (rt->pending_tail)
		rt->pending_tail->next = e;
	else
		rt->pending = e;
	rt->pending_tail = e;
}

int entries_reversed(const struct runtime *rt, uint64_t first, uint32_t count)
{
	const struct entry *prev = NULL;
	uint32_t n = 0;
	for (const struct entry *e = rt->pending; e && n < count; e = e->next) {
		if (e->seq != first + n)
			continue;
		if (e->item.kind != FUSION_ALLREDUCE || (prev && !entry_follows(e, prev)))
			break;
		prev = e;
		n++;
	}
	return count > 1 && n == count;
}

void control_wake(struct runtime *rt)
{
	/* one byte in the pipe is enough until the control thread drains it */
	if (rt->ctl && rt->ctl->wake[1] >= 0 &&
	    !__atomic_exchange_n(&rt->ctl->woken, 1, __ATOMIC_ACQ_REL)) {
		char b = 1;
		ssize_t w = write(rt->ctl->wake[1], &b, 1);
		(void)w;
	}
}
