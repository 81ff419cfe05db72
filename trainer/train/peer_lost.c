/* train/peer_lost.c - the lines that name lost peers and their hosts
 * (peer_lost.h), from the runtime's record.
 * What it does not do: read the record (train/dist.c) or decide what to
 * do about it (recover/survivors.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/peer_lost.h"

int peer_lost_has_host(const struct peer_lost *l, const char *host, size_t len)
{
	for (const char *h = l->hosts; *h;) {
		size_t n = strcspn(h, ",");
		if (n == len && strncmp(h, host, len) == 0)
			return 1;
		h += n + (h[n] == ',');
	}
	return 0;
}

/* host (len bytes) appended to out->hosts unless already there. */
static int add_host(struct peer_lost *out, const char *host, size_t len)
{
	size_t used = strlen(out->hosts);
	if (len == 0 || used + len + 2 > sizeof(out->hosts))
		return -1;
	if (peer_lost_has_host(out, host, len))
		return 0;
	if (used)
		out->hosts[used++] = ',';
	memcpy(out->hosts + used, host, len);
	out->hosts[used + len] = '\0';
	return 0;
}

void peer_lost_name(struct peer_lost *out, const char *const *hosts)
{
	size_t used = 0;

	out->who[0] = out->hosts[0] = '\0';
	for (int i = 0; i < out->count; i++) {
		int seen = 0, same = 0;
		for (int k = 0; k < i; k++)
			seen |= !strcmp(hosts[k], hosts[i]);
		for (int k = i; k < out->count && !seen; k++)
			same += !strcmp(hosts[k], hosts[i]);
		if (seen)
			continue;
		used += (size_t)snprintf(out->who + used, sizeof(out->who) - used, "%s%s ",
					 used ? ", " : "", same > 1 ? "ranks" : "rank");
		for (int k = i, first = 1; k < out->count && used < sizeof(out->who); k++)
			if (!strcmp(hosts[k], hosts[i])) {
				used += (size_t)snprintf(out->who + used, sizeof(out->who) - used, "%s%d",
							 first ? "" : ",", out->ranks[k]);
				first = 0;
			}
		if (used < sizeof(out->who))
			used += (size_t)snprintf(out->who + used, sizeof(out->who) - used, " (host %s)",
						 hosts[i][0] ? hosts[i] : "?");
		if (hosts[i][0])
			add_host(out, hosts[i], strlen(hosts[i]));
		if (used >= sizeof(out->who))
			break;
	}
}

void peer_lost_name_hosts(struct peer_lost *out, const char *hosts_by_rank)
{
	size_t who = 0;

	out->who[0] = out->hosts[0] = '\0';
	for (int i = 0; i < out->count; i++) {
		const char *h = hosts_by_rank;
		for (int k = 0; k < out->ranks[i] && *h; k++)
			h += strcspn(h, ",") + (h[strcspn(h, ",")] == ',');
		size_t n = strcspn(h, ",");
		if (who < sizeof(out->who))
			who += (size_t)snprintf(out->who + who, sizeof(out->who) - who,
						"%srank %d (host %.*s)", i ? ", " : "", out->ranks[i],
						n ? (int)n : 1, n ? h : "?");
		if (n)
			add_host(out, h, n);
	}
}
