/* split.c - whole cores to local tasks by locality (see split.h). Every
 * task of the node computes the same split and keeps its own share, so
 * the shares never overlap. Inside a step cgroup the allowed cores are
 * the step's: each task gets those nearest its GPU, never a neighbour's.
 * What it does not do: choose GPUs or homes, bind anything.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"

struct slot {
	cpu_set_t pus;   /* the core's allowed PUs */
	int socket, numa;
	int used;
};

struct state {
	const struct split_home *home;
	int tasks;
	cpu_set_t *cpus;
	int count;            /* usable cores */
	struct slot *cores;
	int *pick, *who;      /* scratch: core indices, task indices */
	int shared;
};

static int numa_of(const struct placement_topo *topo, const cpu_set_t *pus)
{
	cpu_set_t both;
	for (int u = 0; u < topo->numa_count; u++) {
		CPU_AND(&both, &topo->numas[u].cpus, pus);
		if (CPU_COUNT(&both) > 0)
			return u;
	}
	return -1;
}

/* Every allowed core of every package, in hwloc's logical order. */
static int collect(const struct placement_topo *topo, const cpu_set_t *allowed, struct state *st)
{
	int n = 0;
	for (int s = 0; s < topo->socket_count; s++)
		n += topo->sockets[s].core_count;
	st->cores = calloc(n > 0 ? (size_t)n : 1, sizeof(*st->cores));
	st->pick = calloc(n > 0 ? (size_t)n : 1, sizeof(int));
	st->who = calloc(st->tasks > 0 ? (size_t)st->tasks : 1, sizeof(int));
	if (!st->cores || !st->pick || !st->who)
		return -1;
	for (int s = 0; s < topo->socket_count; s++) {
		for (int c = 0; c < topo->sockets[s].core_count; c++) {
			struct slot *k = &st->cores[st->count];
			CPU_AND(&k->pus, &topo->sockets[s].cores[c], allowed);
			if (CPU_COUNT(&k->pus) == 0)
				continue;
			k->socket = s;
			k->numa = numa_of(topo, &k->pus);
			st->count++;
		}
	}
	return 0;
}

/* Cores pick[0..n) to tasks who[0..m) in contiguous runs; fewer cores
 * than tasks: one core each, neighbours sharing. */
static void give(struct state *st, int n, int m)
{
	if (n == 0 || m == 0)
		return;
	if (n < m)
		st->shared = 1;
	for (int k = 0; k < m; k++) {
		int first = (int)((long)k * n / m);
		int last = n >= m ? (int)((long)(k + 1) * n / m) : first + 1;
		CPU_ZERO(&st->cpus[st->who[k]]);
		for (int i = first; i < last; i++) {
			CPU_OR(&st->cpus[st->who[k]], &st->cpus[st->who[k]], &st->cores[st->pick[i]].pus);
			st->cores[st->pick[i]].used = 1;
		}
	}
}

/* Cores of socket s (-1: every socket) on NUMA node u (INT_MIN: any),
 * unused ones only when fresh is set, into pick. */
static int pick_cores(struct state *st, int s, int u, int fresh)
{
	int n = 0;
	for (int i = 0; i < st->count; i++)
		if ((s < 0 || st->cores[i].socket == s) && (u == INT_MIN || st->cores[i].numa == u) &&
		    !(fresh && st->cores[i].used))
			st->pick[n++] = i;
	return n;
}

static int numa_rank(const struct state *st, int j)
{
	return st->home[j].numa < 0 ? INT_MAX : st->home[j].numa;
}

/* who[0..m) sorted by NUMA node (none last), then task id. */
static void sort_by_numa(struct state *st, int m)
{
	for (int i = 1; i < m; i++) {
		int j = st->who[i], k = i;
		for (; k > 0 && numa_rank(st, st->who[k - 1]) > numa_rank(st, j); k--)
			st->who[k] = st->who[k - 1];
		st->who[k] = j;
	}
}

/* Socket s: tasks homed on a NUMA node with a core for each of them split
 * that node's cores; the others (short node, or none) share the cores the
 * satisfied nodes left; if those are too few, all of the socket's tasks
 * split its cores afresh, ordered by NUMA node. */
static void split_socket(const struct placement_topo *topo, struct state *st, int s)
{
	int m;
	for (int u = 0; u < topo->numa_count; u++) {
		m = 0;
		for (int j = 0; j < st->tasks; j++)
			if (st->home[j].socket == s && st->home[j].numa == u)
				st->who[m++] = j;
		int n = m ? pick_cores(st, s, u, 0) : 0;
		if (n >= m)
			give(st, n, m);
	}
	m = 0;
	for (int j = 0; j < st->tasks; j++)
		if (st->home[j].socket == s && CPU_COUNT(&st->cpus[j]) == 0)
			st->who[m++] = j;
	if (m == 0)
		return;
	int n = pick_cores(st, s, INT_MIN, 1);
	if (n >= m) {
		give(st, n, m);
		return;
	}
	m = 0;
	for (int j = 0; j < st->tasks; j++)
		if (st->home[j].socket == s)
			st->who[m++] = j;
	sort_by_numa(st, m);
	give(st, pick_cores(st, s, INT_MIN, 0), m);
}

int split_cores(const struct placement_topo *topo, const cpu_set_t *allowed,
		const struct split_home *home, int tasks, cpu_set_t *cpus, int *shared)
{
	struct state st = { .home = home, .tasks = tasks, .cpus = cpus };
	int rc = -1;
	for (int j = 0; j < tasks; j++)
		CPU_ZERO(&cpus[j]);
	if (collect(topo, allowed, &st) != 0)
		goto out;
	for (int s = 0; s < topo->socket_count; s++)
		split_socket(topo, &st, s);
	int m = 0;   /* tasks with no package: the machine's cores left */
	for (int j = 0; j < tasks; j++)
		if (home[j].socket < 0)
			st.who[m++] = j;
	int n = pick_cores(&st, -1, INT_MIN, 1);
	give(&st, n >= m ? n : pick_cores(&st, -1, INT_MIN, 0), m);
	*shared = st.shared;
	rc = 0;
out:
	free(st.cores);
	free(st.pick);
	free(st.who);
	return rc;
}
