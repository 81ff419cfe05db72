/* task.h - what the hvd plugin does inside slurmstepd: remember the GPUs
 * granted to the step (user_init), then in each task just before exec
 * (task_init, running as the user) choose its GPU and CPUs and apply them.
 * What it does not do: parse options (options.c) or decide (placement.c).
 */
#ifndef HVD_SPANK_TASK_H
#define HVD_SPANK_TASK_H

#include <stdint.h>
#include <slurm/slurm.h>   /* SLURM_BATCH_SCRIPT and the other special step ids */
#include <slurm/spank.h>

#include "options.h"
#include "placement.h"

/* The step's GPUs on this node as slurmstepd sees them before any
 * per-task binding by Slurm (--gpus-per-task, --gpu-bind=single:1). */
#define TASK_LIST_LEN (PLACEMENT_MAX_GPUS * 64 + 1)   /* 64 UUIDs and commas */

struct task_step_gpus {
	int captured;                    /* 0: not seen, or a list was too long */
	char visible[TASK_LIST_LEN];     /* CUDA_VISIBLE_DEVICES */
	char step_gpus[TASK_LIST_LEN];   /* SLURM_STEP_GPUS */
};

/* 1 for the batch script, extern and interactive steps: never touched. */
int task_step_is_special(spank_t sp);

void task_capture_step(spank_t sp, struct task_step_gpus *step);

/* 0 when done or nothing to do; -1 fails the task (the message is printed
 * on the task's stderr by local task 0). */
int task_apply(spank_t sp, const struct hvd_site *site, const struct hvd_request *req,
	       const struct task_step_gpus *step);

#endif
