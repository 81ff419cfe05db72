/* engine/state.c - what every part of the runtime shares: the running
 * runtime (runtime_rt), the first failure (runtime_fail*: recorded once,
 * every waiter woken, with the ranks it lost: hvd_lost_ranks' record,
 * kept for the process), the rank suffix of messages, the control thread's
 * wake-up pipe (control_wake), the mailbox's posts (runtime_post) and the
 * pending list (a submission queued, handles completed). api/, engine/
 * and control/ call it; it calls nothing above it.
 * What it does not do: start or stop anything (api.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/runtime.h"

struct runtime *runtime_rt;

void runtime_suffix(const struct runtime *rt, char *out, size_t len)
{
	snprintf(out, len, " [rank %d/%d %s]", rt->boot.rank, rt->boot.size, rt->boot.hostname);
}

struct hvd_lost runtime_lost;

void runtime_lost_of(const struct runtime *rt, enum hvd_lost_kind kind, const int *ranks, int n,
		     struct hvd_lost *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	for (int i = 0; i < n && out->count < HVD_LOST_MAX; i++)
		if (ranks[i] >= 0 && ranks[i] < rt->boot.size)
			out->ranks[out->count++] = ranks[i];
	for (int i = 0; i < out->count && rt->hosts; i++)
		if (strcmp(rt->hosts[out->ranks[i]].host, "?"))
			snprintf(out->hosts[i], HVD_HOST_MAX, "%s", rt->hosts[out->ranks[i]].host);
}

void runtime_fail_text(struct runtime *rt, int code, const char *text, int remote,
		       const struct hvd_lost *lost)
{
	pthread_mutex_lock(&rt->lock);
	if (!rt->aborted) {
		snprintf(rt->error, sizeof(rt->error), "%s", text);
		rt->error_code = code;
		rt->fail_pending_send = !remote;
		rt->aborted = 1;
		if (lost)
			runtime_lost = *lost;
		else
			memset(&runtime_lost, 0, sizeof(runtime_lost));
	}
	pthread_cond_broadcast(&rt->cond);
	pthread_cond_broadcast(&rt->work);
	pthread_mutex_unlock(&rt->lock);
	control_wake(rt);
}

static void fail_va(struct runtime *rt, int code, const struct hvd_lost *lost, const char *fmt,
		    va_list ap)
{
	char text[2048], suffix[300];
	vsnprintf(text, sizeof(text), fmt, ap);
	runtime_suffix(rt, suffix, sizeof(suffix));
	if (strlen(text) + strlen(suffix) < sizeof(text))
		strcat(text, suffix);
	runtime_fail_text(rt, code, text, 0, lost);
}

void runtime_fail(struct runtime *rt, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_va(rt, code, NULL, fmt, ap);
	va_end(ap);
}

void runtime_fail_lost(struct runtime *rt, int code, enum hvd_lost_kind kind, const int *ranks,
		       int n, const char *fmt, ...)
{
	struct hvd_lost *lost = malloc(sizeof(*lost));
	va_list ap;
	if (lost)
		runtime_lost_of(rt, kind, ranks, n, lost);
	va_start(ap, fmt);
	fail_va(rt, code, lost, fmt, ap);
	va_end(ap);
	free(lost);
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

void runtime_complete(struct runtime *rt, struct entry **es, size_t n, int status)
{
	for (size_t i = 0; i < n; i++) {
		es[i]->h.status = status;
		/* the last touch: hvd_wait may free the entry with its handle as
		 * soon as it sees this, without taking the lock */
		__atomic_store_n(&es[i]->h.done, 1, __ATOMIC_RELEASE);
	}
	pthread_cond_broadcast(&rt->cond);
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

/* Unlocked: a failure on the wire is often the echo of another rank's;
 * the control plane gets RUNTIME_CAUSE_WAIT_S to name that rank before
 * this rank's own, vaguer, reason is taken. */
#define RUNTIME_CAUSE_WAIT_S 1.0

void runtime_fail_collective(struct runtime *rt, int rc, const char *err)
{
	double until = runtime_now() + RUNTIME_CAUSE_WAIT_S;
	while (rc == HVD_ERR_COMM && !rt->aborted && rt->ctl && runtime_now() < until)
		usleep(10000);
	if (rc && !rt->aborted)
		runtime_fail(rt, rc, "%s", err);
}

void runtime_post(struct runtime *rt, enum mail_kind kind, uint64_t pos)
{
	mailbox_put(&rt->mail, kind, pos);
	if (kind & MAIL_TO_CONTROL)
		control_wake(rt);
	else
		pthread_cond_broadcast(&rt->work);
}

void runtime_mail(struct runtime *rt, enum mail_kind kind, uint64_t pos)
{
	pthread_mutex_lock(&rt->lock);
	runtime_post(rt, kind, pos);
	pthread_mutex_unlock(&rt->lock);
}

void control_wake(struct runtime *rt)
{
	/* one byte in the pipe is enough until the control thread drains it */
	if (rt->ctl && rt->ctl_wake[1] >= 0 &&
	    !__atomic_exchange_n(&rt->ctl_woken, 1, __ATOMIC_ACQ_REL)) {
		char b = 1;
		ssize_t w = write(rt->ctl_wake[1], &b, 1);
		(void)w;
	}
}
