/* control.c - the control plane: rank 0 listens on a TCP port that every
 * rank learns through the bootstrap; each other rank keeps one connection.
 * It carries the negotiation (each rank announces its submissions; rank 0
 * plans buckets with coord.c and tells everyone what to run), heartbeats
 * both ways, the stall inspector's reports, and the abort broadcast: one
 * rank fails, every rank fails with the same reason. A peer that closes
 * its connection without saying goodbye died; one that stays silent for
 * HVD_TIMEOUT_S is named with its host (Slurm itself notices a cut
 * network only after SlurmdTimeout).
 * What it does not do: move tensor data (the backends do), or exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"


static int send_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int control_send_msg(int fd, uint32_t type, const void *payload, uint32_t len)
{
	char stackbuf[512];
	char *buf = len + sizeof(struct msg_header) <= sizeof(stackbuf) ? stackbuf
		    : malloc(len + sizeof(struct msg_header));
	if (!buf)
		return -1;
	struct msg_header h = { type, len };
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	int rc = send_all(fd, buf, sizeof(h) + len);
	if (buf != stackbuf)
		free(buf);
	return rc;
}

const char *control_host_of(const struct runtime *rt, int rank)
{
	return rt->hosts && rank >= 0 && rank < rt->boot.size ? rt->hosts[rank].host : "?";
}

static void set_socket_options(int fd, double timeout_s)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct timeval tv = { (time_t)timeout_s, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* ---- rank 0: listen, publish addresses ---- */

static void local_addresses(char *out, size_t len)
{
	struct ifaddrs *ifs = NULL, *i;
	size_t used = 0;
	out[0] = '\0';
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
			if (!strcmp(ip, "127.0.0.1") || used + strlen(ip) + 2 >= len)
				continue;
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "", ip);
		}
		freeifaddrs(ifs);
	}
	if (used + 11 < len) /* loopback last: same-node ranks always reach it */
		snprintf(out + used, len - used, "%s127.0.0.1", used ? "," : "");
}

int control_listen(struct runtime *rt, struct host_entry *mine, char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	if (!c)
		return HVD_ERR_NOMEM;
	c->rt = rt;
	c->listen_fd = -1;
	c->wake[0] = c->wake[1] = -1;
	c->stall_warned = -1;
	rt->ctl = c;
	if (pipe2(c->wake, O_NONBLOCK | O_CLOEXEC)) {
		snprintf(err, errlen, "hvd: control plane: 'pipe': %s", strerror(errno));
		return HVD_ERR_COMM;
	}
	if (rt->boot.rank != 0 || rt->boot.size == 1)
		return 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t alen = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		snprintf(err, errlen, "hvd: control plane: 'listen': %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return HVD_ERR_COMM;
	}
	c->listen_fd = fd;
	mine->ctl_port = ntohs(a.sin_port);
	local_addresses(mine->ctl_addrs, sizeof(mine->ctl_addrs));
	return 0;
}

/* ---- connection set-up ---- */

static int connect_one(const char *ip, uint16_t port, double deadline)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)
		goto fail;
	struct pollfd p = { fd, POLLOUT, 0 };
	int ms = (int)((deadline - runtime_now()) * 1000);
	if (ms < 1 || ms > 2000)
		ms = ms < 1 ? 1 : 2000;
	int soerr = 0;
	socklen_t l = sizeof(soerr);
	if (poll(&p, 1, ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) || soerr)
		goto fail;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return -1;
}

static int worker_connect(struct control *c, char *err, size_t errlen)
{
	struct runtime *rt = c->rt;
	const struct host_entry *root = &rt->hosts[0];
	double deadline = runtime_now() + rt->set.timeout_s;
	int fd = -1;
	while (fd < 0 && runtime_now() < deadline) {
		char addrs[sizeof(root->ctl_addrs)];
		memcpy(addrs, root->ctl_addrs, sizeof(addrs));
		char *save = NULL;
		for (char *ip = strtok_r(addrs, ",", &save); ip && fd < 0; ip = strtok_r(NULL, ",", &save))
			fd = connect_one(ip, root->ctl_port, deadline);
		if (fd < 0)
			usleep(100000);
	}
	if (fd < 0) {
		snprintf(err, errlen, "hvd: control plane: '%s port %u': rank 0 (host %s) "
			 "unreachable within HVD_TIMEOUT_S", root->ctl_addrs, root->ctl_port, root->host);
		return HVD_ERR_COMM;
	}
	set_socket_options(fd, rt->set.timeout_s);
	int32_t me = rt->boot.rank;
	if (control_send_msg(fd, MSG_HELLO, &me, sizeof(me))) {
		close(fd);
		snprintf(err, errlen, "hvd: control plane: 'hello': %s", strerror(errno));
		return HVD_ERR_COMM;
	}
	c->peers[0].fd = fd;
	c->peers[0].last_seen = runtime_now();
	return 0;
}

static int read_exact(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;
	while (len) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int ms = (int)((deadline - runtime_now()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) != 1)
			return -1;
		ssize_t r = recv(fd, p, len, 0);
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int root_accept_all(struct control *c, char *err, size_t errlen)
{
	struct runtime *rt = c->rt;
	double deadline = runtime_now() + rt->set.timeout_s;
	for (int joined = 1; joined < rt->boot.size;) {
		struct pollfd pf = { c->listen_fd, POLLIN, 0 };
		int ms = (int)((deadline - runtime_now()) * 1000);
		if (ms <= 0 || poll(&pf, 1, ms) != 1)
			goto timeout;
		int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct msg_header h;
		int32_t rank = -1;
		if (read_exact(fd, &h, sizeof(h), deadline) || h.type != MSG_HELLO ||
		    h.len != sizeof(rank) || read_exact(fd, &rank, sizeof(rank), deadline) ||
		    rank <= 0 || rank >= rt->boot.size || c->peers[rank].fd >= 0) {
			close(fd);
			continue;
		}
		set_socket_options(fd, rt->set.timeout_s);
		c->peers[rank].fd = fd;
		c->peers[rank].last_seen = runtime_now();
		joined++;
	}
	return 0;
timeout:
	snprintf(err, errlen, "hvd: control plane: 'port %u': not every rank connected within "
		 "HVD_TIMEOUT_S (%g s); missing:", rt->hosts[0].ctl_port, rt->set.timeout_s);
	for (int r = 1; r < rt->boot.size; r++)
		if (c->peers[r].fd < 0) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, " rank %d (%s)", r, control_host_of(rt, r));
		}
	return HVD_ERR_COMM;
}



int control_connect(struct runtime *rt, char *err, size_t errlen)
{
	struct control *c = rt->ctl;
	int size = rt->boot.size;
	c->npeers = rt->boot.rank == 0 ? size : 1;
	c->peers = calloc((size_t)c->npeers, sizeof(*c->peers));
	if (!c->peers)
		return HVD_ERR_NOMEM;
	for (int i = 0; i < c->npeers; i++)
		c->peers[i].fd = -1;
	if (rt->boot.rank == 0) {
		c->peers[0].closed = 1; /* own slot */
		if (coord_init(&c->coord, size, rt->set.fusion_threshold_bytes))
			return HVD_ERR_NOMEM;
	}
	int rc = size == 1 ? 0 : rt->boot.rank == 0 ? root_accept_all(c, err, errlen)
						      : worker_connect(c, err, errlen);
	if (rc)
		return rc;
	c->last_hb = runtime_now();
	if (pthread_create(&c->thread, NULL, control_main, c)) {
		snprintf(err, errlen, "hvd: control plane: 'thread': cannot start");
		return HVD_ERR_COMM;
	}
	c->thread_started = 1;
	return 0;
}

