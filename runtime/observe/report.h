/* observe/report.h - rank 0's start-up report: the host table, the rule
 * warnings (two ranks on one GPU, CPUs far from the GPU, ...), and ranks
 * named by host in failure messages. Pure: strings from the host table.
 * What this is not: the exchange of the table (api.c).
 */
#ifndef HVD_REPORT_H
#define HVD_REPORT_H

#include <stddef.h>

#include "bootstrap/hosts.h"

/* Start-up report (rank 0): the host table and rule warnings. Pure. */
void report_format(const struct host_entry *hosts, int size, const char *backend,
		   char *out, size_t len);
/* "ranks 2,3 (host n2), rank 5 (host n3)": ranks (ascending) by host. */
void report_name_ranks(const struct host_entry *hosts, int size, const int *ranks, int n,
		       char *out, size_t len);
/* One line per broken rule; returns the count. */
int report_warnings(const struct host_entry *hosts, int size, const char *backend,
		    char *out, size_t len);

#endif
