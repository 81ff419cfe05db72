/* control_state.h - internals shared by the control plane's files: control.c
 * (listening, connecting), control_join.c (rank 0 admits workers),
 * control_msg.c (frames out), control_loop.c (the control thread:
 * heartbeats, stall inspector, abort broadcast), control_nego.c
 * (negotiation). What it does not do: anything public.
 */
#ifndef HVD_CONTROL_STATE_H
#define HVD_CONTROL_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "core/auth.h"
#include "plan/coord.h"
#include "engine/runtime.h"
#include "plan/wire.h"

struct peer {
	int fd;
	char *buf;
	size_t len, cap;
	double last_seen;
	int said_bye;
	int closed;
	int knows_failure;  /* it was told of this job's failure, or told us */
	int draining;   /* rank 0: switched to the fast path, its MSG_FAST not yet in:
			 * its SUBMITs and HITs are of agreed positions, dropped */
};

static inline int peer_open(const struct peer *p)
{
	return p->fd >= 0 && !p->closed;
}

#define CTL_MAX_LISTEN 16

struct control {
	struct runtime *rt;
	struct auth_key key;    /* the job secret */
	int listen_fd[CTL_MAX_LISTEN]; /* rank 0 during start-up: one per published address */
	int nlisten;
	uint64_t exec_next;     /* worker: first position of the next EXEC */
	struct peer *peers;     /* rank 0: one per rank (own slot unused); else [0] = rank 0 */
	int npeers;
	pthread_t thread;
	int thread_started;
	volatile int stop_requested;
	double stop_deadline;
	struct coord coord;     /* rank 0 */
	uint64_t nego_begun;    /* rank 0: positions whose NEGOTIATE span is open */
	uint8_t *nego_open;     /* rank 0: CTL_NEGO_RING flags by position: span begun */
	uint64_t announced;     /* next local position to announce (negotiating) */
	int fast;               /* the engines agree among themselves (agree.c): no
				 * announcing, no EXEC until an engine says otherwise */
	int nudge_sent;         /* rank 0: nudge_last is valid */
	uint64_t nudge_last;    /* rank 0: the last position every engine was nudged at */
	double nudge_since;     /* rank 0: when the engines began to wait there */
	double last_hb;
	int64_t stall_warned;   /* position last warned about, -1 none */
	volatile int failure_sent;
	double failure_sent_at; /* runtime_now() when it was; set before failure_sent */
	int joined;             /* every connection made before control_connect
				 * (a launch without PMIx: control_env.c) */
};

/* The rank at the other end of peers[i]: i on rank 0 (one slot per
 * rank), 0 on a worker (its one peer), so peers[rank] is that peer. */
static inline int peer_rank(const struct control *c, int i)
{
	return c->rt->boot.rank == 0 ? i : 0;
}

/* Positions rank 0 can have submitted but not planned: each rank's queue
 * is capped at WIRE_MAX_QUEUED, so twice that never wraps onto a live one. */
#define CTL_NEGO_RING (2 * WIRE_MAX_QUEUED)

/* Seconds a connection may take to prove it belongs to the job (rank 0:
 * from accept; a worker waits twice as long for rank 0's reply). */
#define CTL_HANDSHAKE_S 5.0
/* Connections rank 0 handshakes with at once; a newer one drops the oldest. */
#define CTL_MAX_HANDSHAKES 256

/* control_msg.c: one frame on fd (0 or -1); a rank's host ("?" unknown). */
int control_send_msg(int fd, uint32_t type, const void *payload, uint32_t len);
const char *control_host_of(const struct runtime *rt, int rank);
void *control_main(void *arg);
/* Parses and acts on the whole frames in peers[i].buf, keeps the rest;
 * every field is checked first (wire.h). The fuzz target's entry. */
void control_parse_frames(struct control *c, int i);
/* rank 0: accept and authenticate every worker (control_join.c), then
 * close the listeners. */
int control_join(struct control *c, char *err, size_t errlen);
/* control_msg.c: a frame that breaks the protocol fails the job naming
 * the sender; a frame to every open peer (rank 0: its workers; a worker:
 * rank 0), a failure's (ABORT, ERROR) marking those it reached
 * (knows_failure). */
void control_bad_frame(struct control *c, int from, const char *what, const char *why);
void control_send_to_peers(struct control *c, uint32_t type, const void *payload, uint32_t len);
/* Waits, at most `seconds`, until the control thread has sent this
 * rank's failure (it then touches the peers no more); 1 when it has. */
int control_await_failure_sent(struct control *c, double seconds);
/* control_nego.c: announce local submissions from *announced on; act on
 * SUBMIT/HIT (rank 0) and EXEC (workers); plan what may start (rank 0). */
void control_announce(struct control *c);
/* The engine's requests: negotiate from a position on (the engines
 * disagreed), its agreement waits (rank 0 nudges every engine). */
void control_take_requests(struct control *c);
/* A frame of `type` from rank `from` (its peers[] slot: peer_rank);
 * control_loop.c dispatches by type. */
typedef void control_frame_fn(struct control *c, int from, uint32_t type, const char *payload,
			      uint32_t len);
/* SUBMIT, HIT, FAST, WAITING (rank 0); EXEC, NUDGE (workers). */
control_frame_fn control_on_submit, control_on_hit, control_on_exec, control_on_fast,
	control_on_position;
void control_plan(struct control *c, double now);
/* A failure's frame (ABORT, ERROR): its text, a NUL, then the ranks it
 * lost as int32 (kind, count, ranks); frame_len bytes of buf (room for
 * CONTROL_FAIL_FRAME). control_fail_read: the text (sanitised) and the
 * record (its hosts from rt's table; kind NONE when absent or malformed). */
#define CONTROL_FAIL_FRAME (2048 + 4 * (2 + HVD_LOST_MAX))
uint32_t control_fail_frame(const char *text, const struct hvd_lost *lost, char *buf);
void control_fail_read(const struct runtime *rt, const char *frame, uint32_t len, char *text,
		       size_t textlen, struct hvd_lost *lost);
/* Rank 0: closes every listener (start-up is over, or failed). */
void control_close_listeners(struct control *c);
/* peers (one per rank on rank 0, else one), rank 0's coordinator. */
int control_peers_init(struct control *c);
/* Worker: rank 0 reached and authenticated within HVD_TIMEOUT_S, round
 * after round over its published addresses (hosts[0].ctl_addrs,
 * ctl_port), into peers[0]; `resolve` (NULL: none) fills them before each
 * round, 0, or -1 with why. 0 or HVD_ERR_COMM (the caller says why). */
int control_reach_rank0(struct control *c, int (*resolve)(struct runtime *rt, char *why, size_t len),
			char *why, size_t whylen);
/* control.c: host's IPv4 addresses (at most max), comma-separated and
 * without repeats, into out: 0, or getaddrinfo's error (out untouched). */
int control_resolve(const char *host, char *out, size_t len, int max);
/* control_msg.c: SO_SNDTIMEO (whole seconds, rounded up, at least 1),
 * TCP_NODELAY, blocking (every control socket is born close-on-exec:
 * fdio_connect, accept4). */
void control_socket_options(int fd, double timeout_s);

#endif
