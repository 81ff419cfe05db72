/* test_multinode_runtime.c - libhvd across the nodes of the multi-node
 * cluster (tests/slurm/multinode.sh: one network namespace per node):
 * rank, local rank/size and node id on every node, the start-up report
 * naming every node, the PMIx exchange as a barrier across nodes, MPI
 * allreduce between nodes without MCA variables, as root and as `nobody`
 * (group slurm-multinode-runtime); and failures of a rank or a node seen
 * from the other nodes: kill -9, SIGSTOP, a network cut past HVD_TIMEOUT_S
 * and a 4-second cut that must be survived (group
 * slurm-multinode-failures).
 * What it does not do: training (test_multinode_train.c) or the cluster
 * itself (test_multinode_harness.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multinode_sh.h"
#include "runner.h"

/* No transport settings for OpenMPI: whatever the caller's environment
 * says about btl/oob/pml/interfaces is dropped. */
#define NO_MCA "for v in $(env | grep -oE '^OMPI_MCA_[a-z_]*(btl|oob|pml|if_)[a-z_]*'); do unset $v; done; "

/* Every node plainly idle, at most 60 s (multinode_sh.h); prints idle=N/M. */
#define WAIT_IDLE "wait_idle 600; echo idle=$(idle)/$n"

static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* The line of `text` that starts with `start`, copied into line. */
static int line_starting(const char *text, const char *start, char *line, size_t len)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, start, strlen(start))) {
			size_t n = strcspn(p, "\n");
			snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), p);
			return 0;
		}
	return -1;
}

/* tmpdir/hvd-rt-test: a copy every user may run, at a path unique to the case. */
static void copy_test_program(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cp '%s/hvd-rt-test' '%s/hvd-rt-test' && chmod 755 '%s/hvd-rt-test' "
		 "&& runuser -u nobody -- test -x '%s/hvd-rt-test'", test_build_dir(), test_tmpdir(),
		 test_tmpdir(), test_tmpdir());
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "copy for nobody: %s", p.err);
	test_proc_free(&p);
}

/* `[runuser -u nobody --] ENV srun SRUN_ARGS tmpdir/hvd-rt-test ARGS` in tmpdir. */
static int run_rt(int as_nobody, const char *env, const char *srun_args, const char *args,
		  int timeout_s, struct test_proc *p)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cd '%s' && " NO_MCA "%s env %s SLURM_CONF=\"$SLURM_CONF\" srun %s "
		 "sh -c 'echo user=$(id -un)@$(hostname) >&2; exec ./hvd-rt-test %s'", test_tmpdir(),
		 as_nobody ? "runuser -u nobody --" : "", env, srun_args, args);
	return test_run(cmd, timeout_s, p);
}

/* Every rank of an N-node x K-per-node step: rank, local rank/size, node
 * id/count; the start-up report has one row per rank with host and node. */
static void check_layout(int nodes, int per_node)
{
	struct test_proc p;
	char args[64], want[160], line[400];
	int size = nodes * per_node;
	copy_test_program();
	/* -w: the first nodes, whatever a previous test's job still holds */
	snprintf(args, sizeof(args), "-N %d -w 'n[1-%d]' --ntasks-per-node=%d", nodes, nodes, per_node);
	CHECK(run_rt(0, "", args, "init", 60, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "srun %s: exit %d: %.600s", args, p.exit_code, p.err);
	snprintf(want, sizeof(want), "hvd: start-up: %d ranks, backend mpi, %d nodes\n", size, nodes);
	CHECK_CONTAINS(p.err, want);
	for (int r = 0; r < size; r++) {
		int node = r / per_node, local = r % per_node;
		snprintf(want, sizeof(want), "rank %d/%d local %d/%d backend mpi ", r, size, local, per_node);
		CHECK_MSG(line_starting(p.out, want, line, sizeof(line)) == 0, "no '%s' in %s", want, p.out);
		snprintf(want, sizeof(want), " node %d/%d", node, nodes);
		CHECK_CONTAINS(line, want);
		char host[16];
		snprintf(host, sizeof(host), "n%d", node + 1);
		snprintf(want, sizeof(want), "  %-4d  %-16s %-4d  %-5d", r, host, node, local);
		CHECK_CONTAINS(p.err, want);
	}
	test_proc_free(&p);
}

static void test_two_nodes_know_their_layout(void)
{
	check_layout(2, 2);
}

static void test_three_nodes_know_their_layout(void)
{
	check_layout(3, 2);
}

/* Rank 0 (on n1) is 1.5 s late; the exchange's PMIx fence must hold every
 * other node's ranks that long (a fence without PMIX_COLLECT_DATA returns
 * at once on other nodes, and a later exchange then misses data). */
static void test_exchange_is_a_barrier_across_nodes(void)
{
	struct test_proc p;
	char line[600], start[32];
	copy_test_program();
	CHECK(run_rt(0, "", "-N 3 -w n1,n2,n3 --ntasks-per-node=1", "exchange 1.5", 60, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.out, "ok exchange");
	for (int r = 0; r < 3; r++) {
		snprintf(start, sizeof(start), "exchange rank %d ", r);
		CHECK_MSG(line_starting(p.out, start, line, sizeof(line)) == 0, "no '%s': %s", start, p.out);
		CHECK_CONTAINS(line, " peers 0@n1/0 1@n2/1 2@n3/2");
		long fence_ms = field(line, "fence_ms ");
		if (r > 0)
			CHECK_MSG(fence_ms >= 1000, "rank %d on n%d left the fence after %ld ms, before "
				  "rank 0 arrived (1500 ms after its own start: the others start up to "
				  "0.5 s later on 2 cores)", r, r + 1, fence_ms);
	}
	test_proc_free(&p);
}

static void expect_ok(int as_nobody, const char *srun_args, const char *args, const char *ok,
		      int users)
{
	struct test_proc p;
	CHECK(run_rt(as_nobody, "", srun_args, args, 120, &p) == 0);
	/* head and tail: an MPI library's crash report and its reason (the
	 * system call's errno comes last) */
	int long_err = strlen(p.err) > 800;
	CHECK_MSG(p.exit_code == 0, "srun %s %s: exit %d: %.800s%s%s", srun_args, args, p.exit_code,
		  p.err, long_err ? " [...] " : "", long_err ? test_tail(p.err, 1200) : "");
	CHECK_MSG(strstr(p.out, ok) != NULL, "srun %s %s: no '%s': %.300s", srun_args, args, ok, p.out);
	CHECK_INT(count_of(p.err, as_nobody ? "user=nobody@n" : "user=root@n"), users);
	test_proc_free(&p);
}

static void test_allreduce_two_and_three_nodes(void)
{
	copy_test_program();
	expect_ok(0, "-N 2 -w n1,n2 --ntasks-per-node=2", "exact 4000000", "ok exact", 4);
	expect_ok(0, "-N 3 -w n1,n2,n3 --ntasks-per-node=2", "exact 4000000", "ok exact", 6);
	expect_ok(0, "-N 3 -w n1,n2,n3 --ntasks-per-node=1", "collect", "ok collect", 3);
	expect_ok(0, "-N 3 -w n1,n2,n3 --ntasks-per-node=2", "fused 200", "ok fused", 6);
}

/* `hvd-rt-test small` on 2 nodes with HVD_VOTE=vote: rank 0's checksum
 * into sum, and each rank's line must say the votes went by `by` and at
 * least `agreed` buckets were agreed. */
static void small_across_nodes(const char *vote, const char *by, unsigned long agreed, char *sum,
			       size_t len)
{
	struct test_proc p;
	char env[96];
	snprintf(env, sizeof(env), "HVD_CYCLE_TIME_MS=1000 HVD_VOTE=%s", vote);
	CHECK(run_rt(0, env, "-N 2 -w n1,n2 --ntasks-per-node=1", "small 12 1024 reversed sum", 90,
		     &p) == 0);
	CHECK_MSG(p.exit_code == 0, "HVD_VOTE=%s: exit %d: %.600s", vote, p.exit_code, p.err);
	for (int r = 0; r < 2; r++) {
		char want[64];
		unsigned long a = 0;
		snprintf(want, sizeof(want), "rank %d: ", r);
		const char *at = strstr(p.out, want);
		char line[200] = "";
		if (at)
			snprintf(line, sizeof(line), "%.*s", (int)strcspn(at, "\n"), at);
		CHECK_MSG(at && sscanf(at + strlen(want), "%lu buckets agreed", &a) == 1 && a >= agreed &&
			  strstr(line, by), "HVD_VOTE=%s: want %lu or more agreed by %s: %s", vote, agreed,
			  by, line);
	}
	const char *c = strstr(p.out, "checksum ");
	snprintf(sum, len, "%.25s", c ? c : "(none)");
	test_proc_free(&p);
}

/* The engines agree a repeated step across nodes on the data backend's
 * messages (auto, MPI) and on a TCP ring of their own, with the sums of
 * a run that plans every bucket through rank 0. */
static void test_repeated_steps_agreed_across_nodes(void)
{
	char off[32], by_auto[32], ring[32];
	copy_test_program();
	small_across_nodes("off", "votes by nothing", 0, off, sizeof(off));
	small_across_nodes("auto", "votes by messages", 11, by_auto, sizeof(by_auto));
	small_across_nodes("ring", "votes by ring", 11, ring, sizeof(ring));
	CHECK(strstr(off, "checksum ") == off);
	CHECK_STR(by_auto, off);
	CHECK_STR(ring, off);
}

/* Across nodes, on the data backend's messages and on the vote's own
 * ring: a tensor renamed inside an agreed step falls back to rank 0 and
 * is named as a mismatch; a rank that stops submitting in an agreed step
 * (and sleeps 30 s) is named by the stall inspector with its tensors. */
static void test_agreed_step_failures_named_across_nodes(void)
{
	static const char *const votes[] = { "messages", "ring" };
	copy_test_program();
	for (int k = 0; k < 2; k++) {
		struct test_proc p;
		char env[128];
		snprintf(env, sizeof(env), "HVD_CYCLE_TIME_MS=1000 HVD_VOTE=%s", votes[k]);
		CHECK(run_rt(0, env, "-N 2 -w n1,n2 --ntasks-per-node=1", "repeat 4 rename", 60,
			     &p) == 0);
		CHECK(p.exit_code != 0);
		CHECK_MSG(strstr(p.err, "hvd: tensor mismatch: 'rep.12' vs 'rep.renamed'"),
			  "HVD_VOTE=%s: %.900s", votes[k], p.err);
		test_proc_free(&p);
		snprintf(env, sizeof(env), "HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3 HVD_VOTE=%s", votes[k]);
		CHECK(run_rt(0, env, "-N 2 -w n1,n2 --ntasks-per-node=1 --kill-on-bad-exit=1",
			     "repeat 4 stop", 60, &p) == 0);
		CHECK(p.exit_code != 0);
		CHECK_MSG(strstr(p.err, "hvd: stalled: 'rank 1: [rep.0, rep.1, rep.2"),
			  "HVD_VOTE=%s: rank 1 and its tensors named: %.900s", votes[k], p.err);
		test_proc_free(&p);
	}
}

static void test_as_nobody_two_and_three_nodes(void)
{
	copy_test_program();
	expect_ok(1, "-N 2 -w n1,n2 --ntasks-per-node=2", "exchange 0", "ok exchange", 4);
	expect_ok(1, "-N 2 -w n1,n2 --ntasks-per-node=2", "exact 4000000", "ok exact", 4);
	expect_ok(1, "-N 3 -w n1,n2,n3 --ntasks-per-node=1", "exchange 0", "ok exchange", 3);
	expect_ok(1, "-N 3 -w n1,n2,n3 --ntasks-per-node=2", "exact 4000000", "ok exact", 6);
}

/* ---- failures ---- */

/* Waits for every node to be idle, starts `steps` on nodes n1..nN x 2
 * ranks in the background, waits for step 20 and every rank's pid line (or
 * for srun to end; a job still short of step 20 after 60 s is cancelled
 * and not_started=1 printed with sinfo and squeue), then runs ACTION
 * (shell; $t0 = ms timestamp just before it), waits for srun; prints rc=,
 * elapsed= (ms from the action to srun's end), left= (processes of the
 * copy) and idle= after AFTER (shell) and a wait for idle nodes. srun's
 * stderr goes to stderr. */
static int failure_run(int nodes, const char *env, const char *args, const char *action,
		       const char *after, int timeout_s, struct test_proc *p)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && (" NO_MCA MN_IDLE_SH "wait_idle 600; "
		 ": > out.txt; : > err.txt; "
		 "env %s srun " MN_LATE_JOB " -N %d -w 'n[1-%d]' --ntasks-per-node=2 ./hvd-rt-test %s "
		 "> out.txt 2> err.txt & s=$!; "
		 "for i in $(seq 600); do grep -q '^step 20$' out.txt && [ $(grep -c '^pid' out.txt) = %d ] "
		 "&& break; kill -0 $s 2> /dev/null || break; sleep 0.1; done; "
		 "if ! grep -q '^step 20$' out.txt && kill -0 $s 2> /dev/null; then "
		 MN_CANCEL_LATE_SH "fi; "
		 "pid_of() { awk -v r=$1 '$1 == \"pid\" && $4 == r {print $2}' out.txt; }; "
		 "t0=$(date +%%s%%N); grep -q '^step 20$' out.txt && { %s; }; wait $s; rc=$?; "
		 "t1=$(date +%%s%%N); %s; "
		 "cat err.txt >&2; sleep 1; echo left=$(pgrep -fc '^./hvd-rt-test %s'); "
		 "echo rc=$rc elapsed=$(( (t1 - t0) / 1000000 )); grep -E '^(step|checksum)' out.txt | tail -2; "
		 WAIT_IDLE ")",
		 test_tmpdir(), env, nodes, nodes, args, 2 * nodes, action, after, args);
	if (test_run(cmd, timeout_s, p) != 0)
		return -1;
	CHECK_MSG(!strstr(p->out, "not_started=1"), "the job did not reach step 20 within 60 s; "
		  "nothing was done to it: %.1500s ...%s", p->out, test_tail(p->err, 1500));
	return strstr(p->out, "not_started=1") ? -1 : 0;
}

static void test_sigkill_on_another_node_ends_the_job(void)
{
	struct test_proc p;
	copy_test_program();
	/* rank 3 runs on n2; rank 0 (the control plane's root) on n1 */
	CHECK(failure_run(2, "", "steps 1000000 10", "kill -KILL $(pid_of 3)", ":", 100, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 0 && ms < 10000, "job ended %ld ms after the kill", ms);
	CHECK_MSG(count_of(p.err, "hvd: rank 3 (host n2): 'control connection closed'") >= 1,
		  "no rank names rank 3 on n2: %.900s", p.err);
	CHECK_MSG(count_of(p.err, "lost: exited ranks 3 hosts n2\n") >= 1,   /* hvd_lost_ranks */
		  "no record of rank 3 on n2 as exited: %.900s", p.err);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured: srun ended %ld ms after kill -9 of rank 3 on n2 (rc %ld)\n", ms,
	       field(p.out, "rc="));
	test_proc_free(&p);
}

static void test_sigstop_on_another_node_is_named(void)
{
	struct test_proc p;
	copy_test_program();
	CHECK(failure_run(2, "HVD_TIMEOUT_S=4 HVD_STALL_WARNING_S=0", "steps 1000000 10",
			  "kill -STOP $(pid_of 3)", ":", 100, &p) == 0);
	CHECK(!p.timed_out);
	/* ranks 0, 1 (n1) and 2 (n2, beside the stopped one) name it */
	CHECK_MSG(count_of(p.err, "hvd: rank 3 (host n2): 'silent for ") == 3,
		  "the 3 live ranks name rank 3 on n2: %.900s", p.err);
	CHECK_MSG(count_of(p.err, "lost: silent ranks 3 hosts n2\n") == 3,
		  "the 3 live ranks' records name rank 3 on n2 as silent: %.900s", p.err);
	CHECK_CONTAINS(p.err, "no heartbeat ");
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 3500 && ms < 4000 + 15000, "job ended %ld ms after the stop", ms);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	printf("  measured: srun ended %ld ms after SIGSTOP of rank 3 on n2 (HVD_TIMEOUT_S=4, rc %ld)\n",
	       ms, field(p.out, "rc="));
	test_proc_free(&p);
}

static const char *cut_cmd(char *buf, size_t len, const char *verb, const char *node)
{
	snprintf(buf, len, "'%s/tests/slurm/multinode.sh' %s '%s' %s", test_src_dir(), verb,
		 test_cluster_dir(), node);
	return buf;
}

/* n2 (ranks 2, 3) cut off mid-allreduce for good: the runtime's deadline
 * (HVD_TIMEOUT_S=8) names ranks 2,3 on n2 on every reachable rank and the
 * job ends (hvd_abort_job: Slurm kills the step; srun gives up on n2 after
 * KillWait) long before Slurm notices the node (SlurmdTimeout=20: about
 * 30 s, facts 5.2). srun can exit 0 after a node failure, so its stderr is
 * checked for `Node failure` as well. */
static void test_network_cut_ends_the_job_before_slurm_notices(void)
{
	struct test_proc p;
	char action[1024], restore[1024];
	copy_test_program();
	cut_cmd(action, sizeof(action), "cut", "n2");
	cut_cmd(restore, sizeof(restore), "restore", "n2");
	CHECK(failure_run(3, "HVD_TIMEOUT_S=8 HVD_RT_TEST_ABORT=1", "steps 1000000 10", action,
			  restore, 150, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	CHECK_MSG(count_of(p.err, "hvd: ranks 2,3 (host n2): 'silent for ") == 4,
		  "the 4 reachable ranks (n1, n3) name ranks 2,3 on n2: %.1200s", p.err);
	CHECK_MSG(count_of(p.err, "lost: silent ranks 2,3 hosts n2,n2\n") == 4,
		  "the 4 reachable ranks' records: %.1200s", p.err);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 7500 && ms < 22000, "job ended %ld ms after the cut (Slurm: ~30000)", ms);
	CHECK_MSG(strstr(p.err, "Node failure") == NULL, "Slurm saw the node fail first: %.900s", p.err);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured: srun ended %ld ms after the cut of n2 (HVD_TIMEOUT_S=8, rc %ld)\n", ms,
	       field(p.out, "rc="));
	test_proc_free(&p);
}

/* n2 cut while rank 3 (n2) is late for step 25 and rank 2 (n2) is not:
 * the other ranks wait for rank 3, which went silent, and every silent
 * rank shares that cause, so the failure names ranks 2,3 on n2 (not
 * rank 3 alone, which sent a user to the wrong place). The cut comes 2 s
 * into the wait: after the nudge (1 s) has made every rank announce the
 * step, and 1 s ahead of the heartbeat deadline, so the stall, 8 s into
 * the wait, is what ends the job. */
static void test_cut_node_is_named_whole_when_one_rank_was_behind(void)
{
	struct test_proc p;
	char action[1024], restore[1024], cut[1024];
	copy_test_program();
	snprintf(action, sizeof(action), "for i in $(seq 100); do grep -q '^late$' out.txt && break; "
		 "sleep 0.1; done; sleep 2; %s", cut_cmd(cut, sizeof(cut), "cut", "n2"));
	cut_cmd(restore, sizeof(restore), "restore", "n2");
	CHECK(failure_run(2, "HVD_TIMEOUT_S=8 HVD_STALL_WARNING_S=0 HVD_RT_TEST_ABORT=1 "
			  "HVD_RT_TEST_LATE='3 25 60'", "steps 1000000 10", action, restore, 150, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	CHECK_MSG(count_of(p.err, "hvd: ranks 2,3 (host n2): 'silent for ") == 2 &&
		  count_of(p.err, "while the other ranks waited") == 2,
		  "ranks 0, 1 (n1) name ranks 2,3 on n2 for the stall: %.1500s", p.err);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	CHECK_CONTAINS(p.out, "idle=4/4");
	test_proc_free(&p);
}

/* A 4-second cut of n2 (shorter than HVD_TIMEOUT_S=15) in a 500-step
 * allreduce loop: the job goes on and every step's result, and so the
 * checksum, equals the uncut run's. */
static void test_short_cut_is_survived(void)
{
	struct test_proc p;
	char action[2048], cut[1024], restore[1024];
	copy_test_program();
	CHECK(failure_run(3, "HVD_TIMEOUT_S=15", "steps 500 10", ":", ":", 120, &p) == 0);
	CHECK_MSG(field(p.out, "rc=") == 0, "uncut run: %s %.600s", p.out, p.err);
	long uncut_ms = field(p.out, "elapsed=");
	const char *c = strstr(p.out, "checksum ");
	char want[64] = "checksum ?";
	if (c)
		snprintf(want, sizeof(want), "%.*s", (int)strcspn(c, "\n"), c);
	CHECK(c != NULL);
	test_proc_free(&p);
	snprintf(action, sizeof(action), "%s; sleep 4; echo steps_at_restore=$(grep -c '^step' out.txt); "
		 "%s; echo cut_ms=$(( ($(date +%%s%%N) - t0) / 1000000 ))",
		 cut_cmd(cut, sizeof(cut), "cut", "n2"), cut_cmd(restore, sizeof(restore), "restore", "n2"));
	CHECK(failure_run(3, "HVD_TIMEOUT_S=15", "steps 500 10", action, ":", 150, &p) == 0);
	CHECK_MSG(field(p.out, "rc=") == 0, "cut run: %s %.900s", p.out, p.err);
	CHECK_MSG(field(p.out, "cut_ms=") >= 4000, "the cut lasted %ld ms", field(p.out, "cut_ms="));
	long at_restore = field(p.out, "steps_at_restore=");
	CHECK_MSG(at_restore >= 21 && at_restore < 500, "%ld steps done when the link came back: "
		  "the cut did not fall inside the run", at_restore);
	CHECK_CONTAINS(p.out, want);
	CHECK_CONTAINS(p.out, "step 499\n");
	CHECK_MSG(strstr(p.err, "hvd: rank") == NULL && strstr(p.err, "hvd: ranks") == NULL,
		  "a rank failed: %.900s", p.err);
	CHECK_MSG(strstr(p.err, "Node failure") == NULL, "%.900s", p.err);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured: steps 20..499 took %ld ms with a 4 s cut of n2, %ld ms without\n",
	       field(p.out, "elapsed="), uncut_ms);
	test_proc_free(&p);
}

/* What a lost rank leaves the others under srun --mpi=pmix (Slurm
 * 22.05): a PMIx client that ends without PMIx_Finalize gets the whole
 * step killed about 1 s later, SIGKILL with no SIGTERM first (-K0 or
 * not): no time to save anything. Ranks that called PMIx_Finalize after
 * start-up outlive it, and srun ends with the lost rank's status. */
static void test_peers_outlive_a_lost_rank_only_after_pmix_finalize(void)
{
	struct test_proc p;
	const char *where = "-N 2 -w n1,n2 --ntasks-per-node=2";
	copy_test_program();
	CHECK(run_rt(0, "", where, "survive 0", 60, &p) == 0);
	long ms = (long)(p.seconds * 1000);
	CHECK_MSG(p.exit_code == 137 && count_of(p.out, "alive ") == 0 && ms < 4000,
		  "without PMIx_Finalize the step is killed within 4 s: exit %d after %ld ms: %s %.600s",
		  p.exit_code, ms, p.out, p.err);
	int termed = count_of(p.out, "sigterm ");
	test_proc_free(&p);
	CHECK(run_rt(0, "", where, "survive 1", 60, &p) == 0);
	CHECK_MSG(p.exit_code == 3 && count_of(p.out, "alive ") == 3,
		  "after PMIx_Finalize the 3 others live on: exit %d: %s %.600s", p.exit_code, p.out, p.err);
	printf("  measured: a rank lost without PMIx_Finalize: srun ended %ld ms after its start, %d "
	       "of 3 others saw a SIGTERM first; after PMIx_Finalize 3 of 3 lived on\n", ms, termed);
	test_proc_free(&p);
}

const struct test_case multinode_runtime_tests[] = {
	{ "two_nodes_know_their_layout", test_two_nodes_know_their_layout },
	{ "three_nodes_know_their_layout", test_three_nodes_know_their_layout },
	{ "exchange_is_a_barrier_across_nodes", test_exchange_is_a_barrier_across_nodes },
	{ "allreduce_two_and_three_nodes", test_allreduce_two_and_three_nodes },
	{ "as_nobody_two_and_three_nodes", test_as_nobody_two_and_three_nodes },
	{ "repeated_steps_agreed_across_nodes", test_repeated_steps_agreed_across_nodes },
	{ "agreed_step_failures_named_across_nodes", test_agreed_step_failures_named_across_nodes },
	{ 0 }
};

const struct test_case multinode_failure_tests[] = {
	{ "sigkill_on_another_node_ends_the_job", test_sigkill_on_another_node_ends_the_job },
	{ "sigstop_on_another_node_is_named", test_sigstop_on_another_node_is_named },
	{ "network_cut_ends_the_job_before_slurm_notices", test_network_cut_ends_the_job_before_slurm_notices },
	{ "cut_node_is_named_whole_when_one_rank_was_behind",
	  test_cut_node_is_named_whole_when_one_rank_was_behind },
	{ "short_cut_is_survived", test_short_cut_is_survived },
	{ "peers_outlive_a_lost_rank_only_after_pmix_finalize",
	  test_peers_outlive_a_lost_rank_only_after_pmix_finalize },
	{ 0 }
};
