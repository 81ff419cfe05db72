/* test_multinode_harness.c - the multi-node cluster itself
 * (tests/slurm/multinode.sh): three nodes with their own hostnames and
 * addresses, a private /dev/shm each, PMIx across nodes, jobs as nobody.
 * What it does not do: test the runtime across nodes (issue 8's tests).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static void test_three_nodes_have_own_hostnames(void)
{
	struct test_proc p;
	CHECK(test_run("srun -N3 -l hostname | sort", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0: n1\n1: n2\n2: n3\n");
	test_proc_free(&p);
}

static void test_nodes_have_own_network(void)
{
	struct test_proc p;
	CHECK(test_run("srun -N3 -l sh -c 'ip -br link | cut -d\" \" -f1 | cut -d@ -f1 | sort | tr \"\\n\" \" \"; echo' | sort",
		       60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0: docker0 hvdeth0 hvdock0 hvdock1 lo \n1: docker0 hvdeth0 hvdock0 hvdock1 lo \n"
		  "2: docker0 hvdeth0 hvdock0 hvdock1 lo \n");
	test_proc_free(&p);
}

static void test_pmix_spans_nodes(void)
{
	struct test_proc p;
	CHECK(test_run("srun -N2 -w n1,n2 --ntasks-per-node=2 -l sh -c 'echo $PMIX_RANK@$(hostname) $SLURM_LOCALID $SLURM_NODEID' | sort",
		       60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0: 0@n1 0 0\n1: 1@n1 1 0\n2: 2@n2 0 1\n3: 3@n2 1 1\n");
	test_proc_free(&p);
}

static void test_dev_shm_is_per_node(void)
{
	struct test_proc p;
	CHECK(test_run("srun -N2 -w n1,n2 -l sh -c 'touch /dev/shm/hvd-probe-$(hostname); ls /dev/shm | grep hvd-probe' | sort",
		       60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0: hvd-probe-n1\n1: hvd-probe-n2\n");
	test_proc_free(&p);
	CHECK(test_run("ls /dev/shm | grep -c hvd-probe", 10, &p) == 0);
	CHECK_STR(p.out, "0\n");
	test_proc_free(&p);
}

static void test_jobs_run_as_nobody(void)
{
	struct test_proc p;
	CHECK(test_run("runuser -u nobody -- env SLURM_CONF=\"$SLURM_CONF\" srun -N2 -l id -un | sort",
		       60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0: nobody\n1: nobody\n");
	test_proc_free(&p);
}

const struct test_case multinode_harness_tests[] = {
	{ "three_nodes_have_own_hostnames", test_three_nodes_have_own_hostnames },
	{ "nodes_have_own_network", test_nodes_have_own_network },
	{ "pmix_spans_nodes", test_pmix_spans_nodes },
	{ "dev_shm_is_per_node", test_dev_shm_is_per_node },
	{ "jobs_run_as_nobody", test_jobs_run_as_nobody },
	{ 0 }
};
