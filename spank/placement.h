/* placement.h - the pure decision of the hvd plugin: given a node's
 * topology (packages, cores, NUMA nodes, NVIDIA GPUs by PCI locality), the
 * GPUs Slurm granted the step, the task's allowed CPUs and its local id,
 * which GPU the task owns, in which order it sees the granted GPUs, which
 * socket, NUMA node and CPUs it is bound to (nearest its GPU first, whole
 * cores never shared between tasks) and which NUMA node its memory
 * prefers (its GPU's; never a CPU-less node such as GPU memory).
 *
 * Never includes spank.h or hwloc.h: topology.c fills struct placement_topo
 * (from hwloc, or tests from XML files), task.c applies the result. CPU sets
 * are glibc cpu_set_t (CPU_SETSIZE = 1024 CPUs).
 */
#ifndef HVD_SPANK_PLACEMENT_H
#define HVD_SPANK_PLACEMENT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>

#include "options.h"

#define PLACEMENT_MAX_GPUS 64
#define PLACEMENT_MAX_NUMA 16
#define PLACEMENT_BUSID_LEN 16   /* "0000:3b:00.0" + NUL */
#define PLACEMENT_NOTE_LEN 512

struct placement_socket {
	cpu_set_t cpus;
	int core_count;
	cpu_set_t *cores;               /* (core_count) the PUs of each core */
	int numa_count;
	int numa[PLACEMENT_MAX_NUMA];   /* OS indices of its NUMA nodes with CPUs */
};

/* A NUMA node with CPUs in the topology; CPU-less ones (GPU memory, nodes
 * a restricted capture left out) are never listed. */
struct placement_numa {
	int os_index;
	int socket;          /* index into sockets, -1 none */
	cpu_set_t cpus;
};

struct placement_gpu {
	char busid[PLACEMENT_BUSID_LEN];
	int socket;          /* index into sockets; -1: no single package near it */
	int numa;            /* index into numas; -1: no single NUMA node near it */
	cpu_set_t near_cpus; /* CPUs of its nearest non-I/O ancestor */
};

struct placement_topo {
	int socket_count;
	struct placement_socket *sockets;  /* packages, logical order */
	int numa_count;
	struct placement_numa *numas;      /* NUMA nodes with CPUs, logical order */
	int gpu_count;
	struct placement_gpu *gpus;        /* NVIDIA GPUs, PCI bus order */
	cpu_set_t machine_cpus;
};

struct placement_request {
	const struct placement_topo *topo;
	int granted_count;          /* GPUs granted to the step on this node */
	const int *granted_gpu;     /* per granted GPU: index into topo->gpus, -1 unknown */
	int local_id, local_count;  /* this task, tasks of the step on this node */
	cpu_set_t allowed;          /* the task's affinity mask now */
	enum hvd_gpu_mode gpu_mode;
	enum hvd_bind bind;
	int oversubscribe_warn;
	const char *host;           /* for messages */
};

struct placement_result {
	int granted_index;               /* the task's GPU in the granted list; -1 CPU-only */
	int order_count;
	int order[PLACEMENT_MAX_GPUS];   /* what the task sees, as granted indices */
	int socket;                      /* index into topo sockets; -1 none */
	int numa_node;                   /* OS index of the task's NUMA node (its GPU's); -1 */
	int local_cpus;                  /* CPUs of cpus on the GPU's NUMA node (else near it) */
	cpu_set_t cpus;                  /* where to bind (the allowed mask under none) */
	int numa_count;                  /* NUMA nodes (OS indices) cpus touch, numa_node first */
	int numa[PLACEMENT_MAX_NUMA];
	char note[PLACEMENT_NOTE_LEN];   /* say once per node when non-empty */
};

/* 0 on success; -1 with a one-line message (oversubscription under
 * oversubscribe=error, bad input). */
int placement_compute(const struct placement_request *req, struct placement_result *res,
		      char *err, size_t err_len);

/* The order GPUs are handed out: socket by socket, PCI bus order within a
 * socket, unknown GPUs last as granted. out gets granted indices. */
void placement_gpu_order(const struct placement_request *req, int *out);

/* "0-3,8,10-11"; "" for an empty set. Returns -1 if it did not fit. */
int placement_format_cpus(const cpu_set_t *set, char *buf, size_t len);

/* Parses a comma-separated list of non-negative decimal ids ("0,1,2,3").
 * Returns the count, or -1 when any entry is not a plain number or there
 * are more than max. */
int placement_parse_ids(const char *list, int *ids, int max);

/* Splits a comma-separated list into at most max entries of up to 63
 * characters (CUDA_VISIBLE_DEVICES may hold UUIDs). Returns the count or -1. */
int placement_split_list(const char *list, char entries[][64], int max);

/* The GPUs granted on this node as the task's environment names them:
 * labels[] from CUDA_VISIBLE_DEVICES (indices or UUIDs, what the task sees);
 * ids[] (Slurm's device minors) from SLURM_STEP_GPUS when it pairs up entry
 * by entry -- under ConstrainDevices the visible indices are cgroup-local
 * (0,1 while SLURM_STEP_GPUS says 2,3) -- else from the labels themselves,
 * -1 for a label that is not a number. Returns the count (at most
 * PLACEMENT_MAX_GPUS), or -1 with a one-line message. */
int placement_granted(const char *visible, const char *step_gpus,
		      char labels[PLACEMENT_MAX_GPUS][64], int ids[PLACEMENT_MAX_GPUS],
		      char *err, size_t err_len);

/* 1 when Slurm already bound GPUs per task (--gpus-per-task, --gpu-bind):
 * the task's CUDA_VISIBLE_DEVICES is non-empty, differs from the step's and
 * names only GPUs of the step's. Then the task chooses within its own list. */
int placement_slurm_bound(const char *step_visible, const char *task_visible);

#endif
