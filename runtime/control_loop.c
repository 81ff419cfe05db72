/* control_loop.c - the control thread (see control.c for the protocol).
 * Every rank: announce local submissions, heartbeat, notice silent or
 * vanished peers, relay failures; tensors repeated from the plan cache go
 * to rank 0 as one HIT per run instead of one SUBMIT each. Rank 0 also:
 * feed the coordinator, plan buckets as soon as every rank submitted them
 * (a partly submitted one waits at most HVD_CYCLE_TIME_MS), send them to
 * everyone (learnt into every rank's plan cache), and run the stall
 * inspector (warning after HVD_STALL_WARNING_S, failure after HVD_TIMEOUT_S).
 * What it does not do: run collectives (engine.c) or exit the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"

static int peer_rank(const struct control *c, int i)
{
	return c->rt->boot.rank == 0 ? i : 0;
}

static int peer_open(const struct peer *p)
{
	return p->fd >= 0 && !p->closed;
}

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
	int64_t pos = coord_submit_tagged(&c->coord, rank, it, tag, runtime_now());
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

/* Up to max local submissions from position `from` on, tagged against the
 * plan cache (the control thread alone touches cache and cursor). A
 * worker's entry remembers whether its NEGOTIATE span opens. */
static int collect_local(struct control *c, uint64_t from, struct fusion_item *items,
			 struct plan_tag *tags, int max)
{
	struct runtime *rt = c->rt;
	int n = 0;
	pthread_mutex_lock(&rt->lock);
	for (struct entry *e = rt->pending; e && n < max; e = e->next)
		if (e->seq == from + (uint64_t)n) {
			items[n] = e->item;
			tags[n] = plan_cursor_next(&c->cache, &c->cursor, &e->item);
			e->nego_open = rt->boot.rank != 0 && tags[n].id < 0;
			n++;
		}
	pthread_mutex_unlock(&rt->lock);
	return n;
}

static void send_or_fail(struct control *c, uint32_t type, const void *payload, uint32_t len)
{
	struct runtime *rt = c->rt;
	if (control_send_msg(c->peers[0].fd, type, payload, len))
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: control plane: 'rank 0 (host %s)': "
			     "cannot send: %s", control_host_of(rt, 0), strerror(errno));
}

/* Worker: misses as SUBMITs (NEGOTIATE span), runs of one cached bucket
 * as one HIT. */
static void announce_to_root(struct control *c, const struct fusion_item *items,
			     const struct plan_tag *tags, int n)
{
	struct runtime *rt = c->rt;
	for (int i = 0; i < n;) {
		if (tags[i].id < 0) {
			timeline_begin(rt->tl, items[i].name, negotiate_phase(&items[i]));
			send_or_fail(c, MSG_SUBMIT, &items[i], sizeof(items[i]));
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
 * into the coordinator (rank 0). */
static void announce_local(struct control *c, uint64_t *announced)
{
	enum { BATCH = 64 };
	struct fusion_item items[BATCH];
	struct plan_tag tags[BATCH];
	for (;;) {
		int n = collect_local(c, *announced, items, tags, BATCH);
		if (!n)
			return;
		if (c->rt->boot.rank == 0)
			for (int i = 0; i < n; i++)
				coordinator_take(c, 0, &items[i], tags[i]);
		else
			announce_to_root(c, items, tags, n);
		*announced += (uint64_t)n;
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
	cmd->first = x->first;
	cmd->count = x->count;
	cmd->signature = x->signature;
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
	if (rt->execs_tail)
		rt->execs_tail->next = cmd;
	else
		rt->execs = cmd;
	rt->execs_tail = cmd;
	pthread_cond_broadcast(&rt->cond);
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
	pthread_mutex_lock(&rt->lock);
	for (struct entry *e = rt->pending; e && n < x->count; e = e->next)
		if (e->seq == x->first + n)
			items[n++] = e->item;
	pthread_mutex_unlock(&rt->lock);
	int rc = n != x->count ? HVD_ERR_COMM
		 : plan_cache_can_learn(&c->cache, items, n) && plan_cache_learn(&c->cache, items, n) >= 0
		 ? 0 : HVD_ERR_NOMEM;
	free(items);
	return rc;
}

/* A frame that breaks the protocol fails the job naming the sender. */
static void bad_frame(struct control *c, int from, const char *what, const char *why)
{
	runtime_fail(c->rt, HVD_ERR_COMM, "hvd: control plane: 'rank %d (host %s)': %s: %s",
		     from, control_host_of(c->rt, from), what, why);
}

static void on_submit(struct control *c, int from, const char *payload, uint32_t len)
{
	struct fusion_item it;
	char why[128];
	if (c->rt->boot.rank != 0 || len != sizeof(it)) {
		bad_frame(c, from, "SUBMIT", c->rt->boot.rank ? "sent to a worker" : "wrong length");
		return;
	}
	memcpy(&it, payload, sizeof(it));
	if (wire_check_item(&it, c->rt->boot.size, why, sizeof(why)))
		bad_frame(c, from, "SUBMIT", why);
	else
		coordinator_take(c, from, &it, (struct plan_tag){ -1, 0 });
}

/* Rank 0: a worker repeats tensors of a cached bucket; they enter the
 * coordinator as rank 0's copies of them, so stall and mismatch reports
 * name them as before. */
static void on_hit(struct control *c, int from, const char *payload, uint32_t len)
{
	struct wire_hit h;
	char why[160];
	if (c->rt->boot.rank != 0 || len != sizeof(h)) {
		bad_frame(c, from, "HIT", c->rt->boot.rank ? "sent to a worker" : "wrong length");
		return;
	}
	memcpy(&h, payload, sizeof(h));
	if (h.pad) {
		bad_frame(c, from, "HIT", "padding not zero");
		return;
	}
	if (plan_cache_check_run(&c->cache, h.id, h.off, h.count, why, sizeof(why))) {
		bad_frame(c, from, "HIT", why);
		return;
	}
	for (uint32_t k = 0; k < h.count && !c->rt->aborted; k++)
		coordinator_take(c, from, plan_cache_item(&c->cache, h.id, h.off + k),
				 (struct plan_tag){ (int32_t)h.id, h.off + k });
}

static void on_exec(struct control *c, int from, const char *payload, uint32_t len)
{
	struct runtime *rt = c->rt;
	struct wire_exec x;
	char why[160];
	if (rt->boot.rank == 0 || len != sizeof(x)) {
		bad_frame(c, from, "EXEC", rt->boot.rank ? "wrong length" : "sent to rank 0");
		return;
	}
	memcpy(&x, payload, sizeof(x));
	pthread_mutex_lock(&rt->lock);
	uint64_t submitted = rt->next_seq;
	pthread_mutex_unlock(&rt->lock);
	if (wire_check_exec(&x, c->exec_next, submitted, why, sizeof(why))) {
		bad_frame(c, from, "EXEC", why);
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
	push_exec(c, &x, 0);
}

static void dispatch(struct control *c, int i, uint32_t type, const char *payload, uint32_t len)
{
	struct runtime *rt = c->rt;
	int from = peer_rank(c, i);
	char text[2048];
	if ((type == MSG_HB || type == MSG_BYE) && len) {
		bad_frame(c, from, type == MSG_HB ? "heartbeat" : "goodbye", "carries a payload");
		return;
	}
	switch (type) {
	case MSG_HB:
		break;
	case MSG_SUBMIT:
		on_submit(c, from, payload, len);
		break;
	case MSG_EXEC:
		on_exec(c, from, payload, len);
		break;
	case MSG_HIT:
		on_hit(c, from, payload, len);
		break;
	case MSG_ABORT:
	case MSG_ERROR:
		if ((type == MSG_ABORT) != (rt->boot.rank != 0)) {
			bad_frame(c, from, "abort/error", "sent in the wrong direction");
			break;
		}
		wire_sanitize(payload, len, text, sizeof(text));
		runtime_fail_text(rt, HVD_ERR_ABORTED, text, 1);
		break;
	case MSG_BYE:
		c->peers[i].said_bye = 1;
		break;
	default:
		runtime_fail(rt, HVD_ERR_COMM, "hvd: control plane: 'message type %u from rank %d': "
			     "unknown (mixed hvd versions?)", type, from);
	}
}

static void peer_closed(struct control *c, int i)
{
	struct runtime *rt = c->rt;
	struct peer *p = &c->peers[i];
	p->closed = 1;
	if (p->said_bye || c->stop_requested)
		return;
	int r = peer_rank(c, i);
	runtime_fail(rt, HVD_ERR_ABORTED, "hvd: rank %d (host %s): 'control connection closed': "
		     "the process died or left without hvd_shutdown", r, control_host_of(rt, r));
}

static void read_peer(struct control *c, int i)
{
	struct peer *p = &c->peers[i];
	int eof = 0;
	while (p->len < WIRE_RECV_MAX) { /* a flood waits in the socket, not here */
		if (p->cap - p->len < 4096) {
			size_t cap = p->cap ? p->cap * 2 : 16384;
			char *buf = realloc(p->buf, cap);
			if (!buf) {
				runtime_fail(c->rt, HVD_ERR_NOMEM, "hvd: control plane: 'rank %d': "
					     "out of memory for its frames", peer_rank(c, i));
				return;
			}
			p->buf = buf;
			p->cap = cap;
		}
		size_t room = p->cap - p->len;
		if (room > WIRE_RECV_MAX - p->len)
			room = WIRE_RECV_MAX - p->len;
		ssize_t r = recv(p->fd, p->buf + p->len, room, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			eof = 1; /* messages before the close still count (an ABORT) */
			break;
		}
		p->len += (size_t)r;
		p->last_seen = runtime_now();
	}
	control_parse_frames(c, i);
	if (eof)
		peer_closed(c, i);
}

void control_parse_frames(struct control *c, int i)
{
	struct peer *p = &c->peers[i];
	size_t off = 0;
	while (p->len - off >= sizeof(struct msg_header)) {
		struct msg_header h;
		memcpy(&h, p->buf + off, sizeof(h));
		if (h.len > WIRE_MAX_MSG) {
			runtime_fail(c->rt, HVD_ERR_COMM, "hvd: control plane: 'rank %d': message of %u "
				     "bytes: corrupt stream", peer_rank(c, i), h.len);
			p->closed = 1;
			return;
		}
		if (p->len - off < sizeof(h) + h.len)
			break;
		dispatch(c, i, h.type, p->buf + off + sizeof(h), h.len);
		off += sizeof(h) + h.len;
		if (c->rt->aborted)
			break; /* nothing after a failure counts */
	}
	memmove(p->buf, p->buf + off, p->len - off);
	p->len -= off;
}

static void send_to_workers(struct control *c, uint32_t type, const void *payload, uint32_t len)
{
	for (int i = 0; i < c->npeers; i++)
		if (peer_open(&c->peers[i]))
			control_send_msg(c->peers[i].fd, type, payload, len);
}

/* Tell the others about a failure once: rank 0 broadcasts ABORT; another
 * rank reports its own failure to rank 0, which broadcasts it. */
static void send_failure(struct control *c)
{
	struct runtime *rt = c->rt;
	if (c->failure_sent)
		return;
	c->failure_sent = 1;
	pthread_mutex_lock(&rt->lock);
	char text[sizeof(rt->error)];
	memcpy(text, rt->error, sizeof(text));
	int local = rt->fail_pending_send;
	pthread_mutex_unlock(&rt->lock);
	uint32_t len = (uint32_t)strlen(text);
	if (rt->boot.rank == 0)
		send_to_workers(c, MSG_ABORT, text, len);
	else if (local && peer_open(&c->peers[0]))
		control_send_msg(c->peers[0].fd, MSG_ERROR, text, len);
}

static void heartbeat(struct control *c, double now)
{
	if (now - c->last_hb < c->rt->set.heartbeat_s)
		return;
	c->last_hb = now;
	send_to_workers(c, MSG_HB, NULL, 0);
}

static int peer_silent(const struct peer *p, double now, double limit)
{
	return peer_open(p) && !p->said_bye && now - p->last_seen > limit;
}

/* Silence that counts as "stopped answering" next to a peer past the
 * deadline: half of HVD_TIMEOUT_S, but at least 2.5 heartbeat periods
 * (never a healthy peer between two heartbeats), at most the deadline. */
static double silent_limit(const struct hvd_settings *s)
{
	double limit = s->timeout_s / 2 > 2.5 * s->heartbeat_s ? s->timeout_s / 2 : 2.5 * s->heartbeat_s;
	return limit < s->timeout_s ? limit : s->timeout_s;
}

/* Names every peer silent past silent_limit ("ranks 2,3 (host n2)"): a
 * cut node takes all its ranks at once, and their heartbeats were due at
 * different moments. `only` (indexed by rank, may be NULL) restricts the
 * names to those ranks. Returns how many; *worst = the longest silence. */
static int name_silent(struct control *c, double now, const int *only, char *who, size_t len,
		       double *worst)
{
	struct runtime *rt = c->rt;
	int *ranks = malloc((size_t)c->npeers * sizeof(*ranks)), n = 0;
	*worst = 0;
	snprintf(who, len, "rank ?");
	for (int i = 0; ranks && i < c->npeers; i++)
		if (peer_silent(&c->peers[i], now, silent_limit(&rt->set)) &&
		    (!only || only[peer_rank(c, i)])) {
			ranks[n++] = peer_rank(c, i);
			if (now - c->peers[i].last_seen > *worst)
				*worst = now - c->peers[i].last_seen;
		}
	if (n)
		report_name_ranks(rt->hosts, rt->boot.size, ranks, n, who, len);
	free(ranks);
	return n;
}

static void check_liveness(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	int late = 0;
	for (int i = 0; i < c->npeers; i++)
		late |= peer_silent(&c->peers[i], now, rt->set.timeout_s);
	if (!late || rt->aborted)
		return;
	char who[1024];
	double worst;
	name_silent(c, now, NULL, who, sizeof(who), &worst);
	runtime_fail(rt, HVD_ERR_ABORTED, "hvd: %s: 'silent for %.1f s': no heartbeat within "
		     "HVD_TIMEOUT_S (stopped, hung, or its network is cut)", who, worst);
}

/* Event-driven: runs after every event. A bucket starts once every rank
 * submitted all of it; HVD_CYCLE_TIME_MS is only how long a partly
 * submitted one waits for more (coord_plan_now's flush). */
static void plan(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	double since = coord_head_ready_time(&c->coord);
	if (since < 0)
		return;
	int flush = now - since >= rt->set.cycle_time_ms / 1000.0;
	struct coord_exec *ex = malloc(coord_ready(&c->coord) * sizeof(*ex));
	char err[2048];
	int n = ex ? coord_plan_now(&c->coord, &c->cache, flush, ex, err, sizeof(err)) : -1;
	if (n < 0) {
		runtime_fail(rt, HVD_ERR_ABORTED, "%s", ex ? err : "hvd: coordinator: out of memory");
		free(ex);
		return;
	}
	for (int b = 0; b < n; b++) {
		struct wire_exec x = { ex[b].first, ex[b].signature, ex[b].count,
				       ex[b].learn ? WIRE_EXEC_LEARN : 0 };
		send_to_workers(c, MSG_EXEC, &x, sizeof(x));
		push_exec(c, &x, ex[b].cached >= 0);
		c->cached_buckets += ex[b].cached >= 0;
	}
	free(ex);
}

static void stall_check(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	double waited = coord_oldest_wait(&c->coord, now);
	if (waited <= 0)
		return;
	int64_t pos = (int64_t)(c->coord.planned + coord_ready(&c->coord));
	char missing[1024];
	int behind[rt->boot.size];
	coord_describe_missing(&c->coord, missing, sizeof(missing), behind);
	for (int r = 1; r < rt->boot.size; r++)
		if (behind[r] && (c->peers[r].said_bye || c->peers[r].closed)) {
			runtime_fail(rt, HVD_ERR_ABORTED, "hvd: rank %d (host %s) called hvd_shutdown: "
				     "'%s': other ranks submitted these and wait for it", r,
				     control_host_of(rt, r), missing);
			return;
		}
	char who[1024];
	double silent;
	if (waited > rt->set.timeout_s && name_silent(c, now, behind, who, sizeof(who), &silent)) {
		/* ranks behind went silent after the stall began: that is the cause */
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: %s: 'silent for %.1f s': no heartbeat while the "
			     "other ranks waited HVD_TIMEOUT_S (%g s) for their tensors (stopped, hung, "
			     "or its network is cut)", who, silent, rt->set.timeout_s);
		return;
	}
	if (waited > rt->set.timeout_s) {
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: stalled: '%s': these ranks did not submit "
			     "within HVD_TIMEOUT_S (%g s) what the other ranks submitted", missing,
			     rt->set.timeout_s);
		return;
	}
	if (rt->set.stall_warning_s > 0 && waited > rt->set.stall_warning_s && c->stall_warned != pos) {
		char suffix[128];
		runtime_suffix(rt, suffix, sizeof(suffix));
		fprintf(stderr, "hvd: stall: '%s': other ranks submitted these %.0f s ago and wait "
			"(different tensors per rank, uneven data, or rank-dependent code deadlock "
			"training; failing after HVD_TIMEOUT_S=%g s)%s\n", missing, waited,
			rt->set.timeout_s, suffix);
		c->stall_warned = pos;
	}
}

/* Returns 1 when the thread may leave. */
static int finish_stop(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	if (rt->boot.rank != 0) {
		if (peer_open(&c->peers[0]))
			control_send_msg(c->peers[0].fd, MSG_BYE, NULL, 0);
		return 1;
	}
	int waiting = 0;
	for (int i = 1; i < c->npeers; i++)
		waiting += peer_open(&c->peers[i]) && !c->peers[i].said_bye;
	if (!waiting)
		return 1;
	if (now > c->stop_deadline)
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: shutdown: '%d ranks': did not call hvd_shutdown "
			     "within HVD_TIMEOUT_S after rank 0 did", waiting);
	return 0;
}

static int poll_timeout_ms(struct control *c, double now)
{
	double t = c->rt->set.heartbeat_s / 2;
	if (t > 0.1)
		t = 0.1;
	double since = c->rt->boot.rank == 0 ? coord_head_ready_time(&c->coord) : -1;
	if (since >= 0) { /* a partly submitted bucket is sent as it is then */
		double until_flush = since + c->rt->set.cycle_time_ms / 1000.0 - now;
		if (until_flush < t)
			t = until_flush > 0 ? until_flush : 0;
	}
	return (int)ceil(t * 1000);
}

void *control_main(void *arg)
{
	struct control *c = arg;
	struct runtime *rt = c->rt;
	uint64_t announced = 0;
	struct pollfd *fds = calloc((size_t)c->npeers + 1, sizeof(*fds));
	int *which = calloc((size_t)c->npeers + 1, sizeof(*which));
	while (fds && which) {
		int n = 0;
		fds[n++] = (struct pollfd){ c->wake[0], POLLIN, 0 };
		for (int i = 0; i < c->npeers; i++)
			if (peer_open(&c->peers[i])) {
				which[n] = i;
				fds[n++] = (struct pollfd){ c->peers[i].fd, POLLIN, 0 };
			}
		poll(fds, (nfds_t)n, poll_timeout_ms(c, runtime_now()));
		char drain[64];
		__atomic_store_n(&c->woken, 0, __ATOMIC_RELEASE);
		while (read(c->wake[0], drain, sizeof(drain)) > 0)
			;
		for (int k = 1; k < n; k++)
			if (fds[k].revents)
				read_peer(c, which[k]);
		announce_local(c, &announced);
		double now = runtime_now();
		if (!rt->aborted) {
			heartbeat(c, now);
			check_liveness(c, now);
		}
		if (!rt->aborted && rt->boot.rank == 0) {
			plan(c, now);
			stall_check(c, now);
		}
		if (rt->aborted) {
			send_failure(c);
			break;
		}
		if (c->stop_requested && finish_stop(c, now))
			break;
	}
	free(fds);
	free(which);
	return NULL;
}

int control_stop(struct runtime *rt, int clean)
{
	struct control *c = rt->ctl;
	if (!c)
		return 0;
	c->stop_deadline = runtime_now() + rt->set.timeout_s;
	c->stop_requested = 1;
	control_wake(rt);
	if (c->thread_started)
		pthread_join(c->thread, NULL);
	for (int i = 0; c->peers && i < c->npeers; i++) {
		if (c->peers[i].fd >= 0)
			close(c->peers[i].fd);
		free(c->peers[i].buf);
	}
	free(c->peers);
	for (int k = 0; k < c->nlisten; k++)
		close(c->listen_fd[k]);
	for (int k = 0; k < 2; k++)
		if (c->wake[k] >= 0)
			close(c->wake[k]);
	if (rt->boot.rank == 0)
		coord_free(&c->coord);
	plan_cache_free(&c->cache);
	free(c->nego_open);
	free(c);
	rt->ctl = NULL;
	return 0;
}
