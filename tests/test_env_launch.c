/* test_env_launch.c - the launch without a scheduler (Kubernetes Indexed
 * Job, contrib/hvdrun), on loopback: local processes started by
 * tests/env_launch.sh with only the environment a pod gets
 * (JOB_COMPLETION_INDEX, HVD_SIZE, HVD_COORDINATOR=127.0.0.1:PORT or a name
 * from a private /etc/hosts in a mount namespace, HVD_SECRET_FILE). The
 * start-up report, exact collectives over the TCP ring on 2, 3 and 4
 * ranks, training equivalence (2 ranks x b8 bit-identical to one rank
 * accumulating 2; 4 ranks within 1e-5), a killed and a stopped rank named
 * by the others, a process without the secret kept out, hvd_abort_job
 * returning, bad input (rank past size, coordinator that never answers,
 * two processes with one index), repeated steps agreed by the engines over
 * the ring and a rank that stops submitting named there. Group env-launch-slurm: the same 2-rank
 * training under srun gives the same bits. contrib/ is tested in
 * test_env_contrib.c.
 * What it does not do: run the container image or a cluster (none here).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootstrap/bootstrap_env.h"
#include "ckpt_compare.h"
#include "env_launch.h"
#include "runner.h"
#include "train/run_record.h"

/* Every process exits 0; rank 0 (process 0) prints `ok MODE`. */
static void expect_all_ok(const struct test_proc *p, int n, const char *ok)
{
	for (int k = 0; k < n; k++) {
		char *out = env_launch_output("out", k), *err = env_launch_output("err", k);
		CHECK_MSG(env_launch_status(p, k, NULL) == 0, "process %d: %.600s", k, err);
		CHECK_MSG(k || strstr(out, ok) != NULL, "rank 0: no '%s' in '%.200s'", ok, out);
		free(out);
		free(err);
	}
}

static void run_ok(int n, const char *args, const char *ok)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test(args);
	if (env_launch_run("HVD_TIMEOUT_S=30", n, NULL, cmd, 120, &p) == 0) {
		expect_all_ok(&p, n, ok);
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_two_pods_start_with_the_report(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("init");
	if (env_launch_run("", 2, NULL, cmd, 60, &p) == 0) {
		expect_all_ok(&p, 2, "ok init");
		char *out1 = env_launch_output("out", 1), *err0 = env_launch_output("err", 0);
		CHECK_CONTAINS(out1, "rank 1/2 local 1/2 backend tcp");
		CHECK_CONTAINS(err0, "hvd: start-up: 2 ranks, backend tcp, 1 node");
		CHECK_CONTAINS(err0, "hvd: setting: HVD_SIZE=2");
		free(out1);
		free(err0);
		test_proc_free(&p);
	}
	free(cmd);
}

/* hvd_init_world: processes launched as indexes 0..2 start instead as the
 * world the struct gives (ranks reversed, another coordinator port); the
 * launch's JOB_COMPLETION_INDEX/HVD_SIZE/HVD_COORDINATOR stay in the
 * environment, and the report does not show them as this world's. */
static void test_a_world_from_a_struct_wins_over_the_environment(void)
{
	struct test_proc p;
	char args[64];
	snprintf(args, sizeof(args), "world %d", env_launch_port());
	char *cmd = env_launch_rt_test(args);
	if (env_launch_run("HVD_TIMEOUT_S=30", 3, NULL, cmd, 90, &p) == 0) {
		expect_all_ok(&p, 3, "ok world");
		for (int k = 0; k < 3; k++) {
			char *out = env_launch_output("out", k), want[64];
			snprintf(want, sizeof(want), "rank %d/3 was %d sum 6\n", 2 - k, k);
			CHECK_CONTAINS(out, want);
			CHECK_CONTAINS(out, "refused: hvd: hvd_init_world: 'world': needs 0 <= rank < size");
			free(out);
		}
		char *err2 = env_launch_output("err", 2);   /* the new world's rank 0 */
		CHECK_CONTAINS(err2, "hvd: setting: a world of 3 from hvd_init_world, coordinator "
			       "127.0.0.1:");
		CHECK_MSG(!strstr(err2, "hvd: setting: HVD_COORDINATOR="), "the launch's "
			  "coordinator is not the world's: %.600s", err2);
		free(err2);
		test_proc_free(&p);
	}
	free(cmd);
}

/* HVD_SIZE=1: a world of one, backend self, no coordinator needed. */
static void test_one_pod_is_a_world_of_one(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("collect");
	if (env_launch_run("", 1, NULL, cmd, 60, &p) == 0) {
		expect_all_ok(&p, 1, "ok collect");
		char *err0 = env_launch_output("err", 0);
		CHECK_CONTAINS(err0, "hvd: start-up: 1 rank, backend self");
		free(err0);
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_exact_two_three_four_ranks(void)
{
	run_ok(2, "exact 4194304", "ok exact");
	run_ok(4, "exact 4194304", "ok exact");
	run_ok(3, "collect", "ok collect");
	run_ok(4, "fused 300", "ok fused");
}

/* HVD_COORDINATOR is a name only a private /etc/hosts knows (a mount
 * namespace, as tests/slurm/cluster.sh uses): resolved by every rank. */
static void test_coordinator_by_name_from_a_private_hosts_file(void)
{
	char *hosts = test_path(test_tmpdir(), "hosts"), coord[64], *cmd = NULL;
	const char *text = "127.0.0.1 localhost\n127.0.0.1 chexnet-0.chexnet\n";
	struct test_proc p;
	CHECK(test_write_file(hosts, text, strlen(text)) == 0);
	snprintf(coord, sizeof(coord), "chexnet-0.chexnet:%d", env_launch_port());
	if (test_run("unshare --mount --propagation private true", 10, &p) || p.exit_code) {
		test_proc_free(&p);
		free(hosts);
		SKIP("no mount namespace here (unshare --mount needs root)");
	}
	test_proc_free(&p);
	if (asprintf(&cmd, "unshare --mount --propagation private sh -c 'mount --bind %s /etc/hosts && "
		     "exec \"$0\" \"$@\"' '%s/hvd-rt-test' exact 65536", hosts, test_build_dir()) < 0)
		return;
	if (env_launch_run("", 2, coord, cmd, 60, &p) == 0) {
		expect_all_ok(&p, 2, "ok exact");
		char *err0 = env_launch_output("err", 0);
		CHECK_CONTAINS(err0, "HVD_COORDINATOR=chexnet-0.chexnet:");
		free(err0);
		test_proc_free(&p);
	}
	free(cmd);
	free(hosts);
}

static void test_two_pods_b8_bit_identical_to_one_accumulating_two(void)
{
	if (env_launch_data())
		return;
	env_launch_train_pods(2, "--batch 8 --out dist");
	env_launch_train_alone("--batch 8 --accumulate 2 --out acc");
	env_launch_train_alone("--batch 8 --out plain");
	double same = ckpt_max_rel_diff("dist", "acc"), other = ckpt_max_rel_diff("dist", "plain");
	CHECK_MSG(same == 0, "2 pods vs --accumulate 2: max rel diff %.3g, want 0 (bit-identical)", same);
	CHECK_MSG(other > 1e-5, "2 pods vs one rank without accumulation differ by only %.3g", other);
}

static void test_four_pods_within_1e5_of_one_accumulating_four(void)
{
	if (env_launch_data())
		return;
	env_launch_train_pods(4, "--batch 4 --out dist");
	env_launch_train_alone("--batch 4 --accumulate 4 --out acc");
	double same = ckpt_max_rel_diff("dist", "acc");
	CHECK_MSG(same >= 0 && same <= 1e-5, "4 pods vs --accumulate 4: max rel diff %.3g", same);
	/* the same run recorded: 4 ranks, each one's host, the global batch */
	struct run_settings a, b;
	struct trainer_error err = { "" };
	char *pa = test_path(test_tmpdir(), "dist/run.json"), *pb = test_path(test_tmpdir(), "acc/run.json");
	CHECK_MSG(run_record_read(pa, &a, &err) == 0, "%s", err.msg);
	CHECK_MSG(run_record_read(pb, &b, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&a, "ranks"), "4");
	CHECK_STR(run_settings_get(&a, "global_batch"), run_settings_get(&b, "global_batch"));
	char *text = test_read_file(pa, NULL);
	CHECK(text && strstr(text, "\"hosts\":\t[\"") && strstr(text, "\", \"") != NULL);
	int hosts = 0;
	for (const char *h = text ? strstr(text, "\"hosts\":") : NULL; h && *h != ']'; h++)
		hosts += *h == ',';
	CHECK_INT(hosts, 3);   /* four names */
	free(text);
	free(pa);
	free(pb);
}

/* ---- failures ---- */

static void test_killed_pod_fails_the_others_at_once_naming_it(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("loop");
	if (env_launch_run("HVD_TIMEOUT_S=60 HVD_RT_TEST_ABORT=1 EL_SIGNAL=KILL EL_TARGET=2", 4, NULL, cmd, 90,
		   &p) == 0) {
		for (int k = 0; k < 4; k++) {
			long ms = -1;
			int st = env_launch_status(&p, k, &ms);
			if (k == 2) {
				CHECK_MSG(st == 137, "the killed pod: status %d", st);
				continue;
			}
			char *err = env_launch_output("err", k);
			CHECK_MSG(st == 1, "pod %d: status %d (want 1: main returned): %.400s", k, st, err);
			CHECK_MSG(ms >= 0 && ms < 5000, "pod %d ended %ld ms after the kill", k, ms);
			printf("  measured: pod %d ended %ld ms after the kill of pod 2\n", k, ms);
			CHECK_CONTAINS(err, "hvd: rank 2 (host ");
			if (k == 0) /* its hvd_abort_job names the rank it cannot reach */
				CHECK_CONTAINS(err, "hvd: hvd_abort_job: 'rank 2 (host ");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_stopped_pod_is_named_within_the_timeout(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("loop");
	if (env_launch_run("HVD_TIMEOUT_S=4 EL_SIGNAL=STOP EL_TARGET=1", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k += 2) {
			long ms = -1;
			int st = env_launch_status(&p, k, &ms);
			char *err = env_launch_output("err", k);
			CHECK_MSG(st == 1, "pod %d: status %d: %.400s", k, st, err);
			CHECK_MSG(ms >= 3000 && ms < 4000 + 3000, "pod %d ended %ld ms after SIGSTOP "
				  "(HVD_TIMEOUT_S=4)", k, ms);
			CHECK_CONTAINS(err, "rank 1 (host ");
			CHECK_CONTAINS(err, "silent for");
			printf("  measured: pod %d ended %ld ms after SIGSTOP of pod 1 (HVD_TIMEOUT_S=4)\n", k, ms);
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* Steps 2-4 of a repeated sequence are agreed by the engines with the
 * ring's vote (comm_tcp.c, HVD_VOTE=messages) on 2 and 3 ranks (3: votes
 * forwarded round the ring), and through shared memory (auto: every
 * process on this machine) on 3; every rank checks its sums. */
static void test_repeated_steps_agreed_over_the_ring(void)
{
	static const char *const env[] = { "HVD_VOTE=messages", "HVD_VOTE=messages", "HVD_VOTE=auto" };
	for (int c = 0; c < 3; c++) {
		int n = c == 0 ? 2 : 3;
		struct test_proc p;
		char *cmd = env_launch_rt_test("repeat 4 same"), envs[128];
		snprintf(envs, sizeof(envs), "HVD_TIMEOUT_S=30 HVD_CYCLE_TIME_MS=1000 %s", env[c]);
		if (env_launch_run(envs, n, NULL, cmd, 120, &p) == 0) {
			expect_all_ok(&p, n, "ok repeat");
			for (int k = 0; k < n; k++) {
				/* 3 (steps 2-4); 2 if a rank more than a second late
				 * at a step was nudged to say no (a loaded machine) */
				char *out = env_launch_output("out", k), line[32];
				snprintf(line, sizeof(line), "rank %d: ", k);
				const char *at = strstr(out, line);
				int agreed = -1;
				if (at)
					sscanf(at + strlen(line), "%d buckets agreed", &agreed);
				CHECK_MSG(agreed >= 2 && agreed <= 3, "%d ranks: rank %d: %d buckets agreed "
					  "(want 2-3): '%.200s'", n, k, agreed, out);
				free(out);
			}
			test_proc_free(&p);
		}
		free(cmd);
	}
}

/* Rank 1 of 3 submits nothing in step 3 (and sleeps 30 s, killed once
 * the others end): the others wait in the ring's vote without blocking
 * in it, tell rank 0, every engine is nudged to vote, and the stall
 * inspector names rank 1 well before HVD_TIMEOUT_S would have. */
static void test_rank_that_stops_submitting_is_named_over_the_ring(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("repeat 4 stop");
	if (env_launch_run("HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3 HVD_VOTE=messages EL_LINGER=1", 3,
			   NULL, cmd, 90, &p) == 0) {
		for (int k = 0; k < 3; k += 2) {
			long ms = -1;
			int st = env_launch_status(&p, k, &ms);
			char *err = env_launch_output("err", k);
			CHECK_MSG(st == 1, "rank %d: status %d: %.600s", k, st, err);
			CHECK_MSG(ms >= 0 && ms < 20000, "rank %d ended after %ld ms", k, ms);
			CHECK_CONTAINS(err, "hvd: stalled: 'rank 1: [rep.0, rep.1, rep.2, rep.3, rep.4, "
				       "rep.5, ...]'");
			if (k == 0)
				CHECK_CONTAINS(err, "hvd: stall: 'rank 1: [rep.0, rep.1, rep.2");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* An intruder with another secret claims index 1 first; the real rank 1
 * comes 2 s later and the job finishes; the intruder never joins. */
static void test_process_without_the_secret_cannot_join(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("exact 65536");
	if (env_launch_secret("other") == 0 &&
	    env_launch_run("HVD_TIMEOUT_S=4 EL_INDEXES='0 1 1' EL_ENV_1=HVD_SECRET_FILE=other EL_DELAY_2=2",
		   2, NULL, cmd, 60, &p) == 0) {
		char *err0 = env_launch_output("err", 0), *err1 = env_launch_output("err", 1), *err2 = env_launch_output("err", 2);
		CHECK_MSG(env_launch_status(&p, 0, NULL) == 0, "rank 0: %.600s", err0);
		CHECK_MSG(env_launch_status(&p, 2, NULL) == 0, "rank 1: %.600s", err2);
		CHECK_MSG(env_launch_status(&p, 1, NULL) == 1, "the intruder: %.600s", err1);
		CHECK_CONTAINS(err0, "failed authentication");
		CHECK_CONTAINS(err1, "hvd: HVD_COORDINATOR: '127.0.0.1:");
		CHECK_CONTAINS(err1, "rank 0 did not answer within HVD_TIMEOUT_S (4 s)");
		CHECK_CONTAINS(err1, "lost: never-joined ranks 0 hosts ?\n");   /* hvd_lost_ranks */
		free(err0);
		free(err1);
		free(err2);
		test_proc_free(&p);
	}
	free(cmd);
}

/* hvd_abort_job without a launcher broadcasts and returns: every main()
 * exits 1 by itself (no signal), nobody reports an unreached rank. */
static void test_abort_job_returns_and_every_rank_exits(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("mismatch");
	if (env_launch_run("HVD_RT_TEST_ABORT=1", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k++) {
			char *err = env_launch_output("err", k);
			size_t n = strlen(err), tail = n > 600 ? n - 600 : 0;
			int st = env_launch_status(&p, k, NULL);
			CHECK_MSG(st == 1, "rank %d: status %d: ...%s", k, st, err + tail);
			CHECK_CONTAINS(err, "hvd: tensor mismatch:");
			CHECK_MSG(!strstr(err, "hvd_abort_job"), "rank %d: ...%s", k, err + tail);
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* NCCL (a GPU build with a device: the emulated ones in gpu-emulated's
 * run) loses rank 0 of 4 (SIGKILL): the others start the runtime again
 * as ranks 0-2, and comm_nccl.c shrinks the revoked communicator to them
 * (ncclCommShrink, no new id) instead of making a new one; an allreduce
 * of device memory there sums the ranks left. Rank 0 was the NCCL root
 * and the coordinator: both move to old rank 1. */
/* env = the settings of an NCCL world on this machine's devices; 0 when
 * one rank can start there, else the case is skipped. */
static int nccl_world_env(char *env, size_t len)
{
	struct test_proc p;
	char *topo = test_path(test_src_dir(), "tests/topo/two-cpu-4gpu.xml");
	char *probe = env_launch_rt_test("init");
	snprintf(env, len, "HVD_EMU_TOPOLOGY='%s' HVD_BACKEND=nccl HVD_TIMEOUT_S=20", topo);
	free(topo);
	int usable = env_launch_run(env, 1, NULL, probe, 60, &p) == 0 && env_launch_status(&p, 0, NULL) == 0;
	char *why = usable ? NULL : env_launch_output("err", 0);
	if (!usable)
		test_skip("no CUDA device for NCCL here: %.200s", why);
	free(why);
	free(probe);
	test_proc_free(&p);
	return usable ? 0 : -1;
}

/* "shrink LOST PORT", PORT another than the first world's coordinator. */
static char *shrink_command(int lost)
{
	char args[64];
	int port = env_launch_port(), again = env_launch_port();
	snprintf(args, sizeof(args), "shrink %d %d", lost, again != port ? again : env_launch_port());
	return env_launch_rt_test(args);
}

static void test_nccl_world_shrinks_to_the_ranks_left(void)
{
	struct test_proc p;
	char env[4400];
	if (nccl_world_env(env, sizeof(env)))
		return;
	char *cmd = shrink_command(0);
	strncat(env, " EL_SIGNAL=KILL EL_TARGET=0", sizeof(env) - strlen(env) - 1);
	if (env_launch_run(env, 4, NULL, cmd, 90, &p) == 0) {
		CHECK_MSG(env_launch_status(&p, 0, NULL) == 137, "the killed rank: %s", p.out);
		for (int k = 1; k < 4; k++) {
			char *out = env_launch_output("out", k), *err = env_launch_output("err", k), want[64];
			long ms = -1;
			CHECK_MSG(env_launch_status(&p, k, &ms) == 0, "rank %d: %.600s %.900s", k, out, err);
			snprintf(want, sizeof(want), "rank %d/3 was %d/4: NCCL ", k - 1, k);
			CHECK_CONTAINS(out, want);
			CHECK_CONTAINS(out, ", shrunk from 4 ranks");
			CHECK_CONTAINS(err, "hvd: rank 0 (host ");
			printf("  measured: rank %d shrank and summed %ld ms after the kill of rank 0\n", k, ms);
			free(out);
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* The same loss, and a spare process (started with the others, never in
 * the first world) takes rank 0's place as rank 3 of the second world:
 * its size is the first's, no rank of it holds a place in a revoked
 * communicator of the spare's, so comm_nccl.c makes a new communicator
 * (NCCL 2.28 has no ncclCommGrow) and an allreduce sums all four. */
static void test_nccl_world_takes_a_spare_in_a_lost_ranks_place(void)
{
	struct test_proc p;
	char env[4400], args[64];
	if (nccl_world_env(env, sizeof(env)))
		return;
	int port = env_launch_port(), again = env_launch_port();
	snprintf(args, sizeof(args), "grow 0 %d", again != port ? again : env_launch_port());
	char *cmd = env_launch_rt_test(args);
	strncat(env, " EL_SIGNAL=KILL EL_TARGET=0 EL_INDEXES='0 1 2 3 9' "
		"EL_ENV_4=HVD_RT_TEST_JOINER=1", sizeof(env) - strlen(env) - 1);
	if (env_launch_run(env, 4, NULL, cmd, 90, &p) == 0) {
		CHECK_MSG(env_launch_status(&p, 0, NULL) == 137, "the killed rank: %s", p.out);
		for (int k = 1; k < 5; k++) {
			char *out = env_launch_output("out", k), *err = env_launch_output("err", k), want[64];
			CHECK_MSG(env_launch_status(&p, k, NULL) == 0, "process %d: %.600s %.900s", k, out,
				  err);
			if (k < 4)
				snprintf(want, sizeof(want), "rank %d/4 was %d/4: NCCL ", k - 1, k);
			else
				snprintf(want, sizeof(want), "rank 3/4 was -1/4: NCCL ");
			CHECK_CONTAINS(out, want);
			CHECK_MSG(!strstr(out, "shrunk") && !strstr(out, "summed"), "process %d: %.300s",
				  k, out);
			free(out);
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* The same world after a failure that lost nobody (a tensor mismatch
 * on every rank): each revoked its communicator, and every rank of it is
 * back, so there is nothing to shrink (NCCL refuses an empty exclude
 * list): a new communicator sums all of them. */
static void test_nccl_world_without_a_loss_starts_anew(void)
{
	struct test_proc p;
	char env[4400];
	if (nccl_world_env(env, sizeof(env)))
		return;
	char *cmd = shrink_command(-1);
	if (env_launch_run(env, 3, NULL, cmd, 90, &p) == 0) {
		for (int k = 0; k < 3; k++) {
			char *out = env_launch_output("out", k), *err = env_launch_output("err", k), want[64];
			CHECK_MSG(env_launch_status(&p, k, NULL) == 0, "rank %d: %.600s %.900s", k, out, err);
			snprintf(want, sizeof(want), "rank %d/3 was %d/3: NCCL ", k, k);
			CHECK_CONTAINS(out, want);
			CHECK_MSG(!strstr(out, "shrunk"), "rank %d: %.300s", k, out);
			CHECK_CONTAINS(err, "hvd: tensor mismatch:");
			free(out);
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* ---- bad input ---- */

static void expect_refused(const char *env, int size, const char *needle)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("init");
	if (env_launch_run(env, size, NULL, cmd, 30, &p) == 0) {
		char *err = env_launch_output("err", 0);
		CHECK_MSG(env_launch_status(&p, 0, NULL) == 1, "%s: %.600s", env, err);
		CHECK_CONTAINS(err, needle);
		free(err);
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_rank_not_below_size_is_refused(void)
{
	expect_refused("EL_INDEXES=2", 2, "hvd: JOB_COMPLETION_INDEX: '2': not below HVD_SIZE (2)");
	expect_refused("EL_INDEXES=0 EL_ENV_0=HVD_RANK=5", 4, "hvd: HVD_RANK: '5': differs from "
		       "JOB_COMPLETION_INDEX '0'");
	expect_refused("EL_INDEXES=0 EL_ENV_0=HVD_SIZE=two", 2, "hvd: HVD_SIZE: 'two': not a");
}

static void test_bootstrap_env_parse_rules(void)
{
	char err[512];
	int rank = -1, size = -1;
	char *ok[] = { "HVD_RANK=1", "HVD_SIZE=2", "HVD_COORDINATOR=a:1", "HVD_SECRET_FILE=s", NULL };
	CHECK_INT(bootstrap_env_parse(ok, &rank, &size, err, sizeof(err)), 0);
	CHECK_INT(rank, 1);
	CHECK_INT(size, 2);
	char *no_secret[] = { "JOB_COMPLETION_INDEX=0", "HVD_SIZE=2", "HVD_COORDINATOR=a:1", NULL };
	CHECK_INT(bootstrap_env_parse(no_secret, &rank, &size, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: HVD_SECRET_FILE: unset:");
	char *no_coord[] = { "HVD_RANK=0", "HVD_SIZE=2", "HVD_SECRET_FILE=s", NULL };
	CHECK_INT(bootstrap_env_parse(no_coord, &rank, &size, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: HVD_COORDINATOR: unset:");
	char *no_size[] = { "JOB_COMPLETION_INDEX=0", NULL };
	CHECK_INT(bootstrap_env_parse(no_size, &rank, &size, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: HVD_SIZE: unset:");
	char *neg[] = { "HVD_RANK=-1", "HVD_SIZE=2", NULL };
	CHECK_INT(bootstrap_env_parse(neg, &rank, &size, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: HVD_RANK: '-1': not a number");
	char *one[] = { "HVD_RANK=0", "HVD_SIZE=1", NULL }; /* one rank needs neither */
	CHECK_INT(bootstrap_env_parse(one, &rank, &size, err, sizeof(err)), 0);
	const char *names[] = { "a", "b", "a", "c", "b" };
	struct host_entry *hosts = calloc(5, sizeof(*hosts));
	for (int r = 0; r < 5; r++)
		snprintf(hosts[r].host, sizeof(hosts[r].host), "%s", names[r]);
	struct bootstrap b = { .rank = 4, .size = 5 };
	bootstrap_env_places(&b, hosts);
	CHECK_INT(hosts[2].local_rank, 1);
	CHECK_INT(hosts[4].local_rank, 1);
	CHECK_INT(hosts[3].node_id, 2);
	CHECK_INT(hosts[4].node_id, 1);
	CHECK_INT(b.local_rank, 1);
	CHECK_INT(b.node_id, 1);
	CHECK_INT(b.local_size, 2);
	CHECK_INT(b.node_count, 3);
	free(hosts);
}

/* A listener that never accepts: the kernel completes the connection, the
 * HELLO is never answered. */
static void test_coordinator_that_never_answers_fails_after_the_timeout(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) && !listen(fd, 16) &&
	      !getsockname(fd, (struct sockaddr *)&a, &len));
	char coord[64];
	snprintf(coord, sizeof(coord), "127.0.0.1:%d", ntohs(a.sin_port));
	struct test_proc p;
	char *cmd = env_launch_rt_test("init");
	if (env_launch_run("HVD_TIMEOUT_S=3 EL_INDEXES=1", 2, coord, cmd, 60, &p) == 0) {
		long ms = -1;
		char *err = env_launch_output("err", 0);
		CHECK_MSG(env_launch_status(&p, 0, &ms) == 1, "%.600s", err);
		CHECK_MSG(ms >= 2900 && ms < 8000, "failed after %ld ms (HVD_TIMEOUT_S=3)", ms);
		CHECK_CONTAINS(err, "rank 0 did not answer within HVD_TIMEOUT_S (3 s)");
		free(err);
		test_proc_free(&p);
	}
	free(cmd);
	close(fd);
}

/* Indexes 0, 1, 1 of a world of 3: rank 0 sees index 1 prove itself twice
 * and fails the job; every process hears why. */
static void test_two_processes_with_one_index_fail_the_job(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("init");
	if (env_launch_run("HVD_TIMEOUT_S=10 EL_INDEXES='0 1 1' EL_DELAY_2=0.5", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k++) {
			long ms = -1;
			char *err = env_launch_output("err", k);
			CHECK_MSG(env_launch_status(&p, k, &ms) == 1, "process %d: %.600s", k, err);
			CHECK_MSG(ms < 5000, "process %d ended after %ld ms", k, ms);
			CHECK_CONTAINS(err, "hvd: HVD_RANK: '1': claimed by two processes");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

const struct test_case env_launch_tests[] = {
	{ "bootstrap_env_parse_rules", test_bootstrap_env_parse_rules },
	{ "two_pods_start_with_the_report", test_two_pods_start_with_the_report },
	{ "one_pod_is_a_world_of_one", test_one_pod_is_a_world_of_one },
	{ "a_world_from_a_struct_wins_over_the_environment",
	  test_a_world_from_a_struct_wins_over_the_environment },
	{ "exact_two_three_four_ranks", test_exact_two_three_four_ranks },
	{ "coordinator_by_name_from_a_private_hosts_file", test_coordinator_by_name_from_a_private_hosts_file },
	{ "killed_pod_fails_the_others_at_once_naming_it", test_killed_pod_fails_the_others_at_once_naming_it },
	{ "stopped_pod_is_named_within_the_timeout", test_stopped_pod_is_named_within_the_timeout },
	{ "process_without_the_secret_cannot_join", test_process_without_the_secret_cannot_join },
	{ "abort_job_returns_and_every_rank_exits", test_abort_job_returns_and_every_rank_exits },
	{ "nccl_world_shrinks_to_the_ranks_left", test_nccl_world_shrinks_to_the_ranks_left },
	{ "nccl_world_takes_a_spare_in_a_lost_ranks_place",
	  test_nccl_world_takes_a_spare_in_a_lost_ranks_place },
	{ "nccl_world_without_a_loss_starts_anew", test_nccl_world_without_a_loss_starts_anew },
	{ "rank_not_below_size_is_refused", test_rank_not_below_size_is_refused },
	{ "coordinator_that_never_answers_fails_after_the_timeout",
	  test_coordinator_that_never_answers_fails_after_the_timeout },
	{ "two_processes_with_one_index_fail_the_job", test_two_processes_with_one_index_fail_the_job },
	{ "two_pods_b8_bit_identical_to_one_accumulating_two",
	  test_two_pods_b8_bit_identical_to_one_accumulating_two },
	{ "four_pods_within_1e5_of_one_accumulating_four", test_four_pods_within_1e5_of_one_accumulating_four },
	{ "repeated_steps_agreed_over_the_ring", test_repeated_steps_agreed_over_the_ring },
	{ "rank_that_stops_submitting_is_named_over_the_ring",
	  test_rank_that_stops_submitting_is_named_over_the_ring },
	{ 0 }
};

/* The same training under srun (PMIx, MPI) and as two pods (TCP ring):
 * the same bits. */
static void test_two_pods_bit_identical_to_srun(void)
{
	char cmd[1024];
	struct test_proc p;
	if (env_launch_data())
		return;
	env_launch_train_pods(2, "--batch 8 --out pods");
	snprintf(cmd, sizeof(cmd), "cd '%s' && srun -n 2 '%s/chexnet' train " ENV_LAUNCH_TRAIN " --batch 8 "
		 "--out srun", test_tmpdir(), test_tmpdir());
	if (test_run(cmd, 240, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "srun -n 2 chexnet train: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	double diff = ckpt_max_rel_diff("pods", "srun");
	CHECK_MSG(diff == 0, "2 pods vs srun -n 2: max rel diff %.3g, want 0 (bit-identical)", diff);
}

const struct test_case env_launch_slurm_tests[] = {
	{ "two_pods_bit_identical_to_srun", test_two_pods_bit_identical_to_srun },
	{ 0 }
};
