/* bind.c - see bind.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind.h"

#define MPOL_PREFERRED_ 1

static int node_exists(int node)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
	return node >= 0 && node < 1024 && stat(path, &st) == 0;
}

/* Memory prefers the task's NUMA node (its GPU's; placement never names a
 * CPU-less node such as another GPU's memory); when it is full the kernel
 * falls back to the nearest nodes by distance. */
static int set_memory_policy(const struct placement_result *res, char *err, size_t len)
{
	unsigned long mask[16] = { 0 };
	int node = res->numa_node;
	if (!node_exists(node))
		return 0;
	mask[node / 64] |= 1UL << (node % 64);
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED_, mask, 1024UL) != 0) {
		snprintf(err, len, "hvd: set_mempolicy: 'NUMA %d': %s", node, strerror(errno));
		return -1;
	}
	return 0;
}

int bind_apply(enum hvd_bind bind, const struct placement_result *res, char *err, size_t len)
{
	char cpus[4096];
	if (bind == HVD_BIND_NONE)
		return 0;
	if (sched_setaffinity(0, sizeof(res->cpus), &res->cpus) != 0) {
		placement_format_cpus(&res->cpus, cpus, sizeof(cpus));
		snprintf(err, len, "hvd: sched_setaffinity: '%s': %s", cpus, strerror(errno));
		return -1;
	}
	return set_memory_policy(res, err, len);
}

int bind_visible_list(const char labels[][64], const struct placement_result *res, char *out,
		      size_t len)
{
	size_t used = 0;
	if (len)
		out[0] = '\0';
	for (int i = 0; i < res->order_count; i++) {
		int w = snprintf(out + used, len - used, "%s%s", i ? "," : "", labels[res->order[i]]);
		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}
