/* transport/iface_shared.c - addresses more than one host has, and the
 * interfaces of this host that hold them (iface_shared.h). Quadratic in
 * the rows' addresses: one comparison per pair of ranks' entries, once at
 * start-up.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "core/csv_list.h"
#include "transport/iface_shared.h"

void iface_walk(const char *holding, char *out, size_t len)
{
	struct ifaddrs *all = NULL;
	out[0] = '\0';
	if (getifaddrs(&all))
		return;
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		char ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
		if (!holding)
			csv_append(out, len, ip);
		else if (csv_listed(holding, ip, strlen(ip)))
			csv_append(out, len, i->ifa_name);
	}
	freeifaddrs(all);
}

int iface_shared(const struct iface_row *rows, int n, char *out, size_t len)
{
	int count = 0;
	out[0] = '\0';
	for (int r = 0; r < n; r++)
		for (const char *a = rows[r].addrs; *a; a += strcspn(a, ",") + (a[strcspn(a, ",")] == ',')) {
			char ip[INET_ADDRSTRLEN];
			size_t k = strcspn(a, ",");
			snprintf(ip, sizeof(ip), "%.*s", (int)k, a);
			for (int o = 0; k && k < sizeof(ip) && o < n; o++)
				if (strcmp(rows[o].host, rows[r].host) && csv_listed(rows[o].addrs, ip, k)) {
					count += csv_append(out, len, ip);
					break;
				}
		}
	return count;
}
