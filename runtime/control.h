/* control.h - internals shared by control.c (sockets, connection set-up)
 * and control_loop.c (the control thread: negotiation, heartbeats, stall
 * inspector, abort broadcast). What it does not do: anything public.
 */
#ifndef HVD_CONTROL_H
#define HVD_CONTROL_H

#include <pthread.h>
#include <stdint.h>

#include "auth.h"
#include "coord.h"
#include "runtime.h"
#include "wire.h"

struct peer {
	int fd;
	char *buf;
	size_t len, cap;
	double last_seen;
	int said_bye;
	int closed;
};

#define CTL_MAX_LISTEN 16

struct control {
	struct runtime *rt;
	struct auth_key key;    /* the job secret */
	int listen_fd[CTL_MAX_LISTEN]; /* rank 0 during start-up: one per published address */
	int nlisten;
	uint64_t exec_next;     /* worker: first position of the next EXEC */
	int wake[2];
	struct peer *peers;     /* rank 0: one per rank (own slot unused); else [0] = rank 0 */
	int npeers;
	pthread_t thread;
	int thread_started;
	volatile int stop_requested;
	double stop_deadline;
	struct coord coord;     /* rank 0 */
	uint64_t nego_begun;    /* rank 0: positions whose NEGOTIATE span is open */
	double last_hb, next_plan;
	int plan_due;
	int64_t stall_warned;   /* position last warned about, -1 none */
	volatile int failure_sent;
	int joined;             /* every connection made before control_connect
				 * (a launch without PMIx: control_env.c) */
};

/* Seconds a connection may take to prove it belongs to the job (rank 0:
 * from accept; a worker waits twice as long for rank 0's reply). */
#define CTL_HANDSHAKE_S 5.0
/* Connections rank 0 handshakes with at once; a newer one drops the oldest. */
#define CTL_MAX_HANDSHAKES 256

int control_send_msg(int fd, uint32_t type, const void *payload, uint32_t len);
const char *control_host_of(const struct runtime *rt, int rank);
void *control_main(void *arg);
/* Parses and acts on the whole frames in peers[i].buf, keeps the rest;
 * every field is checked first (wire.h). The fuzz target's entry. */
void control_parse_frames(struct control *c, int i);
/* rank 0: accept and authenticate every worker (control_join.c), then
 * close the listeners. */
int control_join(struct control *c, char *err, size_t errlen);
/* peers (one per rank on rank 0, else one), rank 0's coordinator. */
int control_peers_init(struct control *c);
/* Worker: one round over rank 0's published addresses (hosts[0].ctl_addrs,
 * ctl_port), each with the handshake; the authenticated fd or -1. */
int control_try_rank0(struct control *c, double deadline);
/* SO_SNDTIMEO (whole seconds, rounded up, at least 1), TCP_NODELAY. */
void control_socket_options(int fd, double timeout_s);

#endif
