/* record.h - what one task of hvd-check found, as a fixed-size record that
 * travels between ranks as HVD_I32 elements (hvd_allgatherv).
 * What it is not: the checks (facts.c, locality.c, collective.c) or the
 * table (table.c).
 */
#ifndef HVD_CHECK_RECORD_H
#define HVD_CHECK_RECORD_H

#include <stdint.h>

struct check_record {
	int32_t rank, node_id, local_rank, local_size;
	int32_t failed;          /* 0: every check passed */
	char host[64];
	char gpu[16];            /* HVD_GPU_BUSID, "-" without one */
	char socket[8];          /* the socket hwloc places the task on */
	char cpus[64];           /* the task's affinity as a CPU list */
	char numa[32];           /* its GPU's NUMA node */
	char plugin[32];         /* HVD_PLUGIN_VERSION, "-" without the plugin */
	char slurm[32];          /* HVD_SLURM_VERSION, "-" without the plugin */
	char why[192];           /* the first failure, "" when none */
};

#define CHECK_RECORD_INTS ((int)(sizeof(struct check_record) / sizeof(int32_t)))
_Static_assert(sizeof(struct check_record) % sizeof(int32_t) == 0, "whole int32s");

/* Records the first failure only; later ones add nothing. */
void check_record_fail(struct check_record *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
