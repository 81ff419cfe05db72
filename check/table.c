/* table.c - the tables rank 0 prints (table.h):
 *
 *   hvd-check: 4 tasks on 2 nodes, backend mpi, libhvd 0.1.0
 *   rank  node  local  GPU           socket  CPUs  NUMA  result
 *   0     n1    0/2    0000:3b:00.0  0       0     0     ok
 *   node  tasks  hvd.so  slurm     result
 *   n1    2      0.1.0   22.05.8   PASS
 *   n2    2      -       -         FAIL: rank 2: hvd plugin: 'HVD_BIND': unset: ...
 *   hvd-check: FAIL: 1 of 2 nodes
 *
 * What it does not do: decide a task's verdict (facts.c, locality.c,
 * collective.c) or the exit status (main.c).
 */
#include <stddef.h>
#include <string.h>

#include "table.h"

const struct check_record *check_node_failure(const struct check_record *all, int size, int node)
{
	for (int i = 0; i < size; i++)
		if (all[i].node_id == node && all[i].failed)
			return &all[i];
	return NULL;
}

static void print_tasks(FILE *f, const struct check_record *all, int size)
{
	fprintf(f, "%-5s %-12s %-6s %-13s %-7s %-12s %-5s %s\n", "rank", "node", "local", "GPU",
		"socket", "CPUs", "NUMA", "result");
	for (int i = 0; i < size; i++) {
		const struct check_record *r = &all[i];
		char local[24];
		snprintf(local, sizeof(local), "%d/%d", r->local_rank, r->local_size);
		fprintf(f, "%-5d %-12s %-6s %-13s %-7s %-12s %-5s %s%s\n", r->rank, r->host, local,
			r->gpu, r->socket, r->cpus, r->numa, r->failed ? "FAIL: " : "ok", r->why);
	}
}

/* Node `node`'s value of a field: the one every task shows, else "mixed". */
static const char *node_value(const struct check_record *all, int size, int node, size_t offset)
{
	const char *seen = NULL;
	for (int i = 0; i < size; i++) {
		const char *v = (const char *)&all[i] + offset;
		if (all[i].node_id != node)
			continue;
		if (seen && strcmp(seen, v) != 0)
			return "mixed";
		seen = v;
	}
	return seen ? seen : "-";
}

static int print_node(FILE *f, const struct check_record *all, int size, int node)
{
	int tasks = 0;
	const char *host = "?";
	for (int i = 0; i < size; i++)
		if (all[i].node_id == node && !tasks++)
			host = all[i].host;
	const struct check_record *bad = check_node_failure(all, size, node);
	fprintf(f, "%-12s %-6d %-8s %-10s ", host, tasks,
		node_value(all, size, node, offsetof(struct check_record, plugin)),
		node_value(all, size, node, offsetof(struct check_record, slurm)));
	if (bad)
		fprintf(f, "FAIL: rank %d: %s\n", bad->rank, bad->why);
	else
		fprintf(f, "%s\n", tasks ? "PASS" : "FAIL: no task reported");
	return bad || !tasks;
}

int check_table_print(FILE *f, const struct check_record *all, int size, int nodes,
		      const char *backend, const char *version)
{
	int failed = 0;
	fprintf(f, "hvd-check: %d tasks on %d nodes, backend %s, libhvd %s\n", size, nodes, backend,
		version);
	print_tasks(f, all, size);
	fprintf(f, "%-12s %-6s %-8s %-10s %s\n", "node", "tasks", "hvd.so", "slurm", "result");
	for (int n = 0; n < nodes; n++)
		failed += print_node(f, all, size, n);
	if (failed)
		fprintf(f, "hvd-check: FAIL: %d of %d nodes\n", failed, nodes);
	else
		fprintf(f, "hvd-check: PASS: %d of %d nodes\n", nodes, nodes);
	return failed;
}
