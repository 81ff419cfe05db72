/* agree.c - the plan cache's fast path (Horovod's response cache and its
 * bit vector, DIGEST C1): after rank 0 has said so (an EXEC with
 * WIRE_EXEC_FAST: a planned step that every rank may repeat), the engines
 * decide the next buckets among themselves, with no frame on the control
 * plane. At each bucket boundary every engine votes once, as soon as its
 * own submissions allow: the ids of the cached buckets it has submitted in
 * full from there on (up to AGREE_MERGE_MAX that may run as one bucket),
 * or "no" (a tensor the cache does not have there, a changed or broken
 * run, a run still partial after HVD_CYCLE_TIME_MS, shutdown, or rank 0's
 * nudge), or "barrier" when it calls hvd_barrier there (every rank's
 * alike: the vote was the barrier, and the engines go on agreeing). One
 * small non-blocking collective on the backend (MIN of each
 * id and its negation, of the layouts, of the position and its negation,
 * and of rank 0's piece size, HVD_FUSION_CHUNK) says how many of those
 * buckets every rank voted alike: they start at once as one bucket, in
 * place last first when every rank's tensors lie that way, in rank 0's
 * pieces on every rank (engine.c). Buckets that a first step's timing
 * split (HVD_CYCLE_TIME_MS while the plan was learnt) so run together
 * when a program submits them together, and apart when it does not (a
 * backward pass). No agreed bucket hands the position to rank 0, which
 * negotiates from there as without the fast path, with the same mismatch
 * and stall messages. An engine whose agreement waits past settings_escalate_s
 * (a rank that submits nothing) tells rank 0, which nudges every engine
 * at that position to vote now: the silent one says "no", every rank
 * announces its submissions to rank 0, and the stall inspector names the
 * rank and the tensors it did not submit.
 * What it does not do: run buckets (engine.c) or send frames (control).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/fail.h"
#include "engine/runtime.h"

#define VOTE_NO (-1)
/* A barrier at the position: no cached bucket has this id (ids are below
 * 2^32), so a rank voting for a bucket or "no" there disagrees. */
#define VOTE_BARRIER ((int64_t)1 << 40)
/* The vote: AGREE_MERGE_MAX id pairs (id, -id), AGREE_MERGE_MAX layouts
 * (1: the first j + 1 buckets lie last first in one buffer), the
 * position pair, then the piece size (rank 0's; the others say
 * INT64_MAX): every rank reduces the bucket in the same pieces. */
#define AGREE_MERGE_MAX 8
#define VOTE_LAYOUT (2 * AGREE_MERGE_MAX)
#define VOTE_POS (3 * AGREE_MERGE_MAX)
#define VOTE_CHUNK (3 * AGREE_MERGE_MAX + 2)
#define AGREE_VALUES (3 * AGREE_MERGE_MAX + 3)
_Static_assert(AGREE_VALUES <= VOTE_MAX_VALUES, "a vote the coordination plane carries");

/* A waiter that comes this soon after a run completes takes the bucket
 * itself (engine_lend); the program waits right after submitting. */
#define AGREE_WAITER_PROMPT_S 50e-6

/* What one pass over the runs a vote covers learns (lock held): the
 * last tensor, and whether they lie one after another in memory, last
 * first (rev). */
struct scan {
	int rev;
	struct entry *last;
};

/* Lock held. Whether the cached run at e (an entry at its first tensor)
 * is submitted in full: its length, or 0 (partial or broken: *broken).
 * A complete run extends s. */
static uint32_t complete_run(struct runtime *rt, struct entry *e, struct scan *s, int *broken)
{
	uint32_t n = plan_cache_entry(&rt->cache, e->tag.id)->count, k = 0;
	struct entry *x = e, *prev = s->last;
	int rev = s->rev;
	for (; x && k < n; prev = x, x = x->next, k++) {
		if (x->tag.id != e->tag.id || x->tag.off != k || x->seq != e->seq + k) {
			*broken = 1; /* a changed, new or missing tensor */
			return 0;
		}
		if (prev)
			rev &= entry_follows(x, prev);
	}
	*broken = 0;
	if (k < n)
		return 0;
	s->last = prev;
	s->rev = rev;
	return n;
}

/* Whether cached bucket `id` may run fused after `first` (fusion_fusable;
 * HVD_FUSION_THRESHOLD bytes in all, *bytes so far). The same on every
 * rank. */
static int mergeable(const struct runtime *rt, int64_t first, int64_t id, uint64_t *bytes)
{
	const struct fusion_item *a = plan_cache_item(&rt->cache, first, 0);
	const struct fusion_item *b = plan_cache_item(&rt->cache, id, 0);
	uint64_t more = plan_cache_entry(&rt->cache, id)->bytes;
	if (!a || !b || !fusion_fusable(a, b) || *bytes + more > rt->set.fusion_threshold_bytes)
		return 0;
	*bytes += more;
	return 1;
}

/* Lock held: votes for the complete cached runs that follow the first
 * (e, scanned into s), for as long as they may run with it. A layout
 * says whether the runs so far lie last first in one buffer. */
static void vote_following(struct runtime *rt, const struct entry *e, struct scan *s, int64_t *v)
{
	uint64_t bytes = plan_cache_entry(&rt->cache, e->tag.id)->bytes;
	for (int j = 1; j < AGREE_MERGE_MAX && s->last->next; j++) {
		struct entry *x = s->last->next;
		struct scan t = *s;
		int broken;
		if (x->tag.id < 0 || x->tag.off != 0 || !mergeable(rt, e->tag.id, x->tag.id, &bytes) ||
		    !complete_run(rt, x, &t, &broken))
			return;
		v[2 * j] = x->tag.id;
		v[2 * j + 1] = -(int64_t)x->tag.id;
		v[VOTE_LAYOUT + j] = t.rev;
		*s = t;
	}
}

/* Lock held. 1 when this rank can vote at rt->fast_pos now (v: the vote,
 * VOTE_NO where it has nothing); 0 = not yet, look
 * again at *wake_at (0: at the next submission). The engine thread
 * leaves a run completed a moment ago to a waiter for
 * AGREE_WAITER_PROMPT_S: taking it would hold up the program's thread
 * it shares a core with. */
static int local_vote(struct runtime *rt, double now, int by_waiter, int64_t *v, double *wake_at)
{
	struct entry *e = rt->pending;
	struct scan s = { .rev = 1 }; /* what this rank votes for */
	int nudged = mailbox_has(&rt->mail, MAIL_NUDGE, rt->fast_pos);
	for (int j = 0; j < AGREE_MERGE_MAX; j++) {
		v[2 * j] = VOTE_NO;
		v[2 * j + 1] = -VOTE_NO;
		v[VOTE_LAYOUT + j] = 0;
	}
	v[VOTE_POS] = (int64_t)rt->fast_pos;
	v[VOTE_POS + 1] = -(int64_t)rt->fast_pos;
	v[VOTE_CHUNK] = rt->boot.rank ? INT64_MAX : (int64_t)rt->set.fusion_chunk_bytes;
	if (!e)
		return rt->stopping || nudged;
	if (e->seq == rt->fast_pos && e->item.kind == FUSION_BARRIER) {
		v[0] = VOTE_BARRIER; /* every rank's alike: the vote was the barrier */
		v[1] = -VOTE_BARRIER;
		return 1;
	}
	if (e->seq != rt->fast_pos || e->tag.id < 0 || e->tag.off != 0)
		return 1;
	int broken;
	uint32_t n = complete_run(rt, e, &s, &broken);
	if (broken)
		return 1;
	double left_to_waiter = rt->run_completed_at + AGREE_WAITER_PROMPT_S;
	if (n && !by_waiter && !nudged && !rt->stopping && now < left_to_waiter) {
		*wake_at = left_to_waiter;
		return 0;
	}
	if (n) {
		v[0] = e->tag.id;
		v[1] = -(int64_t)e->tag.id;
		v[VOTE_LAYOUT] = n > 1 && s.rev;
		vote_following(rt, e, &s, v);
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

int agree_wants_wake(struct runtime *rt, const struct entry *e)
{
	if (!rt->fast || e->tag.id < 0 || e->seq < rt->fast_pos)
		return rt->fast;
	uint32_t n = plan_cache_entry(&rt->cache, e->tag.id)->count;
	if (e->tag.off + 1 >= n) { /* completes a run */
		rt->run_completed_at = runtime_now();
		return !rt->waiter_comes;
	}
	/* a run begun behind a complete or broken one: unless waiters come
	 * promptly (one takes both), the program submits on (a backward
	 * pass), and the engine thread starts that one at once */
	if (e->tag.off != 0 || e->seq == rt->fast_pos || rt->waiter_comes)
		return 0;
	rt->run_completed_at = 0;
	return 1;
}

double agree_note_waiter(struct runtime *rt)
{
	if (rt->run_completed_at <= 0)
		return 0;
	double now = runtime_now();
	rt->waiter_comes = now - rt->run_completed_at < AGREE_WAITER_PROMPT_S;
	rt->run_completed_at = 0;
	return now;
}

/* Spins, then yields while the other ranks are about to vote
 * (comm_poll_pause), then sleeps in short steps (50 us for the first
 * 50 ms, then 0.5 ms) so that a rank still computing keeps its CPU. */
static void pause_briefly(unsigned spins)
{
	struct timespec ts = { 0, spins < 1256 ? 50000 : 500000 };
	if (spins < 256)
		comm_poll_pause(spins);
	else
		nanosleep(&ts, NULL);
}

/* escalate: when rank 0 hears of it. */
static int wait_agreement(struct runtime *rt, uint64_t pos, double escalate, const struct comm_wait *w)
{
	const struct vote_ops *ops = rt->vote.ops;
	int told = 0;
	for (unsigned spins = 0;; spins++) {
		int done = 0;
		int rc = ops->test(rt->vote.ctx, &done, w);
		if (rc || done)
			return rc;
		if ((spins & 15) == 0) {
			rc = comm_wait_check(w, NULL);
			if (rc == HVD_ERR_COMM)
				return fail_msg(rc, w->err, w->errlen, "hvd: plan agreement: '%s': the "
						"other ranks did not vote within HVD_TIMEOUT_S", w->what);
			if (rc)
				return rc;
			if (!told && runtime_now() >= escalate) {
				runtime_mail(rt, MAIL_WAITING, pos); /* rank 0 hears of it */
				told = 1;
			}
		}
		pause_briefly(spins);
	}
}

/* Unlocked. MIN over the ranks of the vote v, in place; now: when the
 * vote was taken (one clock read serves the vote and both deadlines). */
static int run_agreement(struct runtime *rt, int64_t *v, uint64_t pos, double now, char *err,
			 size_t errlen)
{
	char what[32];
	snprintf(what, sizeof(what), "position %llu", (unsigned long long)pos);
	struct comm_wait w = {
		.deadline = now + rt->set.timeout_s + 2 * rt->set.heartbeat_s +
			    settings_escalate_s(&rt->set),
		.abort = &rt->aborted, .naming_until = &rt->naming_until, .what = what, .err = err,
		.errlen = errlen,
	};
	int rc = rt->vote.ops->start(rt->vote.ctx, v, AGREE_VALUES, &w);
	rc = rc ? rc : wait_agreement(rt, pos, now + settings_escalate_s(&rt->set), &w);
	if (!rc && v[VOTE_POS] != -v[VOTE_POS + 1])
		rc = fail_msg(HVD_ERR_COMM, err, errlen, "hvd: plan agreement: '%s': the engines are "
			      "at positions %lld..%lld (internal error)", what, (long long)v[VOTE_POS],
			      (long long)-v[VOTE_POS + 1]);
	return rc;
}

/* Lock held: the agreed bucket's tensors leave the negotiation (a span a
 * worker opened before the switch ends), tick PLAN_AGREED, enter QUEUE;
 * a barrier every rank voted for is done (the vote was it). NULL after
 * failing the runtime. */
static struct exec_cmd *agreed_bucket(struct runtime *rt, uint64_t pos, const int64_t *v,
				      int agreed)
{
	struct exec_cmd *cmd = calloc(1, sizeof(*cmd));
	if (!cmd) {
		pthread_mutex_unlock(&rt->lock);
		runtime_fail(rt, HVD_ERR_NOMEM, "%s", "hvd: engine: 'bucket': out of memory");
		pthread_mutex_lock(&rt->lock);
		return NULL;
	}
	int barrier = v[0] == VOTE_BARRIER; /* one tensor, done: the vote was it */
	*cmd = (struct exec_cmd){ .first = pos, .count = barrier, .agreed = 1,
		.signature = barrier ? 0 : plan_cache_entry(&rt->cache, v[0])->signature,
		.barrier_voted = barrier, .reversed = v[VOTE_LAYOUT + agreed - 1] == 1,
		.chunk_bytes = (uint64_t)v[VOTE_CHUNK] };
	for (int j = 0; !barrier && j < agreed; j++)
		cmd->count += plan_cache_entry(&rt->cache, v[2 * j])->count;
	/* nego_open only says whether a worker's NEGOTIATE span is open */
	for (struct entry *e = rt->pending; rt->tl && e && e->seq < pos + cmd->count; e = e->next) {
		if (e->seq < pos)
			continue;
		if (e->nego_open)
			timeline_end(rt->tl, e->item.name, NULL);
		timeline_tick(rt->tl, e->item.name, "PLAN_AGREED");
		timeline_begin(rt->tl, e->item.name, "QUEUE");
		e->nego_open = 0;
	}
	rt->fast_pos = pos + cmd->count;
	rt->fast_buckets++;
	return cmd;
}

struct exec_cmd *agree_next(struct runtime *rt, int by_waiter, double now, double *wake_at)
{
	int64_t v[AGREE_VALUES];
	*wake_at = 0;
	if (now <= 0)
		now = runtime_now();
	if (!local_vote(rt, now, by_waiter, v, wake_at))
		return NULL;
	uint64_t pos = rt->fast_pos;
	pthread_mutex_unlock(&rt->lock);
	char err[1024] = "";
	int rc = run_agreement(rt, v, pos, now, err, sizeof(err));
	runtime_fail_collective(rt, rc, err); /* a closed ring link: another rank's failure? */
	pthread_mutex_lock(&rt->lock);
	if (rc)
		return NULL;
	int agreed = 0; /* how many buckets every rank voted alike, from the first on */
	while (agreed < AGREE_MERGE_MAX && v[2 * agreed] >= 0 && v[2 * agreed] == -v[2 * agreed + 1])
		agreed++;
	if (agreed)
		return agreed_bucket(rt, pos, v, agreed);
	/* some rank said no: rank 0 negotiates from pos on */
	rt->fast = 0;
	runtime_post(rt, MAIL_NEGOTIATE, pos);
	return NULL;
}
