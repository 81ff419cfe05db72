/* launch_plan.h - where hvdrun -n N puts each rank on this machine
 * (launch_plan.c): the plugin's own decision (spank/placement.c on the
 * topology spank/topology.c loads), asked as srun --hvd would ask it for
 * N tasks on one node that were granted the machine's GPUs, or the ones
 * the user's CUDA_VISIBLE_DEVICES names (indices in PCI bus order, which
 * the ranks then see: CUDA_DEVICE_ORDER=PCI_BUS_ID). One rank per GPU:
 * more ranks than GPUs are refused; a machine without GPUs gets one rank
 * per socket in turn, as the plugin does.
 * What it does not do: start or bind anything (launch_run.c, spank/bind.c).
 */
#ifndef HVD_LAUNCH_PLAN_H
#define HVD_LAUNCH_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "bind.h"
#include "options.h"
#include "placement.h"
#include "topology.h"

#define LAUNCH_CPULIST_LEN 4096

struct launch_rank {
	struct placement_result res;
	char visible[PLACEMENT_MAX_GPUS * 65];  /* CUDA_VISIBLE_DEVICES, own GPU first; "" none */
	char busid[PLACEMENT_BUSID_LEN];        /* its GPU's, "" when none or unknown */
	char gpu_label[64];                     /* its GPU as CUDA_VISIBLE_DEVICES names it */
	char cpus[LAUNCH_CPULIST_LEN];          /* the CPUs it runs on */
};

struct launch_plan {
	int count;                   /* ranks */
	int gpus;                    /* GPUs granted (0: a CPU-only machine) */
	enum hvd_gpu_mode gpu;
	enum hvd_bind bind;
	struct launch_rank *ranks;   /* count */
	char notes[8][PLACEMENT_NOTE_LEN];
	int note_count;
	char host[256];
	struct placement_topo topo;
};

/* topology_xml NULL: this machine. visible: the user's CUDA_VISIBLE_DEVICES
 * (NULL when unset). allowed: the CPUs hvdrun may use (its own mask; NULL:
 * every CPU of the topology, for another machine's). 0, or -1 with a
 * one-line message in err. */
int launch_plan_make(int count, const char *topology_xml, const char *visible,
		     enum hvd_gpu_mode gpu, enum hvd_bind bind, const cpu_set_t *allowed,
		     struct launch_plan *plan, char *err, size_t len);
void launch_plan_free(struct launch_plan *plan);

/* One line per rank: "rank R: GPU LABEL (BUSID), NUMA N, socket S, CPUs
 * LIST, bind MODE, gpu MODE, CUDA_VISIBLE_DEVICES=LIST" ("GPU none" on a
 * CPU-only machine). */
void launch_plan_print(const struct launch_plan *plan, FILE *f);

#endif
