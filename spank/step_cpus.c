/* step_cpus.c - the step's CPUs from Slurm's cpuset cgroup, or from its
 * allocated core ids (step_cpus.h). task/affinity binds each task to cores
 * of its own before the plugin's task_init runs; the step's cpuset
 * (task/cgroup with ConstrainCores) says which CPUs the whole step may
 * use, and the kernel lets a task set any affinity inside it. Only a
 * cgroup whose path Slurm made counts: outside Slurm's cgroups the cpuset
 * is the machine's, not the job's. Without one (task/affinity alone) the
 * kernel lets a task take any CPU: the step's cores Slurm allocated are
 * then the bound to respect.
 * What it does not do: decide the binding (placement.c) or apply it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_cpus.h"

int step_cpus_parse(const char *list, cpu_set_t *out)
{
	const char *p = list;
	CPU_ZERO(out);
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0 || a >= CPU_SETSIZE)
			return -1;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b >= CPU_SETSIZE)
				return -1;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, out);
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return CPU_COUNT(out) > 0 ? 0 : -1;
}

int step_cpus_from_cores(const char *ids, const struct placement_topo *topo, cpu_set_t *out,
			 char *err, size_t errlen)
{
	cpu_set_t want;
	int total = 0;
	CPU_ZERO(out);
	for (int s = 0; s < topo->socket_count; s++)
		total += topo->sockets[s].core_count;
	if (step_cpus_parse(ids, &want) != 0 || total == 0) {
		snprintf(err, errlen, "hvd: S_STEP_ALLOC_CORES: '%.200s': %s", ids,
			 total ? "not a core list" : "the topology has no cores");
		return -1;
	}
	for (int id = 0; id < CPU_SETSIZE; id++) {
		if (!CPU_ISSET(id, &want))
			continue;
		int n = id % total;
		for (int s = 0; s < topo->socket_count; n -= topo->sockets[s].core_count, s++)
			if (n < topo->sockets[s].core_count) {
				CPU_OR(out, out, &topo->sockets[s].cores[n]);
				break;
			}
	}
	return 0;
}

/* The cpuset file of this task's cgroup, "" when it is not Slurm's. */
static int cpuset_file(const char *root, char *path, size_t len, char *err, size_t errlen)
{
	char name[PATH_MAX], line[PATH_MAX + 64];
	snprintf(name, sizeof(name), "%s/proc/self/cgroup", root);
	FILE *f = fopen(name, "r");
	if (!f) {
		snprintf(err, errlen, "hvd: '%s': %s", name, strerror(errno));
		return -1;
	}
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *controllers = strchr(line, ':'), *cg = controllers ? strchr(controllers + 1, ':') : NULL;
		if (!cg)
			continue;
		*controllers = '\0';
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		int v2 = strcmp(line, "0") == 0 && controllers[1] == '\0';
		int v1 = !v2 && strstr(controllers + 1, "cpuset") != NULL;
		if ((v1 || v2) && strstr(cg, "/job_") && strstr(cg, "/step_"))
			snprintf(path, len, v1 ? "%s/sys/fs/cgroup/cpuset%s/cpuset.cpus"
					      : "%s/sys/fs/cgroup%s/cpuset.cpus.effective", root, cg);
	}
	fclose(f);
	return 0;
}

int step_cpus_read(const char *root, cpu_set_t *out, char *err, size_t errlen)
{
	char path[PATH_MAX + 96], list[8192];
	if (cpuset_file(root, path, sizeof(path), err, errlen) != 0)
		return -1;
	if (!path[0])
		return 1;
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)   /* a v2 cgroup without the cpuset controller */
			return 1;
		snprintf(err, errlen, "hvd: '%s': %s", path, strerror(errno));
		return -1;
	}
	int ok = fgets(list, sizeof(list), f) != NULL;
	fclose(f);
	if (!ok || step_cpus_parse(list, out) != 0) {
		snprintf(err, errlen, "hvd: '%s': not a CPU list", path);
		return -1;
	}
	return 0;
}
