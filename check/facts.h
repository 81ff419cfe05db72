/* facts.h - what a task of hvd-check sees of the hvd plugin and Slurm. */
#ifndef HVD_CHECK_FACTS_H
#define HVD_CHECK_FACTS_H

#include "record.h"

/* Fills gpu, plugin and slurm from the plugin's exports and records the
 * first failure: the plugin not active in this task, a plugin of another
 * version than `runtime_version`, GPUs granted but none named. */
void check_facts(struct check_record *r, const char *runtime_version);

#endif
