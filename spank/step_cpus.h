/* step_cpus.h - the CPUs Slurm gives the step on this node (step_cpus.c):
 * task/cgroup's cpuset, else (task/affinity alone) the step's allocated
 * cores (S_STEP_ALLOC_CORES) mapped onto the topology, so that --hvd binds
 * within the step and not within the one core task/affinity already bound
 * the task to. */
#ifndef HVD_SPANK_STEP_CPUS_H
#define HVD_SPANK_STEP_CPUS_H

#include <sched.h>
#include <stddef.h>

#include "placement.h"

/* Reads ROOT/proc/self/cgroup and, when this task's cpuset cgroup is
 * Slurm's (a path with "/job_" and "/step_"), its CPU list under
 * ROOT/sys/fs/cgroup (v1: cpuset/PATH/cpuset.cpus; v2:
 * PATH/cpuset.cpus.effective). ROOT is "" but in tests. Returns 0 with
 * *out set, 1 when the task is in no such cgroup (task/cgroup does not
 * constrain cores here), -1 with err when a file is unreadable or
 * malformed. */
int step_cpus_read(const char *root, cpu_set_t *out, char *err, size_t errlen);

/* Slurm's core ids of the step on this node ("0-3,8", S_STEP_ALLOC_CORES)
 * to CPUs: Slurm numbers cores socket by socket in hwloc's logical order,
 * so core id N is the topology's N-th core (packages in logical order,
 * cores in logical order within each) and its PUs. An id beyond the
 * topology's cores (slurm.conf describing more cores than the machine
 * has, as in the test cluster) wraps around, as Slurm's task/affinity
 * folds such masks. 0, or -1 with err when the list is malformed or the
 * topology has no cores. */
int step_cpus_from_cores(const char *ids, const struct placement_topo *topo, cpu_set_t *out,
			 char *err, size_t errlen);

/* Parses a kernel CPU list ("0-3,8,10-11\n"); 0, or -1 when malformed or
 * empty. */
int step_cpus_parse(const char *list, cpu_set_t *out);

#endif
