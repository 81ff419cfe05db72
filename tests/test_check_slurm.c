/* test_check_slurm.c - hvd-check (check/main.c), the admins' acceptance
 * check, under real Slurm: on the one-node cluster (group slurm-check)
 * and across the 3 nodes of the multi-node cluster (group
 * slurm-multinode-check). The plugin reads tests/topo/two-cpu-4gpu.xml
 * (topology=) and hvd-check the same file through HWLOC_XMLFILE, as a
 * site with topology= would run it. Each run must print a row per task
 * and a PASS row per node with the plugin's, Slurm's and libhvd's versions
 * and exit 0; without --hvd every node must FAIL, naming the cause, and
 * the exit status must not be 0; a node whose tasks left their socket
 * must FAIL alone.
 * What it does not do: the cgroup task plugins (test_cgroup_slurm.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define TOPO "tests/topo/two-cpu-4gpu.xml"
/* OpenMPI's transport settings of the caller's environment do not apply. */
#define NO_MCA "for v in $(env | grep -oE '^OMPI_MCA_[a-z_]*(btl|oob|pml|if_)[a-z_]*'); do unset $v; done; "

static int site_topology(void)
{
	char args[4200];
	snprintf(args, sizeof(args), "topology=%s/" TOPO, test_src_dir());
	return test_cluster_plugstack(args);
}

/* `srun SRUN_ARGS [WRAP] hvd-check` in the case's directory. */
static void hvd_check_wrapped(const char *srun_args, const char *wrap, struct test_proc *p)
{
	char cmd[4600];
	snprintf(cmd, sizeof(cmd), "cd '%s' && " NO_MCA "HWLOC_XMLFILE='%s/" TOPO "' srun %s %s '%s/hvd-check'",
		 test_tmpdir(), test_src_dir(), srun_args, wrap, test_build_dir());
	CHECK(test_run(cmd, 90, p) == 0);
	CHECK_MSG(!p->timed_out, "timed out: srun %s", srun_args);
}

static void hvd_check(const char *srun_args, struct test_proc *p)
{
	hvd_check_wrapped(srun_args, "", p);
}

/* The VERSION file: the plugin's and libhvd's version. */
static void our_version(char *out, size_t len)
{
	char *path = test_path(test_src_dir(), "VERSION");
	char *text = test_read_file(path, NULL);
	snprintf(out, len, "%s", text ? text : "?");
	out[strcspn(out, "\n")] = 0;
	free(text);
	free(path);
}

/* Slurm's version as `sinfo --version` prints it ("slurm-wlm 22.05.8"). */
static void slurm_version(char *out, size_t len)
{
	struct test_proc p;
	snprintf(out, len, "?");
	if (test_run("sinfo --version", 30, &p) != 0)
		return;
	const char *space = strrchr(p.out, ' ');
	snprintf(out, len, "%s", space ? space + 1 : p.out);
	out[strcspn(out, "\n")] = 0;
	test_proc_free(&p);
}

/* A task's row as table.c prints it. */
static void task_row(char *out, size_t len, int rank, const char *host, int local, int local_size,
		     const char *gpu, int socket, const char *cpus)
{
	char l[24], s[8];
	snprintf(l, sizeof(l), "%d/%d", local, local_size);
	snprintf(s, sizeof(s), "%d", socket);
	snprintf(out, len, "%-5d %-12s %-6s %-13s %-7s %-12s %-5s ok\n", rank, host, l, gpu, s, cpus, s);
}

/* A node's PASS row with this build's and this Slurm's versions. */
static void pass_row(char *out, size_t len, const char *host, int tasks)
{
	char ours[64], slurm[64];
	our_version(ours, sizeof(ours));
	slurm_version(slurm, sizeof(slurm));
	snprintf(out, len, "%-12s %-6d %-8s %-10s PASS\n", host, tasks, ours, slurm);
}

/* ------------------------------------------------------------ one node */

static void test_every_task_passes_with_hvd(void)
{
	static const char *gpus[] = { "0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0" };
	struct test_proc p;
	char want[256];
	CHECK_INT(site_topology(), 0);
	hvd_check("--hvd -n 4 --gres=gpu:4", &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, test_tail(p.err, 600));
	CHECK_CONTAINS(p.out, "hvd-check: 4 tasks on 1 nodes, backend mpi, libhvd ");
	for (int r = 0; r < 4; r++) {
		task_row(want, sizeof(want), r, test_hostname(), r, 4, gpus[r], r / 2, r < 2 ? "0" : "1");
		CHECK_CONTAINS(p.out, want);
	}
	pass_row(want, sizeof(want), test_hostname(), 4);
	CHECK_CONTAINS(p.out, want);
	CHECK_CONTAINS(p.out, "hvd-check: PASS: 1 of 1 nodes\n");
	test_proc_free(&p);
}

static void test_without_hvd_the_node_fails_naming_the_cause(void)
{
	struct test_proc p;
	char want[256];
	CHECK_INT(site_topology(), 0);
	hvd_check("-n 2 --gres=gpu:2", &p);
	CHECK(p.exit_code != 0);
	snprintf(want, sizeof(want), "%-12s %-6d %-8s %-10s FAIL: rank 0: hvd plugin: 'HVD_BIND': "
		 "unset: the plugin did not place this task: run with srun --hvd\n", test_hostname(), 2,
		 "-", "-");
	CHECK_CONTAINS(p.out, want);
	CHECK_CONTAINS(p.out, "hvd-check: FAIL: 1 of 1 nodes\n");
	test_proc_free(&p);
}

static void test_arguments_are_refused(void)
{
	struct test_proc p;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "'%s/hvd-check' --nodes 3", test_build_dir());
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "hvd-check: argument: '--nodes': hvd-check takes none (--help)\n");
	test_proc_free(&p);
}

/* ---------------------------------------------------------- multi-node */

static void test_every_node_passes(void)
{
	struct test_proc p;
	char want[256], host[8];
	CHECK_INT(site_topology(), 0);
	hvd_check("--hvd -N 3 -w 'n[1-3]' --ntasks-per-node=2 --gres=gpu:2", &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, test_tail(p.err, 600));
	CHECK_CONTAINS(p.out, "hvd-check: 6 tasks on 3 nodes, backend mpi, libhvd ");
	for (int r = 0; r < 6; r++) {
		snprintf(host, sizeof(host), "n%d", r / 2 + 1);
		task_row(want, sizeof(want), r, host, r % 2, 2, r % 2 ? "0000:5e:00.0" : "0000:3b:00.0",
			 0, "0");
		CHECK_CONTAINS(p.out, want);
	}
	for (int n = 1; n <= 3; n++) {
		snprintf(host, sizeof(host), "n%d", n);
		pass_row(want, sizeof(want), host, 2);
		CHECK_CONTAINS(p.out, want);
	}
	CHECK_CONTAINS(p.out, "hvd-check: PASS: 3 of 3 nodes\n");
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
}

static void test_without_hvd_every_node_fails(void)
{
	struct test_proc p;
	char want[256];
	CHECK_INT(site_topology(), 0);
	hvd_check("-N 3 -w 'n[1-3]' --ntasks-per-node=2 --gres=gpu:2", &p);
	CHECK(p.exit_code != 0);
	for (int n = 1; n <= 3; n++) {
		snprintf(want, sizeof(want), "n%-11d %-6d %-8s %-10s FAIL: rank %d: hvd plugin: "
			 "'HVD_BIND': unset", n, 2, "-", "-", 2 * (n - 1));
		CHECK_CONTAINS(p.out, want);
	}
	CHECK_CONTAINS(p.out, "hvd-check: FAIL: 3 of 3 nodes\n");
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
}

/* Node n2's tasks move themselves to CPU 1 (as a wrapper with taskset or
 * numactl would), off socket 0 where the plugin put them: n2 FAILs, n1
 * and n3 PASS, and the exit status is not 0. */
static void test_one_node_off_its_socket_fails_alone(void)
{
	struct test_proc p;
	char want[256];
	CHECK_INT(site_topology(), 0);
	hvd_check_wrapped("--hvd -N 3 -w 'n[1-3]' --ntasks-per-node=2 --gres=gpu:2",
			  "sh -c 'if [ \"$(hostname)\" = n2 ]; then exec taskset -c 1 \"$0\"; fi; exec \"$0\"'", &p);
	CHECK(p.exit_code != 0);
	pass_row(want, sizeof(want), "n1", 2);
	CHECK_CONTAINS(p.out, want);
	pass_row(want, sizeof(want), "n3", 2);
	CHECK_CONTAINS(p.out, want);
	CHECK_CONTAINS(p.out, "FAIL: rank 2: affinity: '1': HVD_CPUS says 0\n");
	CHECK_CONTAINS(p.out, "hvd-check: FAIL: 1 of 3 nodes\n");
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
}

const struct test_case check_slurm_tests[] = {
	{ "every_task_passes_with_hvd", test_every_task_passes_with_hvd },
	{ "without_hvd_the_node_fails_naming_the_cause", test_without_hvd_the_node_fails_naming_the_cause },
	{ "arguments_are_refused", test_arguments_are_refused },
	{ 0 },
};

const struct test_case check_multinode_tests[] = {
	{ "every_node_passes", test_every_node_passes },
	{ "without_hvd_every_node_fails", test_without_hvd_every_node_fails },
	{ "one_node_off_its_socket_fails_alone", test_one_node_off_its_socket_fails_alone },
	{ 0 },
};
