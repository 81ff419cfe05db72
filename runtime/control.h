/* control.h - internals shared by control.c (sockets, connection set-up)
 * and control_loop.c (the control thread: negotiation, heartbeats, stall
 * inspector, abort broadcast). What it does not do: anything public.
 */
#ifndef HVD_CONTROL_H
#define HVD_CONTROL_H

#include <pthread.h>
#include <stdint.h>

#include "coord.h"
#include "runtime.h"

enum msg_type { MSG_HELLO = 1, MSG_HB, MSG_SUBMIT, MSG_EXEC, MSG_ABORT, MSG_ERROR, MSG_BYE };

struct msg_header {
	uint32_t type;
	uint32_t len;
};

struct wire_exec {
	uint64_t first;
	uint64_t signature;
	uint32_t count;
	uint32_t pad;
};

struct peer {
	int fd;
	char *buf;
	size_t len, cap;
	double last_seen;
	int said_bye;
	int closed;
};

struct control {
	struct runtime *rt;
	int listen_fd;
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
	int failure_sent;
};

#define CTL_MAX_MSG (1u << 20)

int control_send_msg(int fd, uint32_t type, const void *payload, uint32_t len);
const char *control_host_of(const struct runtime *rt, int rank);
void *control_main(void *arg);

#endif
