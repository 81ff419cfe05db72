/* report.c - the start-up report rank 0 prints: one table (rank, host,
 * local rank, GPU bus id, CPU list, the GPU's NUMA node and how many of
 * the CPUs lie on it, socket, backend) and a warning per
 * broken placement rule of the source documents (practice L1, L2, C2): two
 * ranks on one GPU, a rank running outside the CPUs the plugin chose for
 * its GPU's socket, more ranks on a node than GPUs, NCCL forced onto TCP
 * where InfiniBand exists, one hostname on two nodes (OpenMPI names its
 * shared-memory segments after the hostname: they collide, measured).
 * Pure: formats host_entry rows into text.
 * What it does not do: gather the rows (api.c) or print.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observe/report.h"

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* 1 when no rank before r is on r's host (by_host) or node. */
static int first_on(const struct host_entry *hosts, int r, int by_host)
{
	for (int q = 0; q < r; q++)
		if (by_host ? !strcmp(hosts[q].host, hosts[r].host) : hosts[q].node_id == hosts[r].node_id)
			return 0;
	return 1;
}

#define REPORT_MAX_CPU 8192

/* "0-3,8,10-11" into a bitmap; -1 when it is not such a list. */
static int parse_cpulist(const char *s, uint64_t *bits)
{
	memset(bits, 0, REPORT_MAX_CPU / 8);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0 || a >= REPORT_MAX_CPU)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= REPORT_MAX_CPU)
				return -1;
		}
		for (long c = a; c <= b; c++)
			bits[c / 64] |= 1ull << (c % 64);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return 0;
}

/* The whole lists, as sets ("0-1" and "0,1" agree); text when unparsable. */
static int same_cpus(const char *a, const char *b)
{
	uint64_t x[REPORT_MAX_CPU / 64], y[REPORT_MAX_CPU / 64];
	if (parse_cpulist(a, x) || parse_cpulist(b, y))
		return !strcmp(a, b);
	return !memcmp(x, y, sizeof(x));
}

/* "k/n": k of the task's n CPUs on its GPU's NUMA node; "-" unknown. */
static void local_cpus(const struct host_entry *h, char *out, size_t len)
{
	uint64_t mine[REPORT_MAX_CPU / 64], near[REPORT_MAX_CPU / 64];
	int k = 0, n = 0;
	snprintf(out, len, "-");
	if (!h->cpus[0] || !h->numa_cpus[0] || parse_cpulist(h->cpus, mine) ||
	    parse_cpulist(h->numa_cpus, near))
		return;
	for (int i = 0; i < REPORT_MAX_CPU / 64; i++) {
		n += __builtin_popcountll(mine[i]);
		k += __builtin_popcountll(mine[i] & near[i]);
	}
	snprintf(out, len, "%d/%d", k, n);
}

void report_format(const struct host_entry *hosts, int size, const char *backend,
		   char *out, size_t len)
{
	int nodes = 0;
	for (int r = 0; r < size; r++)
		nodes += first_on(hosts, r, 0);
	size_t used = (size_t)snprintf(out, len, "hvd: start-up: %d rank%s, backend %s, %d node%s\n"
				       "  rank  host             node  local  gpu-busid     cpus         numa  "
				       "near-gpu  socket  bind\n",
				       size, size == 1 ? "" : "s", backend, nodes, nodes == 1 ? "" : "s");
	for (int r = 0; r < size && used < len; r++) {
		const struct host_entry *h = &hosts[r];
		char near[32];
		local_cpus(h, near, sizeof(near));
		used += (size_t)snprintf(out + used, len - used, "  %-4d  %-16s %-4d  %-5d  %-12s  %-12s "
					 "%-4s  %-8s  %-6s  %s\n", r, h->host, h->node_id, h->local_rank,
					 or_dash(h->gpu_busid), or_dash(h->cpus[0] ? h->cpus : h->affinity),
					 or_dash(h->numa), near, or_dash(h->socket), or_dash(h->bind));
	}
}

/* Appends one warning line to out (*used bytes long); returns 1. */
__attribute__((format(printf, 4, 5)))
static int warn(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (*used < len)
		*used += (size_t)vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	if (*used < len)
		*used += (size_t)snprintf(out + *used, len - *used, "\n");
	return 1;
}

int report_warnings(const struct host_entry *hosts, int size, const char *backend,
		    char *out, size_t len)
{
	size_t used = 0;
	int count = 0;
	if (len)
		out[0] = '\0';
	for (int r = 0; r < size; r++) {
		const struct host_entry *h = &hosts[r];
		for (int q = 0; q < r && h->gpu_busid[0]; q++)
			if (!strcmp(h->host, hosts[q].host) && !strcmp(h->gpu_busid, hosts[q].gpu_busid))
				count += warn(out, len, &used, "hvd: warning: 'GPU %s on %s': ranks %d and "
					      "%d share it; use one process per GPU (srun --hvd)",
					      h->gpu_busid, h->host, q, r);
		if (h->cpus[0] && h->affinity[0] && !same_cpus(h->cpus, h->affinity) &&
		    strcmp(h->bind, "none"))
			count += warn(out, len, &used, "hvd: warning: 'rank %d runs on CPUs %s': the hvd "
				      "plugin bound it to %s (socket %s, nearest its GPU); something "
				      "re-bound it", r, h->affinity, h->cpus, or_dash(h->socket));
		int first_on_host = first_on(hosts, r, 1), ranks = 0;
		for (int q = 0; q < size; q++)
			ranks += !strcmp(hosts[q].host, h->host);
		if (first_on_host && h->gpus_visible > 0 && ranks > h->gpus_visible)
			count += warn(out, len, &used, "hvd: warning: '%d ranks, %d GPUs on %s': more "
				      "processes than GPUs fight over them; use --ntasks-per-node=%d",
				      ranks, h->gpus_visible, h->host, h->gpus_visible);
		int first_on_node = first_on(hosts, r, 0);
		for (int q = 0; first_on_node && !first_on_host && q < r; q++)
			if (!strcmp(hosts[q].host, h->host) && hosts[q].node_id != h->node_id) {
				count += warn(out, len, &used, "hvd: warning: 'host %s on nodes %d and %d': "
					      "two nodes report one hostname; OpenMPI's shared-memory "
					      "segments are named after it and collide (give each node its "
					      "own hostname)", h->host, hosts[q].node_id, h->node_id);
				break;
			}
		if (first_on_host && !strcmp(backend, "nccl") && h->has_ib && h->ib_disabled)
			count += warn(out, len, &used, "hvd: warning: 'NCCL_IB_DISABLE=1 on %s': "
				      "InfiniBand is present but NCCL is forced onto TCP", h->host);
	}
	return count;
}

/* "rank 2 (host n2)", "ranks 2, 3 (host n2), rank 5 (host n3)": `ranks`
 * (ascending) grouped by host in order of first appearance. */
void report_name_ranks(const struct host_entry *hosts, int size, const int *ranks, int n,
		       char *out, size_t len)
{
	size_t used = 0;
	if (len)
		out[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		const char *host = ranks[i] >= 0 && ranks[i] < size ? hosts[ranks[i]].host : "?";
		int seen = 0, same = 0;
		for (int k = 0; k < i; k++)
			seen |= !strcmp(ranks[k] >= 0 && ranks[k] < size ? hosts[ranks[k]].host : "?", host);
		if (seen)
			continue;
		for (int k = i; k < n; k++)
			same += !strcmp(ranks[k] >= 0 && ranks[k] < size ? hosts[ranks[k]].host : "?", host);
		used += (size_t)snprintf(out + used, len - used, "%s%s ", used ? ", " : "",
					 same > 1 ? "ranks" : "rank");
		for (int k = i, first = 1; k < n && used < len; k++)
			if (!strcmp(ranks[k] >= 0 && ranks[k] < size ? hosts[ranks[k]].host : "?", host)) {
				used += (size_t)snprintf(out + used, len - used, "%s%d", first ? "" : ",", ranks[k]);
				first = 0;
			}
		if (used < len)
			used += (size_t)snprintf(out + used, len - used, " (host %s)", host);
	}
}
