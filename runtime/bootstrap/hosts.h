/* bootstrap/hosts.h - one rank's row of the host table that every rank
 * exchanges through the bootstrap at start-up (host, GPU, CPUs, the
 * control plane's address on rank 0).
 * What this is not: the exchange (api.c) or the report (observe/report.h).
 */
#ifndef HVD_HOSTS_H
#define HVD_HOSTS_H

#include <stdint.h>

#include "core/settings.h"

/* One rank's row of the host table, exchanged through the bootstrap. */
struct host_entry {
	char host[64];
	char gpu_busid[32];
	char cpus[SETTINGS_CPULIST_MAX];
	char numa[16];        /* HVD_NUMA, and that node's CPUs (sysfs; "" unknown) */
	char numa_cpus[SETTINGS_CPULIST_MAX];
	char socket[16];
	char bind[16];
	int32_t local_rank;
	int32_t node_id;      /* PMIx node id */
	char affinity[SETTINGS_CPULIST_MAX]; /* CPUs the task may run on now (sched_getaffinity) */
	int32_t gpus_visible; /* entries in CUDA_VISIBLE_DEVICES, 0 when unset */
	int32_t has_ib;       /* /sys/class/infiniband has devices */
	int32_t ib_disabled;  /* NCCL_IB_DISABLE=1 */
	char ctl_addrs[160];  /* rank 0: "ip,ip,..." the control plane listens on */
	uint16_t ctl_port;    /* rank 0: control plane port */
	uint8_t ctl_key[32];  /* rank 0: the job secret (zero with HVD_SECRET_FILE);
			       * PMIx carries it, control_connect wipes every copy */
};

#endif
