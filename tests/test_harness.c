/* test_harness.c - the tests/slurm cluster itself: it runs jobs, grants the
 * four fake GPUs, gives PMIx by default, and lives entirely in its temp dir.
 * What it does not do: test the plugin (test_spank_slurm.c does).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static void test_srun_runs_on_the_test_node(void)
{
	struct test_proc p;
	CHECK(test_run("srun -n 2 hostname -s", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	char want[600];
	snprintf(want, sizeof(want), "%s\n%s\n", test_hostname(), test_hostname());
	CHECK_STR(p.out, want);
	test_proc_free(&p);
}

static void test_cluster_grants_four_fake_gpus(void)
{
	struct test_proc p;
	CHECK(test_run("srun -n 1 --gres=gpu:4 sh -c 'echo $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS'",
		       60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "0,1,2,3 0,1,2,3\n");
	test_proc_free(&p);
	CHECK(test_run("sinfo -h -o '%c %z %G'", 30, &p) == 0);
	CHECK_CONTAINS(p.out, "8 2:4:1 gpu:4");
	test_proc_free(&p);
}

static void test_pmix_is_the_default(void)
{
	struct test_proc p;
	CHECK(test_run("srun -n 2 sh -c 'echo $SLURM_MPI_TYPE:$PMIX_RANK'", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "pmix:0\n");
	CHECK_CONTAINS(p.out, "pmix:1\n");
	test_proc_free(&p);
}

static void test_cluster_lives_in_its_temp_dir(void)
{
	const char *dir = test_cluster_dir();
	CHECK(dir != NULL);
	CHECK(getenv("SLURM_CONF") && strstr(getenv("SLURM_CONF"), dir) == getenv("SLURM_CONF"));
	struct test_proc p;
	CHECK(test_run("scontrol show config", 30, &p) == 0);
	CHECK_CONTAINS(p.out, dir);
	CHECK_CONTAINS(p.out, "PlugStackConfig         = ");
	CHECK(strstr(p.out, "/etc/slurm/plugstack.conf") == NULL);
	CHECK(strstr(p.out, "/var/run/munge") == NULL);
	test_proc_free(&p);
	/* the fake GPUs are device nodes in the temp dir, not in /dev */
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "stat -c %%F '%s/dev/nvidia3'", dir);
	CHECK(test_run(cmd, 10, &p) == 0);
	CHECK_STR(p.out, "character special file\n");
	test_proc_free(&p);
}

static void test_sbatch_job_completes(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && sbatch --wait -n 2 -o out.txt --wrap 'srun hostname -s' && cat out.txt",
		 test_tmpdir());
	CHECK(test_run(cmd, 90, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, test_hostname());
	test_proc_free(&p);
}

static void test_jobs_get_a_private_dev_shm(void)
{
	struct test_proc p;
	CHECK(test_run("srun -n 2 sh -c 'touch /dev/shm/hvd-harness-probe.$SLURM_PROCID; "
		       "ls /dev/shm | grep -c hvd-harness-probe'", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "2\n");
	test_proc_free(&p);
	CHECK(test_run("ls /dev/shm | grep -c hvd-harness-probe", 10, &p) == 0);
	CHECK_STR(p.out, "0\n");
	test_proc_free(&p);
}

/* A cluster group that hangs in a job step: at its deadline the inner
 * runner tears its cluster down, kills what is left under its root
 * (slurmstepd, the step's sleep) and runs the next group. */
static void test_harness_ends_a_hung_cluster_group(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -u SLURM_CONF HVD_SRC='%s' '%s/hvdtest' -g selftest-cluster-hang "
		 "-g selftest-next", test_src_dir(), test_build_dir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "FAIL group selftest-cluster-hang: passed its deadline of 8 s in "
		       "selftest_step_hangs; the last lines of its log:\nstarting a step that never ends\n");
	CHECK_CONTAINS(p.out, "ok selftest_next_group_runs\n");
	CHECK_CONTAINS(p.out, "ok cluster_teardown_leaves_nothing\n");
	test_proc_free(&p);
}

/* A lane with a cluster of its own (another kind than the groups' in
 * line) runs beside them; a group in line that hangs ends with its own
 * processes only: the lane's step, running then, ends well. */
static void test_harness_ends_a_hung_group_beside_a_lane(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -u SLURM_CONF HVD_SRC='%s' '%s/hvdtest' -G selftest-cluster-beside "
		 "-G selftest-cluster-hang", test_src_dir(), test_build_dir());
	CHECK(test_run(cmd, 180, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "-- group selftest-cluster-beside: started beside the groups after it");
	CHECK_CONTAINS(p.out, "FAIL group selftest-cluster-hang: passed its deadline of 8 s");
	/* the lane's case sleeps 3 s after the cluster goes: its ok line has its seconds */
	CHECK_CONTAINS(p.out, "/cluster-affinity\nok selftest_lane_step_outlives_a_hung_group (");
	CHECK_CONTAINS(p.out, "ok cluster_teardown_leaves_nothing\n");
	test_proc_free(&p);
}

/* A case that leaves a job behind fails, and the job is cancelled before
 * the next case, which finds the node free. */
static void test_harness_cancels_a_job_a_case_left(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -u SLURM_CONF HVD_SRC='%s' '%s/hvdtest' -G selftest-cluster-leftjob",
		 test_src_dir(), test_build_dir());
	CHECK(test_run(cmd, 180, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "ok selftest_leaves_a_job\nFAIL selftest_leaves_a_job: left job(s) ");
	/* a case's time follows its name from CASE_SECONDS_SHOWN on (a
	 * loaded machine's srun can take that long) */
	CHECK_CONTAINS(p.out, " on the test cluster: cancelled\nok selftest_cluster_is_free");
	CHECK_CONTAINS(p.out, "ok cluster_teardown_leaves_nothing\n");
	test_proc_free(&p);
}

/* The unit lane runs on beside the cluster groups: a lane of a unit group
 * (selftest-beside) is collected after the cluster group in line, not
 * before it, and both are counted. */
static void test_unit_lane_runs_beside_a_cluster_group(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -u SLURM_CONF HVD_SRC='%s' '%s/hvdtest' -G selftest-beside "
		 "-G selftest-cluster-leftjob", test_src_dir(), test_build_dir());
	CHECK(test_run(cmd, 180, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_INT(p.exit_code, 1);
	const char *started = strstr(p.out, "-- group selftest-beside: started beside the groups");
	const char *in_line = strstr(p.out, "-- group selftest-cluster-leftjob: ");
	const char *collected = strstr(p.out, "-- group selftest-beside collected: ");
	CHECK_MSG(started && in_line && collected && started < in_line && in_line < collected,
		  "want the unit lane started before the cluster group and collected after it: %s",
		  p.out);
	CHECK_CONTAINS(p.out, "ok selftest_beside_sleeps (2.");
	CHECK_CONTAINS(p.out, "ok selftest_cluster_is_free");   /* "\n" or " (2.2 s)\n" */
	CHECK_CONTAINS(p.out, "ok cluster_teardown_leaves_nothing\n");
	CHECK_CONTAINS(p.out, "\n4 passed, 2 failed\n");
	test_proc_free(&p);
}

/* The test clusters' port pairs (tests/slurm/ports.sh) lie below the
 * kernel's ephemeral range, where no outgoing connection can take one
 * before slurmctld binds it (a cluster that lost that race answered no
 * sinfo for 30 s), and pair an even port with the next. */
static void test_cluster_ports_lie_below_the_ephemeral_range(void)
{
	char cmd[4200];
	struct test_proc p;
	char *range = test_read_file("/proc/sys/net/ipv4/ip_local_port_range", NULL);
	int lo = range ? atoi(range) : 0;
	free(range);
	if (lo < 12002)
		SKIP("ephemeral ports start at %d here: no room below them, ports.sh draws 20000-59999", lo);
	snprintf(cmd, sizeof(cmd), "bash -c '. \"$1\"/tests/slurm/ports.sh && for i in $(seq 200); do "
		 "pick_ports || exit 1; done' sh '%s'", test_src_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	int pairs = 0, bad = 0;
	for (const char *s = p.out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : "") {
		int a, b;
		if (sscanf(s, "%d %d", &a, &b) != 2 || b != a + 1 || a % 2 || a < 10000 || b >= lo)
			bad++;
		pairs++;
	}
	CHECK_MSG(pairs == 200 && bad == 0, "%d pairs, %d outside 10000..%d: %.300s", pairs, bad, lo - 1, p.out);
	test_proc_free(&p);
}

const struct test_case harness_tests[] = {
	{ "cluster_ports_lie_below_the_ephemeral_range", test_cluster_ports_lie_below_the_ephemeral_range },
	{ "srun_runs_on_the_test_node", test_srun_runs_on_the_test_node },
	{ "cluster_grants_four_fake_gpus", test_cluster_grants_four_fake_gpus },
	{ "pmix_is_the_default", test_pmix_is_the_default },
	{ "cluster_lives_in_its_temp_dir", test_cluster_lives_in_its_temp_dir },
	{ "sbatch_job_completes", test_sbatch_job_completes },
	{ "jobs_get_a_private_dev_shm", test_jobs_get_a_private_dev_shm },
	{ "harness_ends_a_hung_cluster_group", test_harness_ends_a_hung_cluster_group },
	{ "harness_cancels_a_job_a_case_left", test_harness_cancels_a_job_a_case_left },
	{ "harness_ends_a_hung_group_beside_a_lane", test_harness_ends_a_hung_group_beside_a_lane },
	{ "unit_lane_runs_beside_a_cluster_group", test_unit_lane_runs_beside_a_cluster_group },
	{ 0 }
};
