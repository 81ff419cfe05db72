/* test_check_env.c - group check: hvd-check's own verdicts, without Slurm.
 * hvd-check runs as a one-rank world (no PMIx: backend self) in a clean
 * environment where the test plays the plugin's part (HVD_BIND,
 * HVD_GPU_BUSID, HVD_CPUS, HVD_SOCKET, HVD_PLUGIN_VERSION), taskset sets
 * the affinity and HWLOC_XMLFILE=tests/topo/two-cpu-4gpu.xml the topology
 * (GPUs 0000:3b:00.0 and 0000:5e:00.0 on socket 0 = CPU 0, 0000:86:00.0
 * and 0000:af:00.0 on socket 1 = CPU 1). Each case names the failure
 * hvd-check must print, or its PASS.
 * What it does not do: run under srun (test_check_slurm.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* `taskset -c CPUS hvd-check` with only ENV (and PATH) in its environment
 * and HWLOC_XMLFILE=xml (an absolute path, else under tests/topo);
 * stdout's last node row, the exit status returned. */
static int hvd_check_on(const char *xml, const char *cpus, const char *env, char *row, size_t len)
{
	struct test_proc p;
	char cmd[4600];
	snprintf(cmd, sizeof(cmd), "env -i PATH=\"$PATH\" HWLOC_XMLFILE='%s%s%s' "
		 "%s taskset -c %s '%s/hvd-check'", xml[0] == '/' ? "" : test_src_dir(),
		 xml[0] == '/' ? "" : "/tests/topo/", xml, env, cpus, test_build_dir());
	CHECK(test_run(cmd, 30, &p) == 0);
	const char *node = strstr(p.out, "\nnode ");
	const char *next = node ? strchr(node + 1, '\n') : NULL;
	snprintf(row, len, "%.*s", next ? (int)strcspn(next + 1, "\n") : 0, next ? next + 1 : "");
	int rc = p.exit_code;
	test_proc_free(&p);
	return rc;
}

static int hvd_check(const char *cpus, const char *env, char *row, size_t len)
{
	return hvd_check_on("two-cpu-4gpu.xml", cpus, env, row, len);
}

#define PLUGIN "HVD_BIND=socket HVD_PLUGIN_VERSION=$(cat '%s/VERSION') "

/* Runs with the plugin's variables for GPU busid on socket sock, CPUs cpus. */
static int placed(const char *cpus, const char *busid, const char *sock, const char *extra,
		  char *row, size_t len)
{
	char env[1024];
	snprintf(env, sizeof(env), PLUGIN "HVD_GPU_BUSID=%s HVD_SOCKET=%s HVD_CPUS=%s %s",
		 test_src_dir(), busid, sock, cpus, extra);
	return hvd_check(cpus, env, row, len);
}

static void test_a_task_on_its_gpus_socket_passes(void)
{
	char row[512];
	CHECK_INT(placed("1", "0000:86:00.0", "1", "", row, sizeof(row)), 0);
	CHECK_CONTAINS(row, " PASS");
}

static void test_cpus_off_the_gpus_socket_fail(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:86:00.0", "1", "", row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: CPUs: '0': off socket 1 (CPUs 1) nearest GPU 0000:86:00.0");
}

static void test_bind_none_does_not_check_cpus(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:86:00.0", "1", "HVD_BIND=none", row, sizeof(row)), 0);
	CHECK_CONTAINS(row, " PASS");
}

static void test_an_affinity_other_than_hvd_cpus_fails(void)
{
	char row[512], env[1024];
	snprintf(env, sizeof(env), PLUGIN "HVD_GPU_BUSID=0000:3b:00.0 HVD_SOCKET=0 HVD_CPUS=0-1",
		 test_src_dir());
	CHECK_INT(hvd_check("0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: affinity: '0': HVD_CPUS says 0-1");
}

static void test_a_socket_other_than_hvd_socket_fails(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:3b:00.0", "1", "", row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: socket: '0': HVD_SOCKET says 1");
}

static void test_a_gpu_hwloc_does_not_see_fails(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:01:00.0", "0", "", row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: GPU: '0000:01:00.0': hwloc does not see it");
}

static void test_another_plugin_version_fails(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:3b:00.0", "0", "HVD_PLUGIN_VERSION=0.0.9", row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: hvd plugin: '0.0.9': libhvd is ");
}

static void test_gpus_without_a_bus_id_fail(void)
{
	char row[512], env[1024];
	snprintf(env, sizeof(env), PLUGIN "HVD_SOCKET=0 HVD_CPUS=0 CUDA_VISIBLE_DEVICES=0,1",
		 test_src_dir());
	CHECK_INT(hvd_check("0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: GPU: 'CUDA_VISIBLE_DEVICES=0,1': no HVD_GPU_BUSID");
}

static void test_a_socket_that_is_no_number_fails(void)
{
	char row[512];
	CHECK_INT(placed("0", "0000:3b:00.0", "0x", "", row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: socket: '0x': HVD_SOCKET is not a socket index");
}

/* Real EPYC 9555 NPS4 node: GPU 0000:06:00.0 is on NUMA node 1 (PUs
 * 16-31,144-159) of package 0; CPU 0 is on package 0 but NUMA node 0. */
static void test_no_cpu_on_the_gpus_numa_node_fails(void)
{
	char row[512], env[1024];
	snprintf(env, sizeof(env), PLUGIN "HVD_GPU_BUSID=0000:06:00.0 HVD_SOCKET=0 HVD_CPUS=0",
		 test_src_dir());
	CHECK_INT(hvd_check_on("real/prrte-turin9555-4gpu-nvml.xml", "0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: NUMA: '0': none of the task's CPUs is on NUMA node 1 "
		       "(CPUs 16-31,144-159) of GPU 0000:06:00.0");
	/* bind=none: the user asked for no binding */
	snprintf(env, sizeof(env), PLUGIN "HVD_BIND=none HVD_GPU_BUSID=0000:06:00.0 HVD_SOCKET=0 "
		 "HVD_CPUS=0", test_src_dir());
	CHECK_INT(hvd_check_on("real/prrte-turin9555-4gpu-nvml.xml", "0", env, row, sizeof(row)), 0);
}

/* Real one-socket VM: hwloc hangs the GPUs off Machine; its one package
 * and NUMA node are theirs. */
static void test_one_socket_node_passes(void)
{
	char row[512], env[1024];
	snprintf(env, sizeof(env), PLUGIN "HVD_GPU_BUSID=0000:00:05.0 HVD_SOCKET=0 HVD_CPUS=0-1",
		 test_src_dir());
	CHECK_INT(hvd_check_on("real/gce-n1-1s-8xv100.xml", "0-1", env, row, sizeof(row)), 0);
	CHECK_CONTAINS(row, " PASS");
}

/* hwloc 2.x discovers this machine instead of a bad file, silently. */
static void test_a_bad_hwloc_xmlfile_fails_in_one_line(void)
{
	char row[512], env[1024], path[4200];
	snprintf(env, sizeof(env), PLUGIN "HVD_GPU_BUSID=0000:3b:00.0 HVD_SOCKET=0 HVD_CPUS=0",
		 test_src_dir());
	CHECK_INT(hvd_check_on("/nonexistent/topo.xml", "0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "FAIL: rank 0: hwloc: HWLOC_XMLFILE '/nonexistent/topo.xml': unreadable: "
		       "No such file or directory");
	snprintf(path, sizeof(path), "%s/empty.xml", test_tmpdir());
	CHECK(test_write_file(path, "\n", 1) == 0);
	CHECK_INT(hvd_check_on(path, "0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "empty.xml': empty");
	snprintf(path, sizeof(path), "%s/text.xml", test_tmpdir());
	CHECK(test_write_file(path, "GPU 0 on socket 0\n", 18) == 0);
	CHECK_INT(hvd_check_on(path, "0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "text.xml': not XML");
	snprintf(path, sizeof(path), "%s/v3.xml", test_tmpdir());
	const char *v3 = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"3.0\">\n";
	CHECK(test_write_file(path, v3, strlen(v3)) == 0);
	CHECK_INT(hvd_check_on(path, "0", env, row, sizeof(row)), 1);
	CHECK_CONTAINS(row, "v3.xml': hwloc XML version 3.0, this hwloc 2.");
}

const struct test_case check_env_tests[] = {
	{ "no_cpu_on_the_gpus_numa_node_fails", test_no_cpu_on_the_gpus_numa_node_fails },
	{ "one_socket_node_passes", test_one_socket_node_passes },
	{ "a_bad_hwloc_xmlfile_fails_in_one_line", test_a_bad_hwloc_xmlfile_fails_in_one_line },
	{ "a_task_on_its_gpus_socket_passes", test_a_task_on_its_gpus_socket_passes },
	{ "cpus_off_the_gpus_socket_fail", test_cpus_off_the_gpus_socket_fail },
	{ "bind_none_does_not_check_cpus", test_bind_none_does_not_check_cpus },
	{ "an_affinity_other_than_hvd_cpus_fails", test_an_affinity_other_than_hvd_cpus_fails },
	{ "a_socket_other_than_hvd_socket_fails", test_a_socket_other_than_hvd_socket_fails },
	{ "a_socket_that_is_no_number_fails", test_a_socket_that_is_no_number_fails },
	{ "a_gpu_hwloc_does_not_see_fails", test_a_gpu_hwloc_does_not_see_fails },
	{ "another_plugin_version_fails", test_another_plugin_version_fails },
	{ "gpus_without_a_bus_id_fail", test_gpus_without_a_bus_id_fail },
	{ 0 },
};
