/* bind.h - applying a placement to the calling process (bind.c): the CPU
 * affinity and the memory policy of placement_compute's result, and the
 * CUDA_VISIBLE_DEVICES list it orders. Shared by the plugin (task.c, in
 * each task before exec) and hvdrun -n (launch/, in each rank's child
 * before exec), so both apply the same decision the same way.
 * What it does not do: decide (placement.c) or touch the environment.
 */
#ifndef HVD_SPANK_BIND_H
#define HVD_SPANK_BIND_H

#include <stddef.h>

#include "options.h"
#include "placement.h"

/* Under every bind mode but none: the affinity res->cpus, then memory
 * preferring res->numa_node when this machine has that node (a topology
 * file of another machine, or no NUMA in sysfs: memory untouched). 0, or
 * -1 with "hvd: sched_setaffinity: 'CPUS': why" (or set_mempolicy's). */
int bind_apply(enum hvd_bind bind, const struct placement_result *res, char *err, size_t len);

/* The granted GPUs' labels in the order res gives ("2,0,1,3") into out:
 * 0, or -1 when it does not fit. */
int bind_visible_list(const char labels[][64], const struct placement_result *res, char *out,
		      size_t len);

#endif
