/* control_join.c - rank 0's start-up: accept connections on the published
 * addresses and let in only the job's own workers. Every connection runs
 * the handshake of auth.h concurrently (one poll over the listeners and
 * every half-done handshake), each with its own CTL_HANDSHAKE_S deadline
 * from accept, so a silent, slow or hostile peer costs nothing but its
 * slot; at most CTL_MAX_HANDSHAKES at once (a newer one drops the
 * oldest). A connection that fails is dropped, logged (the first 16,
 * then a count) and never counted as a rank. Once every rank has joined,
 * the half-done ones are dropped and control_connect closes the listeners.
 * Launched without PMIx (control_env.c), a rank that proves itself twice
 * fails the job: both processes hold the secret, so neither can be trusted
 * to be the right one.
 * What it does not do: carry frames (control_loop.c) or connect workers
 * (control.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control_state.h"
#include "core/fail.h"

#define JOIN_LOG_MAX 16

struct shake {
	int fd;
	char from[64];          /* "ip:port" */
	double deadline;
	int got_hello;
	size_t have;            /* bytes of the current message received */
	struct auth_hello hello;
	struct auth_reply reply;
	struct auth_proof proof;
};

struct join {
	struct control *c;
	struct shake *s;        /* CTL_MAX_HANDSHAKES slots, fd -1 = free */
	int joined;
	unsigned dropped;
	int duplicate;          /* launch without PMIx: a rank proved twice (-1 none) */
	char dup_text[512];
};

static void drop(struct join *j, struct shake *s, const char *why)
{
	if (j->dropped++ < JOIN_LOG_MAX) {
		char suffix[300];
		runtime_suffix(j->c->rt, suffix, sizeof(suffix));
		fprintf(stderr, "hvd: control: connection from %s failed authentication%s%s%s: "
			"dropped%s\n", s->from, why ? " (" : "", why ? why : "", why ? ")" : "", suffix);
	}
	close(s->fd);
	s->fd = -1;
}

static struct shake *free_slot(struct join *j)
{
	struct shake *oldest = NULL;
	for (int i = 0; i < CTL_MAX_HANDSHAKES; i++) {
		if (j->s[i].fd < 0)
			return &j->s[i];
		if (!oldest || j->s[i].deadline < oldest->deadline)
			oldest = &j->s[i];
	}
	drop(j, oldest, "too many connections at once");
	return oldest;
}

static void accept_all(struct join *j, int lfd)
{
	for (;;) {
		struct sockaddr_in a;
		socklen_t alen = sizeof(a);
		int fd = accept4(lfd, (struct sockaddr *)&a, &alen, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		struct shake *s = free_slot(j);
		*s = (struct shake){ .fd = fd, .deadline = runtime_now() + CTL_HANDSHAKE_S };
		char ip[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
		snprintf(s->from, sizeof(s->from), "%s:%u", ip, ntohs(a.sin_port));
	}
}

/* Without PMIx nothing stops two processes from claiming one index, and
 * both hold the secret: the job cannot tell which one is right, so it
 * fails, and the second one hears why at once. */
static void claimed_twice(struct join *j, struct shake *s, int rank)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	char first[64] = "?", ip[INET_ADDRSTRLEN] = "?";
	if (!getpeername(j->c->peers[rank].fd, (struct sockaddr *)&a, &alen)) {
		inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
		snprintf(first, sizeof(first), "%s:%u", ip, ntohs(a.sin_port));
	}
	char suffix[300];
	runtime_suffix(j->c->rt, suffix, sizeof(suffix));
	snprintf(j->dup_text, sizeof(j->dup_text), "hvd: HVD_RANK: '%d': claimed by two processes "
		 "(connections from %s and %s): each process needs its own index "
		 "(HVD_RANK or JOB_COMPLETION_INDEX)%s", rank, first, s->from, suffix);
	control_send_msg(s->fd, MSG_ABORT, j->dup_text, (uint32_t)strlen(j->dup_text));
	close(s->fd);
	s->fd = -1;
	j->duplicate = rank;
}

/* A worker proved itself: its connection becomes the rank's. */
static void admit(struct join *j, struct shake *s)
{
	struct control *c = j->c;
	int rank = s->hello.rank;
	if (c->peers[rank].fd >= 0) { /* without PMIx nothing stops two claims */
		if (c->rt->boot.mode == BOOTSTRAP_ENV)
			claimed_twice(j, s, rank);
		else
			drop(j, s, "rank already joined");
		return;
	}
	control_socket_options(s->fd, c->rt->set.timeout_s);
	c->peers[rank].fd = s->fd;
	c->peers[rank].last_seen = runtime_now();
	s->fd = -1;
	j->joined++;
}

static void on_hello(struct join *j, struct shake *s)
{
	struct control *c = j->c;
	char why[128];
	uint8_t nonce[AUTH_NONCE_BYTES];
	if (auth_hello_check(&s->hello, c->rt->boot.size, why, sizeof(why))) {
		drop(j, s, why);
		return;
	}
	if (auth_random(nonce, sizeof(nonce))) {
		drop(j, s, "getrandom failed");
		return;
	}
	auth_reply_make(&c->key, &s->hello, nonce, &s->reply);
	/* 72 bytes into an empty socket buffer: all or nothing */
	if (send(s->fd, &s->reply, sizeof(s->reply), MSG_NOSIGNAL) != (ssize_t)sizeof(s->reply)) {
		drop(j, s, "cannot reply");
		return;
	}
	s->got_hello = 1;
	s->have = 0;
}

/* Reads only what the current message lacks: frames a worker sends right
 * after its proof stay in the socket for the control thread. */
static void on_readable(struct join *j, struct shake *s)
{
	char *dst = s->got_hello ? (char *)&s->proof : (char *)&s->hello;
	size_t want = s->got_hello ? sizeof(s->proof) : sizeof(s->hello);
	ssize_t r = recv(s->fd, dst + s->have, want - s->have, 0);
	if (r <= 0) { /* nothing yet (EAGAIN, EINTR), or the end */
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			drop(j, s, r == 0 ? "closed before its proof" : strerror(errno));
		return;
	}
	s->have += (size_t)r;
	if (s->have < want)
		return;
	if (!s->got_hello)
		on_hello(j, s);
	else if (auth_proof_verify(&j->c->key, &s->hello, &s->reply, &s->proof))
		drop(j, s, NULL);
	else
		admit(j, s);
}

/* Drops the handshakes past their deadline at `now`, or (over) every one
 * still going once start-up is over. */
static void drop_late(struct join *j, double now, int over)
{
	for (int i = 0; i < CTL_MAX_HANDSHAKES; i++)
		if (j->s[i].fd >= 0 && (over || now > j->s[i].deadline))
			drop(j, &j->s[i], over ? "start-up is over" : "no proof within 5 s");
}

static void poll_once(struct join *j, struct pollfd *fds, double deadline)
{
	struct control *c = j->c;
	int n = c->nlisten;
	for (int i = 0; i < n; i++)
		fds[i] = (struct pollfd){ c->listen_fd[i], POLLIN, 0 };
	for (int i = 0; i < CTL_MAX_HANDSHAKES; i++) /* a free slot's fd -1 is not polled */
		fds[n + i] = (struct pollfd){ j->s[i].fd, POLLIN, 0 };
	int ms = (int)((deadline - runtime_now()) * 1000) + 1;
	if (poll(fds, (nfds_t)(n + CTL_MAX_HANDSHAKES), ms > 100 ? 100 : ms) <= 0)
		return;
	for (int i = 0; i < CTL_MAX_HANDSHAKES; i++)
		if (fds[n + i].revents)
			on_readable(j, &j->s[i]);
	for (int k = 0; k < n; k++)
		if (fds[k].revents)
			accept_all(j, fds[k].fd);
}

static void describe_missing(struct control *c, char *err, size_t errlen)
{
	struct runtime *rt = c->rt;
	int ranks[rt->boot.size], n = 0;
	snprintf(err, errlen, "hvd: control plane: 'port %u': not every rank connected and "
		 "authenticated within HVD_TIMEOUT_S (%g s); missing:", rt->hosts[0].ctl_port,
		 rt->set.timeout_s);
	for (int r = 1; r < rt->boot.size; r++)
		if (c->peers[r].fd < 0) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, " rank %d (%s)", r, control_host_of(rt, r));
			ranks[n++] = r;
		}
	runtime_lost_of(rt, HVD_LOST_NEVER_JOINED, ranks, n, &runtime_lost);
}

int control_join(struct control *c, char *err, size_t errlen)
{
	struct runtime *rt = c->rt;
	struct join j = { .c = c, .joined = 1, .duplicate = -1 };
	j.s = calloc(CTL_MAX_HANDSHAKES, sizeof(*j.s));
	struct pollfd *fds = calloc(CTL_MAX_HANDSHAKES + CTL_MAX_LISTEN, sizeof(*fds));
	if (!j.s || !fds) {
		free(j.s);
		free(fds);
		return HVD_ERR_NOMEM;
	}
	for (int i = 0; i < CTL_MAX_HANDSHAKES; i++)
		j.s[i].fd = -1;
	double deadline = runtime_now() + rt->set.timeout_s;
	while (j.joined < rt->boot.size && j.duplicate < 0 && runtime_now() < deadline) {
		poll_once(&j, fds, deadline);
		drop_late(&j, runtime_now(), 0);
	}
	drop_late(&j, 0, 1);
	if (j.dropped > JOIN_LOG_MAX)
		fprintf(stderr, "hvd: control: '%u connections': failed authentication: dropped "
			"(only the first %d were logged)\n", j.dropped, JOIN_LOG_MAX);
	free(j.s);
	free(fds);
	if (j.duplicate >= 0)
		return fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "%s", j.dup_text);
	if (j.joined == rt->boot.size)
		return 0;
	describe_missing(c, err, errlen);
	return HVD_ERR_COMM;
}
