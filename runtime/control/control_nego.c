/* control_nego.c - negotiation on the control thread: local submissions
 * (tagged against the plan cache when submitted) are announced (workers:
 * a SUBMIT per negotiated tensor, one HIT per run of a cached bucket;
 * rank 0: straight into the coordinator); rank 0 plans buckets as soon as
 * every rank submitted them (a partly submitted one waits at most
 * HVD_CYCLE_TIME_MS), sends them as EXECs and queues them for its own
 * engine; every rank learns negotiated buckets into its plan cache in
 * EXEC order. After a repeated or learnt bucket with nothing else waiting
 * rank 0 hands the following positions to the engines (WIRE_EXEC_FAST,
 * agree.c): nothing is announced until an engine hands a position back
 * (they disagreed), and an agreement that waits is relayed to rank 0,
 * which nudges every engine to vote. What it does not do: read sockets
 * (control_loop.c) or run collectives (engine.c, agree.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control_state.h"

static const char *negotiate_phase(const struct fusion_item *it)
{
	static const char *names[] = { "NEGOTIATE_ALLREDUCE", "NEGOTIATE_BROADCAST",
				       "NEGOTIATE_ALLGATHER", "NEGOTIATE_BARRIER" };
	return it->kind < 4 ? names[it->kind] : "NEGOTIATE";
}

/* Rank 0: one more submission from `rank` reaches the coordinator; a
 * cached one (tag.id >= 0) opens no NEGOTIATE span. */
static void coordinator_take(struct control *c, int rank, const struct fusion_item *it,
			     struct plan_tag tag)
{
	struct runtime *rt = c->rt;
	const struct coord_queue *q = &c->coord.q[rank];
	if (q->len - q->head >= WIRE_MAX_QUEUED) {
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: rank %d (host %s): '%u submissions': not yet "
			     "planned because other ranks did not submit them; more is a runaway or "
			     "hostile rank", rank, control_host_of(rt, rank), WIRE_MAX_QUEUED);
		return;
	}
	/* the stall clock starts now, but a submission announced after the
	 * engines' agreement at its position waited and was nudged (agree.c)
	 * reaches the coordinator late: the ranks have waited since before
	 * the nudge, and a stall is timed from then */
	uint64_t at = c->coord.planned + (q->len - q->head);
	double now = runtime_now();
	int nudged = c->nudge_sent && at == c->nudge_last && c->nudge_since < now;
	int64_t pos = coord_submit(&c->coord, rank, it, tag, nudged ? c->nudge_since : now);
	if (pos < 0) {
		runtime_fail(rt, HVD_ERR_NOMEM, "hvd: coordinator: '%s': out of memory", it->name);
		return;
	}
	if ((uint64_t)pos >= c->nego_begun) {
		if (tag.id < 0)
			timeline_begin(rt->tl, it->name, negotiate_phase(it));
		if (c->nego_open)
			c->nego_open[(uint64_t)pos % CTL_NEGO_RING] = tag.id < 0;
		c->nego_begun = (uint64_t)pos + 1;
	}
	char tick[16];
	snprintf(tick, sizeof(tick), "%d", rank);
	timeline_tick(rt->tl, it->name, tick);
}

/* Up to max local submissions from position `from` on, with their plan
 * cache tags (set at submission). A worker's entry remembers that its
 * NEGOTIATE span is open (opens[i]: it opens now; one announced before a
 * switch to the fast path and announced again keeps its span). */
static int collect_local(struct control *c, uint64_t from, struct fusion_item *items,
			 struct plan_tag *tags, int *opens, int max)
{
	struct runtime *rt = c->rt;
	int n = 0;
	pthread_mutex_lock(&rt->lock);
	for (struct entry *e = rt->pending; e && n < max; e = e->next)
		if (e->seq == from + (uint64_t)n) {
			items[n] = e->item;
			tags[n] = e->tag;
			opens[n] = rt->boot.rank != 0 && tags[n].id < 0 && !e->nego_open;
			e->nego_open |= opens[n];
			n++;
		}
	pthread_mutex_unlock(&rt->lock);
	return n;
}

static void send_or_fail(struct control *c, uint32_t type, const void *payload, uint32_t len)
{
	int rank0 = 0;
	if (control_send_msg(c->peers[0].fd, type, payload, len))
		runtime_fail_lost(c->rt, HVD_ERR_ABORTED, HVD_LOST_UNREACHABLE, &rank0, 1, "hvd: "
				  "control plane: 'rank 0 (host %s)': cannot send: %s",
				  control_host_of(c->rt, 0), strerror(errno));
}

/* Worker: misses as SUBMITs (NEGOTIATE span), runs of one cached bucket
 * as one HIT. */
static void announce_to_root(struct control *c, const struct fusion_item *items,
			     const struct plan_tag *tags, const int *opens, int n)
{
	for (int i = 0; i < n;) {
		if (tags[i].id < 0) {
			if (opens[i])
				timeline_begin(c->rt->tl, items[i].name, negotiate_phase(&items[i]));
			struct fusion_item it = items[i]; /* after its NUL: zeros, not */
			size_t len = strlen(it.name);     /* a recycled entry's bytes */
			memset(it.name + len, 0, sizeof(it.name) - len);
			send_or_fail(c, MSG_SUBMIT, &it, sizeof(it));
			i++;
			continue;
		}
		struct wire_hit h = { (uint32_t)tags[i].id, tags[i].off, 1, 0 };
		while (i + (int)h.count < n && tags[i + h.count].id == tags[i].id &&
		       tags[i + h.count].off == tags[i].off + h.count)
			h.count++;
		send_or_fail(c, MSG_HIT, &h, sizeof(h));
		i += (int)h.count;
	}
}

/* Local submissions not yet announced: to rank 0 (workers) or straight
 * into the coordinator (rank 0); none while the engines agree. */
void control_announce(struct control *c)
{
	enum { BATCH = 64 };
	struct fusion_item items[BATCH];
	struct plan_tag tags[BATCH];
	int opens[BATCH];
	while (!c->fast && !c->rt->aborted) {
		int n = collect_local(c, c->announced, items, tags, opens, BATCH);
		if (!n)
			return;
		if (c->rt->boot.rank == 0)
			for (int i = 0; i < n; i++)
				coordinator_take(c, 0, &items[i], tags[i]);
		else
			announce_to_root(c, items, tags, opens, n);
		c->announced += (uint64_t)n;
	}
}

/* Queue a bucket for the local engine; close the NEGOTIATE spans that
 * were opened, open QUEUE (rank 0 marks a bucket started from the plan
 * cache with a PLAN_CACHED tick on each tensor). */
static void push_exec(struct control *c, const struct wire_exec *x, int cached)
{
	struct runtime *rt = c->rt;
	struct exec_cmd *cmd = calloc(1, sizeof(*cmd));
	if (!cmd) {
		runtime_fail(rt, HVD_ERR_NOMEM, "hvd: engine: 'bucket': out of memory");
		return;
	}
	*cmd = (struct exec_cmd){ .first = x->first, .count = x->count, .signature = x->signature,
				  .reversed = !!(x->flags & WIRE_EXEC_REVERSED),
				  .fast_after = (x->flags & WIRE_EXEC_FAST) != 0 };
	pthread_mutex_lock(&rt->lock);
	for (struct entry *e = rt->pending; e && rt->tl; e = e->next)
		if (e->seq >= x->first && e->seq < x->first + x->count) {
			uint8_t *ring = c->nego_open ? &c->nego_open[e->seq % CTL_NEGO_RING] : NULL;
			if (ring ? *ring : e->nego_open)
				timeline_end(rt->tl, e->item.name, NULL);
			if (ring)
				*ring = 0;
			if (cached)
				timeline_tick(rt->tl, e->item.name, "PLAN_CACHED");
			timeline_begin(rt->tl, e->item.name, "QUEUE");
		}
	for (struct entry *e = rt->pending; e && e->seq < x->first + x->count; e = e->next)
		e->nego_open = 0;
	if (rt->execs_tail)
		rt->execs_tail->next = cmd;
	else
		rt->execs = cmd;
	rt->execs_tail = cmd;
	pthread_cond_broadcast(&rt->work);
	pthread_mutex_unlock(&rt->lock);
}

/* Worker: an EXEC with WIRE_EXEC_LEARN appends this rank's own tensors of
 * the bucket to the plan cache, as rank 0 did when it planned it. */
static int learn_exec(struct control *c, const struct wire_exec *x)
{
	struct runtime *rt = c->rt;
	struct fusion_item *items = malloc(x->count * sizeof(*items));
	uint32_t n = 0;
	if (!items)
		return HVD_ERR_NOMEM;
	pthread_mutex_lock(&rt->lock); /* submitters read the cache */
	for (struct entry *e = rt->pending; e && n < x->count; e = e->next)
		if (e->seq == x->first + n)
			items[n++] = e->item;
	int rc = n != x->count ? HVD_ERR_COMM
		 : plan_cache_can_learn(&rt->cache, items, n) && plan_cache_learn(&rt->cache, items, n) >= 0
		 ? 0 : HVD_ERR_NOMEM;
	pthread_mutex_unlock(&rt->lock);
	free(items);
	return rc;
}

/* A frame only rank 0 (to_rank0) or only workers take, of `want` bytes:
 * 1, or 0 with the sender failed by name. */
static int frame_fits(struct control *c, int from, const char *what, int to_rank0,
		      uint32_t len, size_t want)
{
	int at_rank0 = c->rt->boot.rank == 0;
	const char *why = at_rank0 != to_rank0 ? (at_rank0 ? "sent to rank 0" : "sent to a worker")
			  : len != want ? "wrong length" : NULL;
	if (why)
		control_bad_frame(c, from, what, why);
	return !why;
}

void control_on_submit(struct control *c, int from, uint32_t type, const char *payload,
		       uint32_t len)
{
	struct fusion_item it;
	char why[128];
	if (!frame_fits(c, from, "SUBMIT", 1, len, sizeof(it)))
		return;
	memcpy(&it, payload, sizeof(it));
	if (wire_check_item(&it, c->rt->boot.size, why, sizeof(why)))
		control_bad_frame(c, from, "SUBMIT", why);
	else if (!c->peers[from].draining)
		coordinator_take(c, from, &it, (struct plan_tag){ -1, 0 });
}

/* Rank 0: a worker repeats tensors of a cached bucket; they enter the
 * coordinator as rank 0's copies of them, so stall and mismatch reports
 * name them as before. */
void control_on_hit(struct control *c, int from, uint32_t type, const char *payload,
		    uint32_t len)
{
	struct wire_hit h;
	char why[160];
	if (!frame_fits(c, from, "HIT", 1, len, sizeof(h)))
		return;
	const struct plan_cache *pc = &c->rt->cache; /* the control thread alone writes it */
	memcpy(&h, payload, sizeof(h));
	if (h.pad)
		control_bad_frame(c, from, "HIT", "padding not zero");
	else if (plan_cache_check_run(pc, h.id, h.off, h.count, why, sizeof(why)))
		control_bad_frame(c, from, "HIT", why);
	/* a bad frame has failed the runtime: nothing of it is taken */
	for (uint32_t k = 0; k < h.count && !c->rt->aborted && !c->peers[from].draining; k++)
		coordinator_take(c, from, plan_cache_item(pc, h.id, h.off + k),
				 (struct plan_tag){ (int32_t)h.id, h.off + k });
}

void control_on_exec(struct control *c, int from, uint32_t type, const char *payload,
		     uint32_t len)
{
	struct runtime *rt = c->rt;
	struct wire_exec x;
	char why[160];
	if (!frame_fits(c, from, "EXEC", 0, len, sizeof(x)))
		return;
	memcpy(&x, payload, sizeof(x));
	pthread_mutex_lock(&rt->lock);
	uint64_t submitted = rt->next_seq;
	pthread_mutex_unlock(&rt->lock);
	if (c->fast) {
		control_bad_frame(c, from, "EXEC", "while the engines agree among themselves");
		return;
	}
	if (wire_check_exec(&x, c->exec_next, submitted, why, sizeof(why))) {
		control_bad_frame(c, from, "EXEC", why);
		return;
	}
	int rc = x.flags & WIRE_EXEC_LEARN ? learn_exec(c, &x) : 0;
	if (rc) {
		runtime_fail(rt, rc, "hvd: plan cache: 'position %llu': cannot learn the bucket: %s",
			     (unsigned long long)x.first, rc == HVD_ERR_COMM ? "this rank does not hold "
			     "its tensors" : "out of memory, or full while rank 0's was not");
		return;
	}
	c->exec_next += x.count;
	if (x.flags & WIRE_EXEC_FAST) { /* what we announced past it is dropped */
		c->fast = 1;
		send_or_fail(c, MSG_FAST, NULL, 0);
	}
	push_exec(c, &x, 0);
}

/* Event-driven: runs after every event. A bucket starts once every rank
 * submitted all of it; HVD_CYCLE_TIME_MS is only how long a partly
 * submitted one waits for more (coord_plan's flush). */
void control_plan(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	double since = coord_head_ready_time(&c->coord);
	if (since < 0)
		return;
	int flush = now - since >= rt->set.cycle_time_ms / 1000.0;
	struct coord_exec *ex = malloc(coord_ready(&c->coord) * sizeof(*ex));
	char err[2048];
	pthread_mutex_lock(&rt->lock); /* learning: submitters read the cache */
	int n = ex ? coord_plan(&c->coord, &rt->cache, flush, ex, err, sizeof(err)) : -1;
	pthread_mutex_unlock(&rt->lock);
	if (n < 0) {
		runtime_fail(rt, HVD_ERR_ABORTED, "%s", ex ? err : "hvd: coordinator: out of memory");
		free(ex);
		return;
	}
	/* the engines may agree among themselves after the last bucket when it
	 * repeats or was learnt (the step will likely come again), nothing
	 * else is waiting, and there is a coordination plane (vote/vote.h) */
	const struct coord_exec *last = n > 0 ? &ex[n - 1] : NULL;
	int fast = last && rt->vote.ops && !c->fast && (last->learn || last->cached >= 0) &&
		   coord_idle(&c->coord);
	for (int b = 0; b < n; b++) {
		/* rank 0's allreduce tensors of the bucket lie in memory one after
		 * another, last first: engine.c reduces such a bucket in place, and
		 * the flag gives every rank the same buffer layout */
		pthread_mutex_lock(&rt->lock);
		int reversed = entries_reversed(rt, ex[b].first, ex[b].count);
		pthread_mutex_unlock(&rt->lock);
		struct wire_exec x = { ex[b].first, ex[b].signature, ex[b].count,
				       (ex[b].learn ? WIRE_EXEC_LEARN : 0) |
				       (reversed ? WIRE_EXEC_REVERSED : 0) |
				       (fast && b == n - 1 ? WIRE_EXEC_FAST : 0) };
		control_send_to_peers(c, MSG_EXEC, &x, sizeof(x));
		push_exec(c, &x, ex[b].cached >= 0);
	}
	for (int i = 1; fast && i < c->npeers; i++) /* until each says MSG_FAST */
		c->peers[i].draining = !c->peers[i].closed;
	c->fast |= fast;
	free(ex);
}

/* Rank 0: every engine at pos votes now; once per position. */
static void nudge(struct control *c, uint64_t pos)
{
	if (c->nudge_sent && pos <= c->nudge_last)
		return;
	c->nudge_sent = 1;
	c->nudge_last = pos;
	c->nudge_since = runtime_now() - settings_escalate_s(&c->rt->set);
	struct wire_pos p = { pos };
	control_send_to_peers(c, MSG_NUDGE, &p, sizeof(p));
	runtime_mail(c->rt, MAIL_NUDGE, pos);
}

/* Rank 0: a worker's announcements can reach rank 0 before rank 0's own
 * engine has seen the disagreement; the coordinator placed them after
 * the last position it planned, and they belong after pos. Positions are
 * relative to `planned`, so only the NEGOTIATE bookkeeping (which spans
 * are open, up to where) moves with them; else rank 0's own submissions
 * would open those spans a second time. */
static void rebase_announced(struct control *c, uint64_t pos)
{
	uint64_t old = c->coord.planned;
	uint64_t taken = c->nego_begun > old ? c->nego_begun - old : 0;
	if (!taken || pos <= old)
		return;
	for (uint64_t k = taken; c->nego_open && k-- > 0;) { /* the ranges may overlap: from the top */
		c->nego_open[(pos + k) % CTL_NEGO_RING] = c->nego_open[(old + k) % CTL_NEGO_RING];
		c->nego_open[(old + k) % CTL_NEGO_RING] = 0;
	}
	c->nego_begun = pos + taken;
}

/* The engines disagreed at pos: announce from there on, as at the start. */
static void negotiate_from(struct control *c, uint64_t pos)
{
	c->fast = 0;
	c->announced = pos;
	if (c->rt->boot.rank != 0) {
		c->exec_next = pos;
		return;
	}
	const struct coord_queue *q = &c->coord.q[0];
	if (q->len != q->head) /* go_fast saw every queue empty, rank 0 announced nothing since */
		runtime_fail(c->rt, HVD_ERR_COMM, "hvd: coordinator: 'position %llu': rank 0's "
			     "queue is not empty (internal error)", (unsigned long long)pos);
	rebase_announced(c, pos);
	c->coord.planned = pos;
}

void control_take_requests(struct control *c)
{
	struct runtime *rt = c->rt;
	for (;;) {
		struct mail m;
		pthread_mutex_lock(&rt->lock);
		int got = mailbox_take(&rt->mail, MAIL_TO_CONTROL, &m);
		pthread_mutex_unlock(&rt->lock);
		if (!got)
			return;
		if (m.kind == MAIL_NEGOTIATE)
			negotiate_from(c, m.pos);
		else if (rt->boot.rank == 0)
			nudge(c, m.pos);
		else
			send_or_fail(c, MSG_WAITING, &(struct wire_pos){ m.pos }, sizeof(struct wire_pos));
	}
}

/* Rank 0: a worker switched to the fast path; its frames count again. */
void control_on_fast(struct control *c, int from, uint32_t type, const char *payload,
		     uint32_t len)
{
	if (c->rt->boot.rank != 0 || len)
		control_bad_frame(c, from, "FAST", c->rt->boot.rank ? "sent to a worker" : "carries a payload");
	else if (!c->peers[from].draining)
		control_bad_frame(c, from, "FAST", "rank 0 did not ask for it");
	else
		c->peers[from].draining = 0;
}

/* MSG_WAITING (at rank 0) and MSG_NUDGE (at workers). */
void control_on_position(struct control *c, int from, uint32_t type, const char *payload,
			 uint32_t len)
{
	const char *what = type == MSG_WAITING ? "WAITING" : "NUDGE";
	struct wire_pos p;
	if (!frame_fits(c, from, what, type == MSG_WAITING, len, sizeof(p)))
		return;
	memcpy(&p, payload, sizeof(p));
	if (p.position > ((uint64_t)1 << 62))
		control_bad_frame(c, from, what, "position out of range");
	else if (type == MSG_WAITING)
		nudge(c, p.position);
	else
		runtime_mail(c->rt, MAIL_NUDGE, p.position);
}
