/* agree.c - the plan cache's fast path (Horovod's response cache and its
 * bit vector, DIGEST C1): after rank 0 has said so (an EXEC with
 * WIRE_EXEC_FAST: a planned step that every rank may repeat), the engines
 * decide the next buckets among themselves, with no frame on the control
 * plane. At each bucket boundary every engine votes once, as soon as its
 * own submissions allow: the id of the cached bucket it has submitted in
 * full there, or "no" (a tensor the cache does not have there, a changed
 * or broken run, a run still partial after HVD_CYCLE_TIME_MS, shutdown,
 * or rank 0's nudge). One small non-blocking collective on the backend
 * (MIN of id, -id, position, -position, layout) says whether every rank
 * voted the same id: then the bucket starts at once (the engine still
 * checks its signature), in place last first when every rank's tensors
 * lie that way (engine.c); anything else hands the position to rank 0, which
 * negotiates from there as without the fast path, with the same mismatch
 * and stall messages. An engine whose agreement waits past agree_escalate_s
 * (a rank that submits nothing) tells rank 0, which nudges every engine
 * at that position to vote now: the silent one says "no", every rank
 * announces its submissions to rank 0, and the stall inspector names the
 * rank and the tensors it did not submit.
 * What it does not do: run buckets (engine.c) or send frames (control).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime.h"

#define VOTE_NO (-1)
#define AGREE_VALUES 5

/* How long an agreement waits before rank 0 hears of it: well inside
 * HVD_STALL_WARNING_S and HVD_TIMEOUT_S, at most 1 s. */
double agree_escalate_s(const struct hvd_settings *s)
{
	double t = s->timeout_s / 4 < 1.0 ? s->timeout_s / 4 : 1.0;
	if (s->stall_warning_s > 0 && s->stall_warning_s / 2 < t)
		t = s->stall_warning_s / 2;
	return t;
}

/* Lock held. 1 when this rank can vote at rt->fast_pos now (*id: the
 * cached bucket submitted in full there, or VOTE_NO; *reversed: its
 * tensors lie last first in one buffer); 0 = not yet, look again at
 * *wake_at (0: at the next submission). */
static int local_vote(struct runtime *rt, double now, int64_t *id, int64_t *reversed,
		      double *wake_at)
{
	struct entry *e = rt->pending;
	int nudged = rt->nudged && rt->nudge_pos == rt->fast_pos;
	*id = VOTE_NO;
	*reversed = 0;
	if (!e)
		return rt->stopping || nudged;
	if (e->seq != rt->fast_pos || e->tag.id < 0 || e->tag.off != 0)
		return 1;
	uint32_t n = plan_cache_count(&rt->cache, e->tag.id), k = 0;
	for (const struct entry *x = e; x && k < n; x = x->next, k++)
		if (x->tag.id != e->tag.id || x->tag.off != k)
			return 1; /* the run broke: a changed, new or missing tensor */
	if (k == n) {
		*id = e->tag.id;
		*reversed = entries_reversed(rt, e->seq, n);
		return 1;
	}
	if (e->t_submit == 0) /* submitted before it became the head */
		e->t_submit = now;
	double flush = e->t_submit + rt->set.cycle_time_ms / 1000.0;
	if (nudged || rt->stopping || now >= flush)
		return 1;
	*wake_at = flush;
	return 0;
}

int agree_wants_wake(const struct runtime *rt, const struct entry *e)
{
	if (!rt->fast || e->tag.id < 0 || e->seq < rt->fast_pos)
		return rt->fast;
	uint32_t n = plan_cache_count(&rt->cache, e->tag.id);
	if (e->tag.off + 1 >= n)
		return 1; /* completes a run */
	return e->tag.off == 0 && e->seq != rt->fast_pos; /* breaks the run before it */
}

static void tell_rank0(struct runtime *rt, uint64_t pos)
{
	pthread_mutex_lock(&rt->lock);
	rt->waiting_pending = 1;
	rt->waiting_pos = pos;
	pthread_mutex_unlock(&rt->lock);
	control_wake(rt);
}

/* Yields while the other ranks are about to vote, then sleeps in short
 * steps (50 us for the first 50 ms, then 0.5 ms) so that a rank still
 * computing keeps its CPU. */
static void pause_briefly(unsigned spins)
{
	if (spins < 256) {
		sched_yield();
		return;
	}
	struct timespec ts = { 0, spins < 1256 ? 50000 : 500000 };
	nanosleep(&ts, NULL);
}

static int wait_agreement(struct runtime *rt, uint64_t pos, const struct comm_wait *w)
{
	const struct comm_ops *ops = rt->comm.ops;
	double escalate = runtime_now() + agree_escalate_s(&rt->set);
	int told = 0;
	for (unsigned spins = 0;; spins++) {
		int done = 0;
		int rc = ops->agree_test(rt->comm.ctx, &done, w);
		if (rc || done)
			return rc;
		if ((spins & 15) == 0) {
			if ((rc = comm_wait_check(w))) {
				if (rc == HVD_ERR_COMM)
					snprintf(w->err, w->errlen, "hvd: plan agreement: '%s': the other "
						 "ranks did not vote within HVD_TIMEOUT_S", w->what);
				return rc;
			}
			if (!told && runtime_now() >= escalate) {
				tell_rank0(rt, pos);
				told = 1;
			}
		}
		pause_briefly(spins);
	}
}

/* Unlocked. MIN over the ranks of v = { id, -id, pos, -pos, reversed }. */
static int run_agreement(struct runtime *rt, int64_t *v, uint64_t pos, char *err, size_t errlen)
{
	char what[64];
	snprintf(what, sizeof(what), "position %llu", (unsigned long long)pos);
	struct comm_wait w = {
		.deadline = runtime_now() + rt->set.timeout_s + 2 * rt->set.heartbeat_s +
			    agree_escalate_s(&rt->set),
		.abort = &rt->aborted, .what = what, .err = err, .errlen = errlen,
	};
	int rc = rt->comm.ops->agree_start(rt->comm.ctx, v, AGREE_VALUES, &w);
	rc = rc ? rc : wait_agreement(rt, pos, &w);
	if (!rc && v[2] != -v[3]) {
		snprintf(err, errlen, "hvd: plan agreement: '%s': the engines are at positions "
			 "%lld..%lld (internal error)", what, (long long)v[2], (long long)-v[3]);
		rc = HVD_ERR_COMM;
	}
	return rc;
}

/* Lock held: the agreed bucket's tensors leave the negotiation (a span a
 * worker opened before the switch ends), tick PLAN_AGREED, enter QUEUE. */
static struct exec_cmd *agreed_bucket(struct runtime *rt, uint64_t pos, int64_t id, int reversed)
{
	struct exec_cmd *cmd = calloc(1, sizeof(*cmd));
	if (!cmd)
		return NULL;
	cmd->first = pos;
	cmd->count = plan_cache_count(&rt->cache, id);
	cmd->signature = plan_cache_signature(&rt->cache, id);
	cmd->agreed = 1;
	cmd->reversed = reversed;
	for (struct entry *e = rt->pending; e && rt->tl; e = e->next)
		if (e->seq >= pos && e->seq < pos + cmd->count) {
			if (e->nego_open)
				timeline_end(rt->tl, e->item.name, NULL);
			timeline_tick(rt->tl, e->item.name, "PLAN_AGREED");
			timeline_begin(rt->tl, e->item.name, "QUEUE");
		}
	for (struct entry *e = rt->pending; e && e->seq < pos + cmd->count; e = e->next)
		e->nego_open = 0;
	rt->fast_pos = pos + cmd->count;
	rt->fast_buckets++;
	return cmd;
}

struct exec_cmd *agree_next(struct runtime *rt, double *wake_at)
{
	int64_t id, reversed;
	*wake_at = 0;
	if (!local_vote(rt, runtime_now(), &id, &reversed, wake_at))
		return NULL;
	uint64_t pos = rt->fast_pos;
	pthread_mutex_unlock(&rt->lock);
	int64_t v[AGREE_VALUES] = { id, -id, (int64_t)pos, -(int64_t)pos, reversed };
	char err[1024] = "";
	int rc = run_agreement(rt, v, pos, err, sizeof(err));
	if (rc && !rt->aborted)
		runtime_fail(rt, rc, "%s", err);
	pthread_mutex_lock(&rt->lock);
	if (rc)
		return NULL;
	if (id >= 0 && v[0] == id && v[1] == -id) {
		struct exec_cmd *cmd = agreed_bucket(rt, pos, id, v[4] == 1);
		if (cmd)
			return cmd;
		pthread_mutex_unlock(&rt->lock);
		runtime_fail(rt, HVD_ERR_NOMEM, "hvd: engine: 'bucket': out of memory");
		pthread_mutex_lock(&rt->lock);
		return NULL;
	}
	rt->fast = 0; /* some rank said no: rank 0 negotiates from pos on */
	rt->slow_pending = 1;
	rt->slow_from = pos;
	control_wake(rt);
	return NULL;
}
