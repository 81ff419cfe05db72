/* train/rejoin.c - the survivors' own world (rejoin.h). The coordinator
 * writes the secret first and the world file last, each to a temporary
 * name and renamed, so a member that sees the world file finds both whole.
 * What it does not do: retry a port another process took in between
 * (hvd_init then fails naming it, and so does the run).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
#include "train/rejoin.h"

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

/* 1 when ip lies on a network one of this host's interfaces is on. */
static int on_my_network(const char *ip)
{
	struct in_addr a;
	struct ifaddrs *all = NULL;
	int yes = 0;
	if (inet_pton(AF_INET, ip, &a) != 1 || getifaddrs(&all))
		return 0;
	for (struct ifaddrs *i = all; i && !yes; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && i->ifa_netmask) {
			uint32_t mine = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
			uint32_t mask = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
			yes = (mine & mask) == (a.s_addr & mask);
		}
	freeifaddrs(all);
	return yes;
}

/* The member that coordinates: a port, a secret, then the world file
 * of generation g. */
static int publish(const char *out, long g)
{
	unsigned char raw[32];
	char secret[sizeof(raw) * 2 + 2], world[2048], addrs[1900];
	unsigned port = free_port();
	own_addresses(addrs, sizeof(addrs));
	if (!port || !addrs[0] || getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		fprintf(stderr, "chexnet: survivors: no port, address or random secret for the "
			"world of the ranks left: %s\n", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(secret + 2 * i, 3, "%02x", raw[i]);
	strcat(secret, "\n");
	snprintf(world, sizeof(world), "%ld %u %s\n", g, port, addrs);
	return put_private(out, ".survivors/secret", secret) ||
	       put_private(out, ".survivors/world", world) ? -1 : 0;
}

/* The world file of generation g, once it exists: the port and the
 * address to use (one of an older generation is waited past). */
static int read_world(const char *out, char *coordinator, size_t len, long g)
{
	char path[4400], line[2048];
	snprintf(path, sizeof(path), "%s/.survivors/world", out);
	for (double t0 = now_seconds(); now_seconds() - t0 < REJOIN_WAIT_S; usleep(20000)) {
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		int got = fgets(line, sizeof(line), f) != NULL;
		fclose(f);
		unsigned port;
		long generation;
		char addrs[2048];
		if (got && sscanf(line, "%ld", &generation) == 1 && generation < g)
			continue;
		if (!got || sscanf(line, "%ld %u %2047s", &generation, &port, addrs) != 3 || !port ||
		    port > 65535 || generation != g) {
			fprintf(stderr, "chexnet: survivors: '%s': not a world of the ranks left\n", path);
			return -1;
		}
		char *first = NULL, *save = NULL;
		for (char *a = strtok_r(addrs, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
			a[strcspn(a, "/")] = '\0';
			first = first ? first : a;
			if (on_my_network(a)) {
				first = a;
				break;
			}
		}
		snprintf(coordinator, len, "%s:%u", first, port);
		return 0;
	}
	fprintf(stderr, "chexnet: survivors: '%s': no coordinator for the ranks left within %.0f s\n",
		path, REJOIN_WAIT_S);
	return -1;
}

int rejoin_prepare(const char *out, int new_rank, int size, long generation)
{
	char coordinator[2100], number[32], secret[4400];
	if ((new_rank == 0 && publish(out, generation)) ||
	    read_world(out, coordinator, sizeof(coordinator), generation))
		return -1;
	snprintf(secret, sizeof(secret), "%s/.survivors/secret", out);
	snprintf(number, sizeof(number), "%d", new_rank);
	setenv("HVD_RANK", number, 1);
	snprintf(number, sizeof(number), "%d", size);
	setenv("HVD_SIZE", number, 1);
	setenv("HVD_COORDINATOR", coordinator, 1);
	setenv("HVD_SECRET_FILE", secret, 1);
	unsetenv("PMIX_NAMESPACE");
	unsetenv("PMIX_RANK");
	return 0;
}
