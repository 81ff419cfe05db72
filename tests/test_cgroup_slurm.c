/* test_cgroup_slurm.c - group slurm-cgroup: hvd.so beside Slurm's real task
 * plugins. The one-node cluster runs with HVD_CLUSTER_CGROUP=1
 * (tests/slurm/cluster.sh): TaskPlugin=task/cgroup,task/affinity,
 * ProctrackType=proctrack/cgroup, ConstrainCores and ConstrainDevices, on
 * the cgroup version this machine has; if slurmd refuses them, the cluster
 * runs task/affinity alone and the first case prints slurmd's error.
 * Written on a machine with cgroup v1 (a tmpfs at /sys/fs/cgroup, the v2
 * hierarchy at /sys/fs/cgroup/unified without controllers): cgroup v2 has
 * not been tried. The plugin reads tests/topo/two-cpu-4gpu.xml (2 sockets
 * of 1 CPU, GPUs 0-1 on socket 0, 2-3 on socket 1).
 * Checked: slurmd runs the plugins DIR/plugins names (the task sits in
 * Slurm's cpuset cgroup); --hvd's CUDA_VISIBLE_DEVICES order and socket
 * binding hold beside them; ConstrainDevices denies the GPUs the step was
 * not granted; beside task/affinity's per-task binding --hvd binds within
 * the step's cpuset (task/cgroup), which hvd-check confirms.
 * Group slurm-affinity: the same cluster with HVD_CLUSTER_CGROUP=2,
 * task/affinity alone and no cpuset cgroup: --hvd binds within the step's
 * allocated cores (S_STEP_ALLOC_CORES) instead of task/affinity's core.
 * What it does not do: the plugin's other options (test_spank_slurm.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define TOPO "tests/topo/two-cpu-4gpu.xml"

static int site_topology(void)
{
	char args[4200];
	snprintf(args, sizeof(args), "topology=%s/" TOPO, test_src_dir());
	return test_cluster_plugstack(args);
}

/* DIR/plugins: first line what runs, later lines why cgroup was refused. */
static char *plugins_file(void)
{
	char *path = test_path(test_cluster_dir(), "plugins");
	char *text = test_read_file(path, NULL);
	free(path);
	return text ? text : strdup("");
}

static int cgroup_in_use(void)
{
	char *text = plugins_file();
	int yes = strncmp(text, "TaskPlugin=task/cgroup,task/affinity ", 37) == 0;
	free(text);
	return yes;
}

/* `CMD` in the case's directory, sorted stdout, exit status CMD's. */
static void run(const char *cmd, struct test_proc *p)
{
	char full[8192];
	snprintf(full, sizeof(full), "cd '%s' && { %s; } > out.txt; rc=$?; sort out.txt; exit $rc",
		 test_tmpdir(), cmd);
	CHECK(test_run(full, 90, p) == 0);
	CHECK_MSG(!p->timed_out, "timed out: %s", cmd);
}

static void test_slurmd_runs_the_plugins_it_names(void)
{
	struct test_proc p;
	char *text = plugins_file();
	char task[128] = "", track[128] = "";
	CHECK_MSG(sscanf(text, "TaskPlugin=%127s ProctrackType=%127s", task, track) == 2,
		  "DIR/plugins: '%s'", text);
	run("scontrol show config | awk '$1 == \"TaskPlugin\" || $1 == \"ProctrackType\" "
	    "{print $1 \"=\" $3}'", &p);
	char want[300];
	snprintf(want, sizeof(want), "ProctrackType=%s\nTaskPlugin=%s\n", track, task);
	CHECK_STR(p.out, want);
	test_proc_free(&p);
	if (!cgroup_in_use()) {   /* the header's fallback: say why, once */
		printf("note: slurmd refused the cgroup plugins; task/affinity alone: %s", text);
	} else {
		run("srun -n 1 grep -c ':cpuset:/slurm_' /proc/self/cgroup", &p);
		CHECK_MSG(p.exit_code == 0 && strcmp(p.out, "1\n") == 0, "not in Slurm's cpuset "
			  "cgroup: exit %d: %s%s", p.exit_code, p.out, p.err);
		test_proc_free(&p);
	}
	free(text);
}

/* rank|CUDA_VISIBLE_DEVICES|allowed CPUs|HVD_GPU_BUSID|HVD_CPUS|HVD_SOCKET */
#define SHOW "sh -c 'echo \"$SLURM_PROCID|$CUDA_VISIBLE_DEVICES|$(awk \"/^Cpus_allowed_list/ " \
	"{print \\$2}\" /proc/self/status)|$HVD_GPU_BUSID|$HVD_CPUS|$HVD_SOCKET\"'"

static void test_hvd_binding_holds_beside_them(void)
{
	struct test_proc p;
	CHECK_INT(site_topology(), 0);
	run("srun --hvd -n 4 --gres=gpu:4 " SHOW, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	CHECK_STR(p.out, "0|0,1,2,3|0|0000:3b:00.0|0|0\n"
		  "1|1,0,2,3|0|0000:5e:00.0|0|0\n"
		  "2|2,0,1,3|1|0000:86:00.0|1|1\n"
		  "3|3,0,1,2|1|0000:af:00.0|1|1\n");
	test_proc_free(&p);
}

/* The fake GPUs have no driver: a granted one opens with ENXIO ("No such
 * device or address"), one the devices cgroup denies with EPERM. */
static void test_constrain_devices_denies_other_gpus(void)
{
	struct test_proc p;
	char cmd[2048];
	if (!cgroup_in_use())
		SKIP("slurmd runs without task/cgroup here (see slurmd_runs_the_plugins_it_names)");
	CHECK_INT(site_topology(), 0);
	snprintf(cmd, sizeof(cmd), "srun --hvd -n 2 --gres=gpu:2 sh -c 'for i in 0 1 2 3; do "
		 "head -c1 %s/dev/nvidia$i 2>&1 | sed -n \"s/.*nvidia\\([0-3]\\).*: /$SLURM_PROCID "
		 "$CUDA_VISIBLE_DEVICES \\1 /p\"; done'", test_cluster_dir());
	run(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	CHECK_STR(p.out, "0 0,1 0 No such device or address\n0 0,1 1 No such device or address\n"
		  "0 0,1 2 Operation not permitted\n0 0,1 3 Operation not permitted\n"
		  "1 1,0 0 No such device or address\n1 1,0 1 No such device or address\n"
		  "1 1,0 2 Operation not permitted\n1 1,0 3 Operation not permitted\n");
	test_proc_free(&p);
}

/* task/affinity binds each task to a core of its own before the plugin
 * runs (two tasks: rank 1 on socket 1's CPU). With task/cgroup the plugin
 * binds within the step's cpuset instead, so both tasks on socket 0's GPUs
 * get socket 0's CPU and hvd-check passes; with task/affinity alone (no
 * cpuset says which CPUs the step has) it can only narrow rank 1's core:
 * hvd-check fails it, and --cpu-bind=none leaves the binding to --hvd. */
/* Both tasks (GPUs 0 and 1, socket 0) get socket 0's CPU; hvd-check
 * passes (skipped when it is not built). */
static void check_both_tasks_on_socket_0(void)
{
	struct test_proc p;
	char cmd[4600], path[4200];
	run("srun --hvd -n 2 --gres=gpu:2 " SHOW, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	CHECK_STR(p.out, "0|0,1|0|0000:3b:00.0|0|0\n1|1,0|0|0000:5e:00.0|0|0\n");
	test_proc_free(&p);
	snprintf(path, sizeof(path), "%s/hvd-check", test_build_dir());
	if (access(path, X_OK) != 0)
		SKIP("hvd-check not built (it needs PMIx and hwloc)");
	snprintf(cmd, sizeof(cmd), "HWLOC_XMLFILE='%s/" TOPO "' srun --hvd -n 2 --gres=gpu:2 '%s'",
		 test_src_dir(), path);
	run(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, test_tail(p.err, 600));
	CHECK_CONTAINS(p.out, "hvd-check: PASS: 1 of 1 nodes\n");
	test_proc_free(&p);
}

/* task/affinity binds each task to a core of its own before the plugin
 * runs (two tasks: rank 1 on socket 1's CPU). The plugin binds within the
 * step's CPUs instead (task/cgroup's cpuset; task/affinity alone: the
 * step's cores), so both tasks on socket 0's GPUs get socket 0's CPU and
 * hvd-check passes; --cpu-bind=none leaves the binding to --hvd. */
static void test_hvd_binds_within_the_step_beside_task_affinity(void)
{
	struct test_proc p;
	char cmd[4600], path[4200];
	snprintf(path, sizeof(path), "%s/hvd-check", test_build_dir());
	if (access(path, X_OK) != 0)
		SKIP("hvd-check not built (it needs PMIx and hwloc)");
	CHECK_INT(site_topology(), 0);
	check_both_tasks_on_socket_0();
	snprintf(cmd, sizeof(cmd), "HWLOC_XMLFILE='%s/" TOPO "' srun --hvd --cpu-bind=none -n 2 "
		 "--gres=gpu:2 '%s'", test_src_dir(), path);
	run(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, test_tail(p.err, 600));
	CHECK_CONTAINS(p.out, "hvd-check: PASS: 1 of 1 nodes\n");
	test_proc_free(&p);
}

/* HVD_CLUSTER_CGROUP=2: task/affinity alone, no Slurm cpuset cgroup. */
static void test_slurmd_runs_task_affinity_alone(void)
{
	struct test_proc p;
	char *text = plugins_file();
	CHECK_MSG(strncmp(text, "TaskPlugin=task/affinity ProctrackType=proctrack/linuxproc ", 59) == 0,
		  "DIR/plugins: '%s'", text);
	free(text);
	run("scontrol show config | awk '$1 == \"TaskPlugin\" {print $3}'; "
	    "srun -n 1 grep -c ':cpuset:/slurm_' /proc/self/cgroup", &p);
	CHECK_STR(p.out, "0\ntask/affinity\n");
	test_proc_free(&p);
}

/* task/affinity puts rank 1 on its own core (socket 1's CPU) though its
 * GPU is on socket 0; the step holds both cores, so --hvd binds rank 1
 * to socket 0's CPU, and hvd-check passes. */
static void test_hvd_binds_within_the_steps_cores(void)
{
	struct test_proc p;
	CHECK_INT(site_topology(), 0);
	run("srun -n 2 --gres=gpu:2 " SHOW, &p);
	CHECK_STR(p.out, "0|0,1|0|||\n1|0,1|1|||\n");   /* the premise: task/affinity's cores */
	test_proc_free(&p);
	check_both_tasks_on_socket_0();
}

const struct test_case affinity_slurm_tests[] = {
	{ "slurmd_runs_task_affinity_alone", test_slurmd_runs_task_affinity_alone },
	{ "hvd_binds_within_the_steps_cores", test_hvd_binds_within_the_steps_cores },
	{ 0 },
};

const struct test_case cgroup_slurm_tests[] = {
	{ "slurmd_runs_the_plugins_it_names", test_slurmd_runs_the_plugins_it_names },
	{ "hvd_binding_holds_beside_them", test_hvd_binding_holds_beside_them },
	{ "constrain_devices_denies_other_gpus", test_constrain_devices_denies_other_gpus },
	{ "hvd_binds_within_the_step_beside_task_affinity", test_hvd_binds_within_the_step_beside_task_affinity },
	{ 0 },
};
