/* control_loop.c - the control thread (see control.c for the protocol).
 * Every rank: read and check frames, announce local submissions and plan
 * (control_nego.c), heartbeat, notice silent or vanished peers, relay
 * failures. Rank 0 also runs the stall inspector (warning after
 * HVD_STALL_WARNING_S, failure after HVD_TIMEOUT_S), and after a failure
 * gives the workers it told a moment to report (at shutdown, and before
 * the launcher ends the job).
 * What it does not do: negotiate (control_nego.c), run collectives
 * (engine.c) or exit the process.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control_state.h"
#include "observe/report.h"

/* MSG_HB and MSG_BYE carry nothing; a goodbye is noted. */
static void on_beat(struct control *c, int from, uint32_t type, const char *payload, uint32_t len)
{
	if (len)
		control_bad_frame(c, from, type == MSG_HB ? "heartbeat" : "goodbye", "carries a payload");
	else if (type == MSG_BYE)
		c->peers[from].said_bye = 1;
}

/* MSG_ABORT (to a worker) and MSG_ERROR (to rank 0): a failure's frame. */
static void on_failure(struct control *c, int from, uint32_t type, const char *payload,
		       uint32_t len)
{
	struct runtime *rt = c->rt;
	char text[2048];
	struct hvd_lost lost;
	if ((type == MSG_ABORT) != (rt->boot.rank != 0)) {
		control_bad_frame(c, from, "abort/error", "sent in the wrong direction");
		return;
	}
	control_fail_read(rt, payload, len, text, sizeof(text), &lost);
	c->peers[from].knows_failure = 1;
	runtime_fail_text(rt, HVD_ERR_ABORTED, text, 1, &lost);
}

/* By frame type (wire.h); NULL: unknown. */
static control_frame_fn *const handlers[] = {
	[MSG_HB] = on_beat, [MSG_SUBMIT] = control_on_submit, [MSG_EXEC] = control_on_exec,
	[MSG_ABORT] = on_failure, [MSG_ERROR] = on_failure, [MSG_BYE] = on_beat,
	[MSG_HIT] = control_on_hit, [MSG_FAST] = control_on_fast,
	[MSG_WAITING] = control_on_position, [MSG_NUDGE] = control_on_position,
};

static void dispatch(struct control *c, int i, uint32_t type, const char *payload, uint32_t len)
{
	int from = peer_rank(c, i);
	if (type < sizeof(handlers) / sizeof(handlers[0]) && handlers[type])
		handlers[type](c, from, type, payload, len);
	else
		runtime_fail(c->rt, HVD_ERR_COMM, "hvd: control plane: 'message type %u from rank %d': "
			     "unknown (mixed hvd versions?)", type, from);
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
	if (!eof)
		return;
	p->closed = 1;
	int r = peer_rank(c, i);
	if (!p->said_bye && !c->stop_requested) /* a goodbye, then the close: no failure */
		runtime_fail_lost(c->rt, HVD_ERR_ABORTED, HVD_LOST_EXITED, &r, 1, "hvd: rank %d "
				  "(host %s): 'control connection closed': the process died or left "
				  "without hvd_shutdown", r, control_host_of(c->rt, r));
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

/* Tell the others about a failure once: rank 0 broadcasts ABORT; another
 * rank reports its own failure to rank 0, which broadcasts it. */
static void send_failure(struct control *c)
{
	struct runtime *rt = c->rt;
	if (c->failure_sent)
		return;
	char frame[CONTROL_FAIL_FRAME];
	pthread_mutex_lock(&rt->lock);
	uint32_t len = control_fail_frame(rt->error, &runtime_lost, frame);
	int local = rt->fail_pending_send;
	pthread_mutex_unlock(&rt->lock);
	if (rt->boot.rank == 0 || local) /* a worker's one peer is rank 0 */
		control_send_to_peers(c, rt->boot.rank == 0 ? MSG_ABORT : MSG_ERROR, frame, len);
	else
		c->peers[0].knows_failure = 1; /* rank 0 sent it and tells the rest */
	/* after the sends: hvd_abort_job reads knows_failure once it sees this */
	c->failure_sent_at = runtime_now();
	__atomic_store_n(&c->failure_sent, 1, __ATOMIC_RELEASE);
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
	return fmin(fmax(s->timeout_s / 2, 2.5 * s->heartbeat_s), s->timeout_s);
}

/* Names every peer silent past silent_limit ("ranks 2,3 (host n2)"): a
 * cut node takes all its ranks at once, and their heartbeats were due at
 * different moments. `only` (indexed by rank, may be NULL) restricts the
 * names to those ranks. Returns how many, in ranks (room for every peer);
 * *worst = the longest silence. */
static int name_silent(struct control *c, double now, const int *only, char *who, size_t len,
		       double *worst, int *ranks)
{
	struct runtime *rt = c->rt;
	int n = 0;
	*worst = 0;
	snprintf(who, len, "rank ?");
	for (int i = 0; i < c->npeers; i++)
		if (peer_silent(&c->peers[i], now, silent_limit(&rt->set)) &&
		    (!only || only[peer_rank(c, i)])) {
			ranks[n++] = peer_rank(c, i);
			if (now - c->peers[i].last_seen > *worst)
				*worst = now - c->peers[i].last_seen;
		}
	if (n)
		report_name_ranks(rt->hosts, rt->boot.size, ranks, n, who, len);
	return n;
}

/* A peer unheard for 2.5 heartbeat periods is going silent: it is named
 * HVD_TIMEOUT_S after it was last heard, and a data wait stuck on it
 * waits for that (comm.h, naming_until) instead of blaming the wait. */
static void check_liveness(struct control *c, double now)
{
	struct runtime *rt = c->rt;
	int late = 0;
	double naming_until = 0;
	for (int i = 0; i < c->npeers; i++) {
		late |= peer_silent(&c->peers[i], now, rt->set.timeout_s);
		if (peer_silent(&c->peers[i], now, 2.5 * rt->set.heartbeat_s))
			naming_until = fmax(naming_until, c->peers[i].last_seen + rt->set.timeout_s + 1);
	}
	rt->naming_until = naming_until;
	if (!late || rt->aborted)
		return;
	char who[1024];
	double worst;
	int ranks[rt->boot.size], n = name_silent(c, now, NULL, who, sizeof(who), &worst, ranks);
	runtime_fail_lost(rt, HVD_ERR_ABORTED, HVD_LOST_SILENT, ranks, n, "hvd: %s: 'silent for "
			  "%.1f s': no heartbeat within HVD_TIMEOUT_S (stopped, hung, or its "
			  "network is cut)", who, worst);
}

/* A rank that left is named once what waits for it is this old: the
 * engines hear of its "no" vote at about the same time, and the others'
 * announcements (rank 0's own among them) may still be on their way; a
 * verdict before them would name those ranks as behind too. */
#define CTL_BYE_GRACE_S 0.5

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
			/* else looked at again within 0.1 s (poll_timeout_ms) */
			if (waited >= CTL_BYE_GRACE_S)
				runtime_fail(rt, HVD_ERR_ABORTED, "hvd: rank %d (host %s) called "
					     "hvd_shutdown: '%s': other ranks submitted these and wait "
					     "for it", r, control_host_of(rt, r), missing);
			return;
		}
	char who[1024];
	double silent;
	int ranks[rt->boot.size];
	if (waited > rt->set.timeout_s &&
	    name_silent(c, now, behind, who, sizeof(who), &silent, ranks)) {
		/* ranks behind went silent after the stall began: that is the
		 * cause, and every silent rank shares it (a cut node's ranks that
		 * were not behind are named too) */
		int n = name_silent(c, now, NULL, who, sizeof(who), &silent, ranks);
		runtime_fail_lost(rt, HVD_ERR_ABORTED, HVD_LOST_SILENT, ranks, n, "hvd: %s: 'silent "
				  "for %.1f s': no heartbeat while the other ranks waited "
				  "HVD_TIMEOUT_S (%g s) for their tensors (stopped, hung, or its "
				  "network is cut)", who, silent, rt->set.timeout_s);
	} else if (waited > rt->set.timeout_s) {
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: stalled: '%s': these ranks did not submit "
			     "within HVD_TIMEOUT_S (%g s) what the other ranks submitted", missing,
			     rt->set.timeout_s);
	} else if (rt->set.stall_warning_s > 0 && waited > rt->set.stall_warning_s &&
		   c->stall_warned != pos) {
		char suffix[128];
		runtime_suffix(rt, suffix, sizeof(suffix));
		fprintf(stderr, "hvd: stall: '%s': other ranks submitted these %.0f s ago and wait "
			"(different tensors per rank, uneven data, or rank-dependent code deadlock "
			"training; failing after HVD_TIMEOUT_S=%g s)%s\n", missing, waited,
			rt->set.timeout_s, suffix);
		c->stall_warned = pos;
	}
}

/* Longest rank 0 stays after a failure for the others to close. */
#define CTL_LINGER_S 3.0

/* Rank 0 after a failure, at shutdown: the workers it told and that were
 * alive hear of it from rank 0 only; a launcher may kill them as soon as
 * rank 0 exits (Slurm's PMIx plugin does within a second), before they
 * could say why. So wait, at most CTL_LINGER_S, for their connections to
 * close. A worker counts as alive when it was heard within silent_limit
 * before the wait began: it sends nothing once it knows of the failure,
 * so a wait that kept measuring its silence would give up on a live but
 * slow worker. Frames are read and dropped: nothing after a failure counts. */
static void control_linger(struct control *c)
{
	struct runtime *rt = c->rt;
	struct pollfd *fds = calloc((size_t)c->npeers, sizeof(*fds)); /* by peer; fd -1: not polled */
	double start = runtime_now(), now = start;
	double until = start + (rt->set.timeout_s < CTL_LINGER_S ? rt->set.timeout_s : CTL_LINGER_S);
	while (fds && rt->boot.rank == 0 && rt->aborted && now < until) {
		int n = 0;
		for (int i = 0; i < c->npeers; i++) { /* rank 0's own slot is closed */
			struct peer *p = &c->peers[i];
			int waited_for = peer_open(p) && p->knows_failure && !p->said_bye &&
					 start - p->last_seen <= silent_limit(&rt->set);
			fds[i] = (struct pollfd){ waited_for ? p->fd : -1, POLLIN, 0 };
			n += waited_for;
		}
		if (!n)
			break;
		poll(fds, (nfds_t)c->npeers, 50);
		for (int i = 0; i < c->npeers; i++) {
			char scratch[4096];
			ssize_t r = fds[i].revents ? recv(fds[i].fd, scratch, sizeof(scratch), MSG_DONTWAIT) : 1;
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				c->peers[i].closed = 1;
		}
		now = runtime_now();
	}
	free(fds);
}

int control_await_failure_sent(struct control *c, double seconds)
{
	double until = runtime_now() + seconds;
	while (!__atomic_load_n(&c->failure_sent, __ATOMIC_ACQUIRE) && runtime_now() < until)
		usleep(10000);
	return __atomic_load_n(&c->failure_sent, __ATOMIC_ACQUIRE);
}

/* Before a launcher ends the job (hvd_abort_job under srun) after this
 * runtime's failure: the launcher kills every rank at once, so the end is
 * rank 0's to call. Rank 0 waits, at most CTL_LINGER_S, for the workers
 * it told to say why and close; a worker (its program has printed the
 * failure) closes its connection to rank 0 and, when rank 0 knows of the
 * failure and still answers, leaves the abort to rank 0 for a while
 * (another worker may still be printing). Only once the control thread
 * has sent the failure: it then touches the peers no more. */
void control_before_launcher_abort(struct runtime *rt)
{
	struct control *c = rt->ctl;
	if (!c || !c->thread_started || !rt->aborted)
		return;
	control_wake(rt);
	if (!control_await_failure_sent(c, 2.0))
		return;
	if (rt->boot.rank == 0) {
		control_linger(c);
		return;
	}
	struct peer *root = &c->peers[0];
	if (!peer_open(root))
		return;
	shutdown(root->fd, SHUT_RDWR);
	/* heard from shortly before the failure, not now: this worker may have
	 * been descheduled since, and rank 0 sends nothing while it waits */
	if (root->knows_failure && c->failure_sent_at - root->last_seen <= silent_limit(&rt->set))
		usleep((useconds_t)((CTL_LINGER_S + 2.0) * 1e6)); /* rank 0 ends the step meanwhile */
}

/* Returns 1 when the thread may leave. */
static int finish_stop(struct control *c, double now)
{
	if (c->rt->boot.rank != 0) {
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
		runtime_fail(c->rt, HVD_ERR_ABORTED, "hvd: shutdown: '%d ranks': did not call "
			     "hvd_shutdown within HVD_TIMEOUT_S after rank 0 did", waiting);
	return 0;
}

static int poll_timeout_ms(struct control *c, double now)
{
	double t = fmin(c->rt->set.heartbeat_s / 2, 0.1);
	double since = c->rt->boot.rank == 0 ? coord_head_ready_time(&c->coord) : -1;
	if (since >= 0) /* a partly submitted bucket is sent as it is then */
		t = fmax(fmin(t, since + c->rt->set.cycle_time_ms / 1000.0 - now), 0);
	return (int)ceil(t * 1000);
}

void *control_main(void *arg)
{
	struct control *c = arg;
	struct runtime *rt = c->rt;
	/* the wake-up pipe, then one per peer (fd -1: not polled) */
	struct pollfd *fds = calloc((size_t)c->npeers + 1, sizeof(*fds));
	while (fds) {
		fds[0] = (struct pollfd){ rt->ctl_wake[0], POLLIN, 0 };
		for (int i = 0; i < c->npeers; i++)
			fds[i + 1] = (struct pollfd){ peer_open(&c->peers[i]) ? c->peers[i].fd : -1, POLLIN, 0 };
		poll(fds, (nfds_t)c->npeers + 1, poll_timeout_ms(c, runtime_now()));
		char drain[64];
		__atomic_store_n(&c->rt->ctl_woken, 0, __ATOMIC_RELEASE);
		while (read(c->rt->ctl_wake[0], drain, sizeof(drain)) > 0)
			;
		for (int i = 0; i < c->npeers; i++)
			if (fds[i + 1].revents)
				read_peer(c, i);
		control_take_requests(c);
		control_announce(c);
		double now = runtime_now();
		if (!rt->aborted && now - c->last_hb >= rt->set.heartbeat_s) {
			c->last_hb = now;
			control_send_to_peers(c, MSG_HB, NULL, 0);
		}
		if (!rt->aborted)
			check_liveness(c, now);
		if (!rt->aborted && rt->boot.rank == 0) {
			control_plan(c, now);
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
	return NULL;
}

void control_stop(struct runtime *rt)
{
	struct control *c = rt->ctl;
	if (!c)
		return;
	c->stop_deadline = runtime_now() + rt->set.timeout_s;
	c->stop_requested = 1;
	control_wake(rt);
	if (c->thread_started) {
		pthread_join(c->thread, NULL);
		control_linger(c);
	}
	for (int i = 0; c->peers && i < c->npeers; i++) {
		if (c->peers[i].fd >= 0)
			close(c->peers[i].fd);
		free(c->peers[i].buf);
	}
	free(c->peers);
	control_close_listeners(c);
	for (int k = 0; k < 2; k++)
		if (c->rt->ctl_wake[k] >= 0)
			close(c->rt->ctl_wake[k]);
	coord_free(&c->coord); /* a worker's is empty */
	plan_cache_free(&rt->cache);
	free(c->nego_open);
	free(c);
	rt->ctl = NULL;
}
