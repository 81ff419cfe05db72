/* split.h - the node's allowed cores shared out among its local tasks by
 * locality (split.c): each task gets whole cores of its GPU's NUMA node
 * when that node has a core for every task homed on it, else cores of its
 * GPU's package, else (no package near its GPU) of the machine; no core
 * goes to two tasks unless a package has fewer cores than tasks.
 * What it does not do: choose GPUs or homes (placement.c), bind anything.
 */
#ifndef HVD_SPANK_SPLIT_H
#define HVD_SPANK_SPLIT_H

#include "placement.h"

/* Where a task belongs: indices into topo->sockets and topo->numas, -1
 * none (a NUMA node always lies in the socket given, when both are set). */
struct split_home {
	int socket, numa;
};

/* cpus[j] for every task j < tasks (empty when no allowed core was left
 * for it). *shared: some tasks share cores. 0, or -1 out of memory. */
int split_cores(const struct placement_topo *topo, const cpu_set_t *allowed,
		const struct split_home *home, int tasks, cpu_set_t *cpus, int *shared);

#endif
