/* control.c - the control plane: rank 0 listens on a TCP port that every
 * rank learns through the bootstrap; each other rank keeps one connection.
 * It carries the negotiation (each rank announces its submissions; rank 0
 * plans buckets with coord.c and tells everyone what to run), heartbeats
 * both ways, the stall inspector's reports, and the abort broadcast: one
 * rank fails, every rank fails with the same reason. A peer that closes
 * its connection without saying goodbye died; one that stays silent for
 * HVD_TIMEOUT_S is named with its host (Slurm itself notices a cut
 * network only after SlurmdTimeout). Every connection first proves it
 * belongs to the job (auth.h): workers here, rank 0 in control_join.c;
 * rank 0 listens only on the addresses it publishes and only until every
 * rank has joined.
 * What it does not do: move tensor data (the backends do), or exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control_state.h"
#include "core/csv_list.h"
#include "core/fail.h"
#include "core/fdio.h"

/* ---- rank 0: listen on the published addresses only ---- */

static void local_addresses(char *out, size_t len)
{
	struct ifaddrs *ifs = NULL, *i;
	size_t count = 0;
	out[0] = '\0';
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
			/* room kept for ",127.0.0.1" */
			if (strcmp(ip, "127.0.0.1") && count + 1 < CTL_MAX_LISTEN)
				count += (size_t)csv_append(out, len - 10, ip);
		}
		freeifaddrs(ifs);
	}
	/* loopback last: same-node ranks always reach it */
	size_t used = strlen(out);
	snprintf(out + used, len - used, "%s127.0.0.1", used ? "," : "");
}

int control_resolve(const char *host, char *out, size_t len, int max)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc)
		return rc;
	out[0] = '\0';
	for (struct addrinfo *a = res; a && max > 0; a = a->ai_next) {
		char ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &((struct sockaddr_in *)a->ai_addr)->sin_addr, ip, sizeof(ip));
		max -= csv_append(out, len, ip);
	}
	freeaddrinfo(res);
	return 0;
}

/* One socket per address of `addrs`, all on one port (the first one's,
 * ephemeral unless fixed): a port taken on a later address retries. */
static int bind_published(struct control *c, const char *addrs, uint16_t fixed, uint16_t *port)
{
	for (int attempt = 0; attempt < 20; attempt++) {
		char list[sizeof(((struct host_entry *)0)->ctl_addrs)];
		snprintf(list, sizeof(list), "%s", addrs);
		char *save = NULL;
		*port = fixed;
		int ok = 1;
		for (char *ip = strtok_r(list, ",", &save); ip && ok; ip = strtok_r(NULL, ",", &save)) {
			int fd = fdio_listen(ip, port, CTL_MAX_HANDSHAKES);
			ok = fd >= 0;
			if (ok)
				c->listen_fd[c->nlisten++] = fd;
		}
		if (ok)
			return 0;
		control_close_listeners(c);
		if (fixed || errno != EADDRINUSE)
			return -1;
	}
	return -1;
}

static int setup_key(struct control *c, struct host_entry *mine, char *err, size_t errlen)
{
	const struct hvd_settings *s = &c->rt->set;
	if (s->secret_file[0])
		return auth_key_from_file(s->secret_file, &c->key, err, errlen) ? HVD_ERR_SETTINGS : 0;
	if (c->rt->boot.rank != 0)
		return 0; /* learnt from rank 0's row of the host table */
	if (auth_key_generate(&c->key, err, errlen))
		return HVD_ERR_COMM;
	memcpy(mine->ctl_key, c->key.bytes, sizeof(mine->ctl_key));
	return 0;
}

int control_listen(struct runtime *rt, struct host_entry *mine, char *err, size_t errlen)
{
	struct control *c = malloc(sizeof(*c));
	if (!c)
		return HVD_ERR_NOMEM;
	*c = (struct control){ .rt = rt, .stall_warned = -1 };
	rt->ctl_wake[0] = rt->ctl_wake[1] = -1;
	rt->ctl = c;
	if (pipe2(rt->ctl_wake, O_NONBLOCK | O_CLOEXEC))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: control plane: 'pipe': %s",
				strerror(errno));
	if (rt->boot.size == 1)
		return 0;
	int rc = setup_key(c, mine, err, errlen);
	if (rc || rt->boot.rank != 0)
		return rc;
	if (rt->set.coord_host[0]) /* its first IPv4 address, one of this machine's */
		rc = control_resolve(rt->set.coord_host, mine->ctl_addrs, sizeof(mine->ctl_addrs), 1);
	else
		local_addresses(mine->ctl_addrs, sizeof(mine->ctl_addrs));
	if (rc)
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_COORDINATOR: '%s': %s",
				rt->set.coord_host, gai_strerror(rc));
	if (bind_published(c, mine->ctl_addrs, rt->set.coord_port, &mine->ctl_port))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: control plane: 'listen on %s "
				"port %u': %s", mine->ctl_addrs, rt->set.coord_port,
				strerror(errno));
	return 0;
}

/* ---- workers: find and authenticate rank 0 ---- */

static int try_addresses(struct control *c, double deadline)
{
	const struct host_entry *root = &c->rt->hosts[0];
	char addrs[sizeof(root->ctl_addrs)];
	memcpy(addrs, root->ctl_addrs, sizeof(addrs));
	char *save = NULL;
	for (char *ip = strtok_r(addrs, ",", &save); ip; ip = strtok_r(NULL, ",", &save)) {
		double by = runtime_now() + 2.0; /* each address within 2 s */
		int fd = fdio_connect(ip, root->ctl_port, by < deadline ? by : deadline);
		if (fd < 0)
			continue;
		double hs = runtime_now() + 2 * CTL_HANDSHAKE_S;
		control_socket_options(fd, c->rt->set.timeout_s);
		if (!auth_connect(fd, &c->key, c->rt->boot.rank, c->rt->boot.size,
				  hs < deadline ? hs : deadline))
			return fd;
		close(fd); /* not rank 0, or not in time: the next address */
	}
	return -1;
}

int control_reach_rank0(struct control *c, int (*resolve)(struct runtime *rt, char *why, size_t len),
			char *why, size_t whylen)
{
	double deadline = runtime_now() + c->rt->set.timeout_s;
	int fd = -1;
	while (fd < 0 && runtime_now() < deadline) {
		if (!resolve || !resolve(c->rt, why, whylen))
			fd = try_addresses(c, deadline);
		if (fd < 0)
			usleep(100000);
	}
	if (fd < 0)
		return HVD_ERR_COMM;
	c->peers[0].fd = fd;
	c->peers[0].last_seen = runtime_now();
	return 0;
}

/* Workers learn the secret from rank 0's row; then no copy stays in the table. */
static void take_key(struct control *c)
{
	struct runtime *rt = c->rt;
	if (!rt->set.secret_file[0] && rt->boot.rank != 0)
		memcpy(c->key.bytes, rt->hosts[0].ctl_key, sizeof(c->key.bytes));
	for (int r = 0; r < rt->boot.size; r++)
		memset(rt->hosts[r].ctl_key, 0, sizeof(rt->hosts[r].ctl_key));
}

int control_peers_init(struct control *c)
{
	struct runtime *rt = c->rt;
	c->npeers = rt->boot.rank == 0 ? rt->boot.size : 1;
	c->peers = calloc((size_t)c->npeers, sizeof(*c->peers));
	if (!c->peers)
		return HVD_ERR_NOMEM;
	for (int i = 0; i < c->npeers; i++)
		c->peers[i].fd = -1;
	rt->cursor.id = -1;
	if (rt->boot.rank == 0) {
		c->peers[0].closed = 1; /* own slot */
		c->nego_open = calloc(CTL_NEGO_RING, 1);
		if (!c->nego_open ||
		    coord_init(&c->coord, rt->boot.size, rt->set.fusion_threshold_bytes))
			return HVD_ERR_NOMEM;
	}
	return 0;
}

int control_connect(struct runtime *rt, char *err, size_t errlen)
{
	struct control *c = rt->ctl;
	const struct host_entry *root = &rt->hosts[0];
	int join = rt->boot.size > 1 && !c->joined; /* else joined already, or alone */
	int rc = 0;
	if (!c->peers && control_peers_init(c))
		return HVD_ERR_NOMEM;
	take_key(c);
	if (join && rt->boot.rank == 0)
		rc = control_join(c, err, errlen);
	else if (join && control_reach_rank0(c, NULL, NULL, 0))
		rc = fail_msg(HVD_ERR_COMM, err, errlen, "hvd: control plane: '%s port %u': rank 0 "
			      "(host %s) unreachable or not authenticated within HVD_TIMEOUT_S",
			      root->ctl_addrs, root->ctl_port, root->host);
	control_close_listeners(c);
	if (rc)
		return rc;
	c->last_hb = runtime_now();
	if (pthread_create(&c->thread, NULL, control_main, c))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: control plane: 'thread': cannot "
				"start");
	c->thread_started = 1;
	return 0;
}

