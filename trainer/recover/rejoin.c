/* recover/rejoin.c - the survivors' own world (rejoin.h). The coordinator
 * writes the secret first and the world file last, each to a temporary
 * name and renamed, so a member that sees the world file finds both whole.
 * What it does not do: retry a port another process took in between
 * (hvd_init then fails naming it, and so does the run).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/whole_file.h"
#include "recover/rejoin.h"

/* out/name = text (mode 0600), whole or not at all. */
static int put_private(const char *out, const char *name, const char *text)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", out, name);
	if (whole_file_put(path, text, 0600) == 0)
		return 0;
	fprintf(stderr, "chexnet: survivors: '%s': %s\n", path, strerror(errno));
	return -1;
}

/* A TCP port nobody listens on now (the kernel's pick), 0 on failure. */
static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unsigned port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* "ip/prefix,..." of this host's IPv4 interfaces that are up, loopback last. */
static void own_addresses(char *buf, size_t len)
{
	struct ifaddrs *all = NULL;
	size_t used = 0;
	buf[0] = '\0';
	if (getifaddrs(&all))
		return;
	for (int loop = 0; loop < 2; loop++)
		for (struct ifaddrs *i = all; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask ||
			    !(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_LOOPBACK) != !loop)
				continue;
			char ip[INET_ADDRSTRLEN];
			uint32_t mask = ntohl(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr);
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
			int n = snprintf(buf + used, len - used, "%s%s/%d", used ? "," : "", ip,
					 __builtin_popcount(mask));
			if (n < 0 || (size_t)n >= len - used)
				break;
			used += (size_t)n;
		}
	freeifaddrs(all);
}

/* ip's address as a number (host order); 0 for a text that is not one. */
static uint32_t ipv4(const char *ip, size_t n)
{
	char text[INET_ADDRSTRLEN];
	struct in_addr a;

	snprintf(text, sizeof(text), "%.*s", (int)(n < sizeof(text) ? n : sizeof(text) - 1), ip);
	return inet_pton(AF_INET, text, &a) == 1 ? ntohl(a.s_addr) : 0;
}

/* Whether ip lies on one of mine's networks ("ip/prefix,..."), and
 * whether it is one of mine's addresses. */
static void against(uint32_t ip, const char *mine, int *on_network, int *own)
{
	*on_network = *own = 0;
	for (const char *m = mine; *m; m += strcspn(m, ",") + (m[strcspn(m, ",")] == ',')) {
		size_t n = strcspn(m, ",/");
		uint32_t addr = ipv4(m, n);
		int prefix = m[n] == '/' ? atoi(m + n + 1) : 32;
		uint32_t mask = prefix <= 0 ? 0 : prefix >= 32 ? ~0u : ~0u << (32 - prefix);
		*on_network |= addr && (addr & mask) == (ip & mask);
		*own |= addr == ip;
	}
}

int rejoin_pick(const char *listed, const char *coordinator_host, const char *host,
		const char *mine, char *out, size_t len)
{
	if (strcmp(coordinator_host, host) == 0) {
		snprintf(out, len, "127.0.0.1");
		return 0;
	}
	for (const char *a = listed; *a; a += strcspn(a, ",") + (a[strcspn(a, ",")] == ',')) {
		size_t n = strcspn(a, ",/");
		uint32_t ip = ipv4(a, n);
		int on_network, own;
		against(ip, mine, &on_network, &own);
		if (ip && on_network && !own && (ip >> 24) != 127) {
			snprintf(out, len, "%.*s", (int)n, a);
			return 0;
		}
	}
	return -1;
}

/* The member that coordinates: a port, a secret, then the world file
 * of its terms. */
static int publish(const char *out, const struct rejoin_terms *t)
{
	unsigned char raw[32];
	char secret[sizeof(raw) * 2 + 2], world[2048], addrs[1700], host[256] = "";
	unsigned port = free_port();
	own_addresses(addrs, sizeof(addrs));
	gethostname(host, sizeof(host) - 1);
	if (!port || !addrs[0] || getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		fprintf(stderr, "chexnet: survivors: no port, address or random secret for the "
			"world of the ranks left: %s\n", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(secret + 2 * i, 3, "%02x", raw[i]);
	strcat(secret, "\n");
	snprintf(world, sizeof(world), "%ld %u %s %s %d %ld %ld\n", t->generation, port, addrs,
		 host[0] ? host : "-", t->size, t->accumulate, t->target);
	return put_private(out, ".survivors/secret", secret) ||
	       put_private(out, ".survivors/world", world) ? -1 : 0;
}

/* coordinator: "ip:port" of the world's coordinator for this member
 * (rejoin_pick); the coordinator itself listens on every address. */
static int coordinator_of(const char *path, int new_rank, unsigned port, const char *addrs,
			  const char *coordinator_host, char *coordinator, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "0.0.0.0", mine[2048], host[256] = "";

	own_addresses(mine, sizeof(mine));
	gethostname(host, sizeof(host) - 1);
	if (new_rank != 0 && rejoin_pick(addrs, coordinator_host, host, mine, ip, sizeof(ip))) {
		fprintf(stderr, "chexnet: survivors: '%s': no address of the coordinator's host '%s' "
			"(%s) lies on a network of this host's ('%s': %s)\n", path, coordinator_host,
			addrs, host, mine);
		return -1;
	}
	snprintf(coordinator, len, "%s:%u", ip, port);
	return 0;
}

/* One line of a world file. */
struct world_line {
	struct rejoin_terms terms;
	unsigned port;
	char addrs[2048], host[256];
};

/* The world file of generation g, once it exists (one of an older
 * generation is waited past): 0 with *w filled, 1 (silent) when a newer
 * generation's replaced it, -1 (a line). */
static int read_world(const char *out, long g, struct world_line *w)
{
	char path[4400], line[2048];
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/.survivors", out);
	snprintf(path, sizeof(path), "%s/world", dir);
	for (double t0 = now_seconds(); now_seconds() - t0 < REJOIN_WAIT_S; usleep(20000)) {
		/* the folder opened first: an NFS client revalidates it rather
		 * than answer from a cached "no such file" (base/fence.h) */
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int fd = dfd < 0 ? -1 : openat(dfd, "world", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0)
			close(dfd);
		FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
		if (!f) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		int got = fgets(line, sizeof(line), f) != NULL;
		fclose(f);
		struct rejoin_terms *t = &w->terms;
		if (got && sscanf(line, "%ld", &t->generation) == 1 && t->generation < g)
			continue;
		if (got && t->generation > g)
			return 1;
		if (!got || sscanf(line, "%ld %u %2047s %255s %d %ld %ld", &t->generation, &w->port,
				   w->addrs, w->host, &t->size, &t->accumulate, &t->target) != 7 ||
		    !w->port || w->port > 65535 || t->size < 1 || t->accumulate < 1 || t->target < 1) {
			fprintf(stderr, "chexnet: survivors: '%s': not a world of the ranks left\n", path);
			return -1;
		}
		return 0;
	}
	fprintf(stderr, "chexnet: survivors: '%s': no coordinator for the ranks left within %.0f s\n",
		path, REJOIN_WAIT_S);
	return -1;
}

int rejoin_read_terms(const char *out, long g, struct rejoin_terms *terms)
{
	char path[4400];
	struct world_line w;
	int rc = read_world(out, g, &w);
	snprintf(path, sizeof(path), "%s/.survivors/world", out);
	if (rc == 1)
		fprintf(stderr, "chexnet: survivors: '%s': generation %ld's world replaced generation "
			"%ld's: too late to join it\n", path, w.terms.generation, g);
	if (rc)
		return -1;
	*terms = w.terms;
	return 0;
}

int rejoin_prepare(const char *out, int new_rank, const struct rejoin_terms *terms,
		   struct dist_world *world)
{
	char path[4400];
	struct world_line w;
	snprintf(path, sizeof(path), "%s/.survivors/world", out);
	if (new_rank == 0 && publish(out, terms))
		return -1;
	int late = read_world(out, terms->generation, &w);
	if (late)
		return late;
	if (w.terms.size != terms->size || w.terms.accumulate != terms->accumulate ||
	    w.terms.target != terms->target || new_rank >= terms->size) {
		fprintf(stderr, "chexnet: survivors: '%s': a world of %d ranks, --accumulate %ld; "
			"rank %d expected %d ranks, --accumulate %ld\n", path, w.terms.size,
			w.terms.accumulate, new_rank, terms->size, terms->accumulate);
		return -1;
	}
	*world = (struct dist_world){ .rank = new_rank, .size = terms->size };
	if (coordinator_of(path, new_rank, w.port, w.addrs, w.host, world->coordinator,
			   sizeof(world->coordinator)))
		return -1;
	snprintf(world->secret_file, sizeof(world->secret_file), "%s/.survivors/secret", out);
	return 0;
}
