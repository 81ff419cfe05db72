/* comm_tcp.h - the TCP host backend's ring (launch without PMIx):
 * comm_tcp_link.c makes the ring's two authenticated connections and
 * moves bytes on them, comm_tcp.c runs the collectives over them, and
 * the coordination plane's ring vote (vote/vote_ring.c) uses them too.
 * What it does not do: anything public (comm.h declares comm_tcp_open).
 */
#ifndef HVD_COMM_TCP_H
#define HVD_COMM_TCP_H

#include <stdint.h>

#include "core/auth.h"
#include "bootstrap/bootstrap.h"
#include "transport/comm.h"

/* Where a rank accepts its left neighbour, published through the
 * bootstrap's exchange ("hvd.tcp"). */
struct tcp_addr {
	char ip[48];
	char host[64];  /* for messages naming a neighbour */
	uint16_t port;
	uint16_t pad;
};

struct tcp_links {
	int right_fd;   /* we send to rank + 1 */
	int left_fd;    /* we receive from rank - 1 */
	int right, left;
	char right_host[64], left_host[64];
};

/* Listens on ip (ephemeral port), publishes it, connects to the right
 * neighbour and accepts the left one, each with the control plane's
 * handshake (auth.h): the acceptor plays rank 0's part and admits only
 * its left neighbour's rank. Even ranks connect first and odd ranks
 * accept first, so the ring closes without a second thread. */
int tcp_links_open(struct tcp_links *l, struct bootstrap *b, const struct auth_key *key,
		   const char *ip, double deadline, char *err, size_t errlen);
void tcp_links_close(struct tcp_links *l);
/* Moves what the sockets take now, without waiting: the rest of slen
 * bytes to the right (*sent so far) and of rlen from the left (*got).
 * 0, or HVD_ERR_COMM naming the neighbour that closed (tcp_links_closed). */
int tcp_links_move(const struct tcp_links *l, const void *send_buf, size_t slen, size_t *sent,
		   void *recv_buf, size_t rlen, size_t *got, const char *call,
		   const struct comm_wait *w);
int tcp_links_closed(const struct tcp_links *l, int peer, const char *call,
		     const struct comm_wait *w, int err_no);
/* The TCP data backend's links; NULL for another backend. */
struct tcp_links *comm_tcp_links(const struct comm *c);

#endif
