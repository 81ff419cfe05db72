/* train/peer_lost.c - reading the lost ranks and hosts out of a runtime
 * failure line (peer_lost.h). Strict: anything but the documented forms
 * is "not a lost peer".
 * What it does not do: decide what to do about it (loop/survivors.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/peer_lost.h"

/* "2,3" into out; the text after the list, or NULL. */
static const char *rank_list(const char *p, struct peer_lost *out)
{
	for (;;) {
		char *end;
		long r = strtol(p, &end, 10);
		if (end == p || r < 0 || r > 1 << 30 || out->count == PEER_LOST_MAX)
			return NULL;
		out->ranks[out->count++] = (int)r;
		if (*end != ',')
			return end;
		p = end + 1;
	}
}

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

/* "rank 3 (host n2), ranks 4,5 (host n3)" up to `end`. */
static int who_list(const char *p, const char *end, struct peer_lost *out)
{
	while (p < end) {
		if (strncmp(p, "ranks ", 6) == 0)
			p += 6;
		else if (strncmp(p, "rank ", 5) == 0)
			p += 5;
		else
			return -1;
		p = rank_list(p, out);
		if (!p || strncmp(p, " (host ", 7) != 0)
			return -1;
		p += 7;
		const char *close = strchr(p, ')');
		if (!close || close > end || add_host(out, p, (size_t)(close - p)))
			return -1;
		p = close + 1;
		if (p < end && strncmp(p, ", ", 2) != 0)
			return -1;
		p += p < end ? 2 : 0;
	}
	return out->count ? 0 : -1;
}

int peer_lost_parse(const char *line, struct peer_lost *out)
{
	static const char *const dead[] = { "'control connection closed'", "'silent for " };
	memset(out, 0, sizeof(*out));
	if (!line || strncmp(line, "hvd: ", 5) != 0)
		return 0;
	const char *who = line + 5, *end;
	if (strncmp(who, "control plane: '", 16) == 0) {   /* a worker lost rank 0 */
		who += 16;
		end = strstr(who, "': cannot send");
	} else {
		end = strstr(who, ": '");
		int known = 0;
		for (size_t i = 0; end && i < sizeof(dead) / sizeof(dead[0]); i++)
			known |= strncmp(end + 2, dead[i], strlen(dead[i])) == 0;
		end = known ? end : NULL;
	}
	if (!end || (size_t)(end - who) >= sizeof(out->who) || who_list(who, end, out)) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	memcpy(out->who, who, (size_t)(end - who));
	return 1;
}

int peer_lost_at_start(const char *line, struct peer_lost *out)
{
	const char *missing = line ? strstr(line, "; missing: rank ") : NULL;

	memset(out, 0, sizeof(*out));
	if (!line || strncmp(line, "hvd: ", 5) != 0)
		return 0;
	if (strstr(line, "': rank 0 did not answer within HVD_TIMEOUT_S") &&
	    strncmp(line, "hvd: HVD_COORDINATOR: '", 23) == 0) {
		out->count = 1;   /* ranks[0] = 0 */
		return 1;
	}
	if (!missing || strncmp(line, "hvd: control plane: 'port ", 26) != 0)
		return 0;
	for (const char *p = missing + 10; strncmp(p, " rank ", 6) == 0;) {
		p = rank_list(p + 6, out);
		if (!p || *p != ' ' || p[1] != '(' || !strchr(p, ')')) {
			memset(out, 0, sizeof(*out));
			return 0;
		}
		p = strchr(p, ')') + 1;
	}
	return out->count > 0;
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
