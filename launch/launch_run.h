/* launch_run.h - hvdrun -n N's ranks as processes (launch_run.c): each
 * one forked, placed (spank/bind.c: CPU affinity, memory policy) and
 * given the environment bootstrap of a launch without a scheduler
 * (HVD_RANK, HVD_SIZE, HVD_COORDINATOR on loopback, HVD_SECRET_FILE: a
 * fresh 0600 file made here and removed at the end) and the plugin's
 * variables (CUDA_VISIBLE_DEVICES own GPU first, CUDA_DEVICE_ORDER,
 * HVD_GPU_BUSID, HVD_CPUS, HVD_NUMA, HVD_SOCKET, HVD_BIND,
 * HVD_PLUGIN_VERSION: the placement code's version); a scheduler's
 * variables (PMIx's, Slurm's step, a Kubernetes index) are removed. Every
 * line a rank writes comes out prefixed "[rank R] " on the same stream.
 * Ending, as contrib/hvdrun over ssh: a rank that exits non-zero or is
 * killed is named and the others get SIGTERM and SIGCONT (a stopped rank
 * ends too; chexnet checkpoints and exits 75), then SIGKILL after the
 * grace; SIGINT or SIGTERM to hvdrun does the same to every rank, a
 * second one kills them at once. Exit status: 128 + the signal hvdrun
 * received, whichever rank ended first; else the first failed rank's
 * (its exit status, or 128 + its signal); else 0. hvdrun itself killed
 * (SIGKILL) takes its ranks with it (PR_SET_PDEATHSIG); its secret file
 * then stays in TMPDIR.
 * What it does not do: decide placement (launch_plan.c) or restart a rank.
 */
#ifndef HVD_LAUNCH_RUN_H
#define HVD_LAUNCH_RUN_H

#include "launch_plan.h"

struct launch_options {
	int port;          /* rank 0's loopback port; 0: a free one */
	double grace_s;    /* SIGTERM to SIGKILL */
	char *const *cmd;  /* argv of every rank, NULL-terminated */
};

/* Runs the ranks to their end; returns hvdrun's exit status. */
int launch_run(const struct launch_plan *plan, const struct launch_options *o);

#endif
