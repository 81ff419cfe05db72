/* main.c - hvd-check, the acceptance check for admins: started on every
 * node of a real cluster in one command,
 *
 *     srun --hvd -N 4 --ntasks-per-node=4 --gres=gpu:4 hvd-check
 *
 * each task checks its placement by the hvd plugin against hwloc
 * (facts.c, locality.c), bootstraps libhvd through PMIx (hvd_init), runs an
 * allreduce with a known sum on the backend libhvd chose (collective.c)
 * and sends its record to every rank; rank 0 prints a row per task and a
 * PASS/FAIL row per node (table.c). Exit status: 0 when every node
 * passed, 1 when any failed or the runtime did (its message on stderr),
 * 2 for a bad command line.
 * What it does not do: place or bind anything, or train.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "facts.h"
#include "gl_listener.h"
#include "hvd.h"
#include "locality.h"
#include "record.h"
#include "table.h"

static const char usage[] =
	"usage: srun --hvd -N NODES --ntasks-per-node=GPUS [--gres=gpu:GPUS] hvd-check\n"
	"Checks every task's GPU, CPUs and socket against hwloc, the PMIx bootstrap, an\n"
	"allreduce on the chosen backend and the versions of hvd.so, Slurm and libhvd;\n"
	"rank 0 prints PASS/FAIL per node. Exit 0: every node passed; 1: one failed.\n"
	"HWLOC_XMLFILE=FILE: the topology the plugin's topology= names, if the site sets one.\n";

static int fail_runtime(const char *what, const char *err)
{
	fprintf(stderr, "hvd-check: %s: '%s': %s\n", what, hvd_hostname(), err);
	return 1;
}

static void fill_identity(struct check_record *r)
{
	memset(r, 0, sizeof(*r));
	r->rank = hvd_rank();
	r->node_id = hvd_node_id();
	r->local_rank = hvd_local_rank();
	r->local_size = hvd_local_size();
	snprintf(r->host, sizeof(r->host), "%s", hvd_hostname());
}

static int failed_nodes(const struct check_record *all, int size, int nodes)
{
	int failed = 0;
	for (int n = 0; n < nodes; n++)
		failed += check_node_failure(all, size, n) != NULL;
	return failed;
}

/* One line per node (its first task) when a listener on an X display's
 * port would hang hwloc's discovery elsewhere on it: not a FAIL of
 * hvd's placement, which never probes GL. */
static void warn_gl_listener(void)
{
	int port = hvd_local_rank() == 0 ? check_gl_listener() : 0;
	if (port)
		fprintf(stderr, "hvd-check: hwloc GL: '%s:%d': a TCP listener on X display :%d's port "
			"and hwloc's GL component installed: hwloc discovery without "
			"HWLOC_COMPONENTS=-gl hangs here (Slurm's PMIx server: set it for slurmd, "
			"hvd(8))\n", hvd_hostname(), port, port - 6000);
}

static int run(void)
{
	struct check_record mine;
	char err[512] = "";
	warn_gl_listener();
	fill_identity(&mine);
	check_facts(&mine, hvd_version());
	check_locality(&mine);
	if (check_allreduce(&mine, err, sizeof(err)) != 0)
		return fail_runtime("allreduce", err);
	struct check_record *all = calloc((size_t)hvd_size(), sizeof(*all));
	if (!all)
		return fail_runtime("memory", "out of memory");
	if (check_gather(&mine, all, err, sizeof(err)) != 0) {
		free(all);
		return fail_runtime("gather", err);
	}
	int failed = hvd_rank() == 0
		? check_table_print(stdout, all, hvd_size(), hvd_node_count(), hvd_backend_name(),
				    hvd_version())
		: failed_nodes(all, hvd_size(), hvd_node_count());
	fflush(stdout);
	free(all);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "hvd-check: argument: '%s': hvd-check takes none (--help)\n", argv[1]);
		return 2;
	}
	if (hvd_init() != HVD_OK) {
		fprintf(stderr, "hvd-check: PMIx bootstrap: 'hvd_init': %s\n", hvd_error());
		return 1;
	}
	int rc = run();
	int down = hvd_shutdown();
	if (down != HVD_OK && rc == 0)
		rc = fail_runtime("shutdown", hvd_error());
	return rc;
}
