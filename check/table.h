/* table.h - hvd-check's verdict: a row per task, a row per node. */
#ifndef HVD_CHECK_TABLE_H
#define HVD_CHECK_TABLE_H

#include <stdio.h>

#include "record.h"

/* The first failing record of node `node`, NULL when the node passed. */
const struct check_record *check_node_failure(const struct check_record *all, int size, int node);
/* Prints both tables and the last line; returns the failing node count. */
int check_table_print(FILE *f, const struct check_record *all, int size, int nodes,
		      const char *backend, const char *version);

#endif
