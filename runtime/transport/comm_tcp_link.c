/* comm_tcp_link.c - the TCP backend's ring: each rank listens on the
 * address it reaches rank 0 from, publishes it through the bootstrap
 * exchange (over the control plane), and keeps one connection to each
 * neighbour. Every connection passes the control plane's handshake
 * (auth.h) with the job secret: the connecting rank sends HELLO with its
 * rank, the accepting one answers with its proof and admits only its left
 * neighbour's rank after the connecting rank's proof. A connection that
 * fails is dropped with a log line and the acceptor waits for the next
 * one (one at a time, CTL_HANDSHAKE_S each: an impostor costs time, never
 * entry). The listener closes once the left neighbour is in.
 * tcp_links_move moves what the sockets take, without waiting, for the
 * collectives (comm_tcp.c) and the ring vote (vote/vote_ring.c).
 * What it does not do: collectives, or retry a broken link.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/comm_tcp.h"
#include "core/fail.h"
#include "core/fdio.h"

#define LINK_HANDSHAKE_S 5.0 /* as CTL_HANDSHAKE_S */

/* The links are born non-blocking and close-on-exec (fdio_connect,
 * accept4). */
static void link_options(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Connect, then the worker's half of the handshake; again every 0.1 s
 * until the deadline. */
static int link_right(struct tcp_links *l, const struct tcp_addr *all, const struct auth_key *key,
		      struct bootstrap *b, double deadline)
{
	const struct tcp_addr *to = &all[l->right];
	while (runtime_now() < deadline) {
		double hs = fmin(runtime_now() + 2 * LINK_HANDSHAKE_S, deadline);
		int fd = fdio_connect(to->ip, to->port, hs);
		if (fd >= 0 && !auth_connect(fd, key, b->rank, b->size, hs)) {
			link_options(fd);
			l->right_fd = fd;
			return 0;
		}
		if (fd >= 0)
			close(fd);
		usleep(100000);
	}
	return -1;
}

/* The acceptor's half; NULL when fd is the left neighbour, else why not. */
static const char *admit_left(int fd, const struct auth_key *key, struct bootstrap *b, int left)
{
	double hs = runtime_now() + LINK_HANDSHAKE_S;
	struct auth_hello hello;
	struct auth_reply reply;
	struct auth_proof proof;
	uint8_t nonce[AUTH_NONCE_BYTES];
	if (fdio_recv(fd, &hello, sizeof(hello), hs))
		return "no handshake within 5 s";
	if (memcmp(hello.magic, "HVDh", 4) || hello.version != AUTH_VERSION || hello.size != b->size ||
	    hello.rank != left)
		return "not this ring's left neighbour";
	if (auth_random(nonce, sizeof(nonce)))
		return "getrandom failed";
	auth_reply_make(key, &hello, nonce, &reply);
	if (fdio_send(fd, &reply, sizeof(reply), hs) || fdio_recv(fd, &proof, sizeof(proof), hs))
		return "no proof within 5 s";
	return auth_proof_verify(key, &hello, &reply, &proof) ? "wrong proof" : NULL;
}

static int link_left(struct tcp_links *l, int lfd, const struct auth_key *key,
		     struct bootstrap *b, double deadline)
{
	while (fdio_wait(lfd, POLLIN, deadline) == 0) {
		struct sockaddr_in a;
		socklen_t alen = sizeof(a);
		int fd = accept4(lfd, (struct sockaddr *)&a, &alen, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		const char *why = admit_left(fd, key, b, l->left);
		if (!why) {
			link_options(fd);
			l->left_fd = fd;
			return 0;
		}
		char ip[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
		fprintf(stderr, "hvd: tcp backend: connection from %s:%u failed authentication (%s): "
			"dropped [rank %d/%d %s]\n", ip, ntohs(a.sin_port), why, b->rank, b->size,
			b->hostname);
		close(fd);
	}
	return -1;
}

int tcp_links_open(struct tcp_links *l, struct bootstrap *b, const struct auth_key *key,
		   const char *ip, double deadline, char *err, size_t errlen)
{
	*l = (struct tcp_links){ .right_fd = -1, .left_fd = -1, .right = (b->rank + 1) % b->size,
				 .left = (b->rank + b->size - 1) % b->size };
	struct tcp_addr me = { .port = 0 }, *all = calloc((size_t)b->size, sizeof(*all));
	if (!all)
		return HVD_ERR_NOMEM;
	int lfd = fdio_listen(ip, &me.port, 16); /* an ephemeral port */
	if (lfd < 0) {
		snprintf(err, errlen, "hvd: tcp backend: 'listen on %s': %s", ip, strerror(errno));
		free(all);
		return HVD_ERR_COMM;
	}
	snprintf(me.ip, sizeof(me.ip), "%s", ip);
	snprintf(me.host, sizeof(me.host), "%s", b->hostname);
	int rc = bootstrap_allgather(b, "hvd.tcp", &me, sizeof(me), all, err, errlen);
	if (!rc) {
		snprintf(l->right_host, sizeof(l->right_host), "%s", all[l->right].host);
		snprintf(l->left_host, sizeof(l->left_host), "%s", all[l->left].host);
	}
	if (!rc && b->size > 1) {
		int odd = b->rank % 2;
		int bad = odd ? link_left(l, lfd, key, b, deadline) || link_right(l, all, key, b, deadline)
			      : link_right(l, all, key, b, deadline) || link_left(l, lfd, key, b, deadline);
		if (bad) {
			int who = l->right_fd < 0 ? l->right : l->left;
			rc = fail_msg(HVD_ERR_COMM, err, errlen, "hvd: tcp backend: 'rank %d at %s:%u': "
				      "no authenticated connection within HVD_TIMEOUT_S (%s neighbour in "
				      "the ring)", who, all[who].ip, all[who].port,
				      who == l->right && l->right_fd < 0 ? "right" : "left");
		}
	}
	close(lfd);
	free(all);
	if (rc)
		tcp_links_close(l);
	return rc;
}

void tcp_links_close(struct tcp_links *l)
{
	if (l->right_fd >= 0)
		close(l->right_fd);
	if (l->left_fd >= 0)
		close(l->left_fd);
	l->right_fd = l->left_fd = -1;
}

int tcp_links_closed(const struct tcp_links *l, int peer, const char *call,
		     const struct comm_wait *w, int err_no)
{
	int left = peer == l->left;
	return fail_msg(HVD_ERR_COMM, w->err, w->errlen, "hvd: rank %d (host %s): '%s': its ring "
			"connection (%s neighbour), during %s '%s' (the process died or failed)",
			peer, left ? l->left_host : l->right_host,
			err_no ? strerror(err_no) : "connection closed", left ? "left" : "right",
			call, w->what);
}

int tcp_links_move(const struct tcp_links *l, const void *send_buf, size_t slen, size_t *sent,
		   void *recv_buf, size_t rlen, size_t *got, const char *call,
		   const struct comm_wait *w)
{
	if (*sent < slen) {
		ssize_t k = send(l->right_fd, (const char *)send_buf + *sent, slen - *sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0)
			*sent += (size_t)k;
		else if (k < 0 && errno != EAGAIN && errno != EINTR)
			return tcp_links_closed(l, l->right, call, w, errno);
	}
	if (*got < rlen) {
		ssize_t k = recv(l->left_fd, (char *)recv_buf + *got, rlen - *got, MSG_DONTWAIT);
		if (k > 0)
			*got += (size_t)k;
		else if (k == 0 || (errno != EAGAIN && errno != EINTR))
			return tcp_links_closed(l, l->left, call, w, k ? errno : 0);
	}
	return 0;
}
