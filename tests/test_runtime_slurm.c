/* test_runtime_slurm.c - libhvd on the real one-node Slurm cluster: the
 * build/hvd-rt-test program under `srun -n 1, 2, 4` (PMIx by default)
 * and standalone; exactness, fusion, collectives, the mismatch, kill and
 * stop failures, the no-PMIx hint, and the timeline's overlap with a
 * simulated backward pass.
 * What it does not do: check throughput (bench/allreduce.c does).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "runner.h"

/* For SAN builds: OpenMPI and PMIx unload their plugins at finalize and
 * are built without frame pointers, so their exit-time allocations show
 * up as leaks in "<unknown module>" that tests/lsan.supp cannot match.
 * Keeping the plugins loaded and unwinding slowly names the libraries.
 * Harmless for normal builds. */
#define RT_ENV "OMPI_MCA_mca_base_component_disable_dlclose=1 " \
	"PMIX_MCA_mca_base_component_disable_dlclose=1 " \
	"ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0\" "

static char *rt_cmd(const char *fmt, const char *a)
{
	char *cmd = NULL;
	if (asprintf(&cmd, fmt, test_build_dir(), a) < 0)
		return NULL;
	return cmd;
}

/* Runs `ENV srun -n N hvd-rt-test ARGS` in the case's temp dir. */
static char *ranks_cmd(const char *env, int n, const char *args)
{
	char *cmd = NULL;
	if (asprintf(&cmd, "cd '%s' && " RT_ENV "%s srun -n %d '%s/hvd-rt-test' %s", test_tmpdir(), env, n,
		     test_build_dir(), args) < 0)
		return NULL;
	return cmd;
}

static int run_ranks(const char *env, int n, const char *args, int timeout_s, struct test_proc *p)
{
	char *cmd = ranks_cmd(env, n, args);
	int rc = cmd ? test_run(cmd, timeout_s, p) : -1;
	free(cmd);
	return rc;
}

/* srun -n n hvd-rt-test args under env. */
struct ranks_spec {
	const char *env;
	int n;
	const char *args;
};

/* The runs of specs, as many at once as the test node's 8 CPUs hold,
 * for runs that wait (a cycle time, a stall limit) more than they
 * compute; ps[k] is specs[k]'s. */
#define NODE_CPUS 8
static void run_ranks_batched(const struct ranks_spec *specs, int count, int timeout_s,
			      struct test_proc *ps)
{
	for (int i = 0; i < count;) {
		int j = i, cpus = 0;
		while (j < count && (j == i || cpus + specs[j].n <= NODE_CPUS))
			cpus += specs[j++].n;
		char *cmds[NODE_CPUS] = { 0 };
		for (int k = i; k < j; k++)
			cmds[k - i] = ranks_cmd(specs[k].env, specs[k].n, specs[k].args);
		CHECK(test_run_together((const char *const *)cmds, j - i, timeout_s, &ps[i]) == 0);
		for (int k = i; k < j; k++)
			free(cmds[k - i]);
		i = j;
	}
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void expect_ok(const char *env, int n, const char *args, int timeout_s, const char *ok)
{
	struct test_proc p;
	CHECK(run_ranks(env, n, args, timeout_s, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "srun -n %d %s: exit %d: %.600s", n, args, p.exit_code, p.err);
	CHECK_MSG(strstr(p.out, ok) != NULL, "srun -n %d %s: no '%s' in stdout '%.200s'; stderr: %.600s",
		  n, args, ok, p.out, p.err);
	test_proc_free(&p);
}

static void test_standalone_is_one_rank(void)
{
	struct test_proc p;
	char *cmd = rt_cmd("env -u SLURM_JOB_ID -u SLURM_STEP_ID -u SLURM_NTASKS '%s/hvd-rt-test' %s", "init");
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "rank 0/1 local 0/1 backend self");
	CHECK_CONTAINS(p.out, "ok init");
	CHECK_CONTAINS(p.err, "hvd: start-up: 1 rank, backend self");
	test_proc_free(&p);
	free(cmd);
	cmd = rt_cmd("taskset -c 0 '%s/hvd-rt-test' %s", "init"); /* threads follow the mask */
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_CONTAINS(p.out, "backend self threads 1 node 0/1\n");
	test_proc_free(&p);
	free(cmd);
	cmd = rt_cmd("'%s/hvd-rt-test' %s", "collect");
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "ok collect");
	test_proc_free(&p);
	free(cmd);
	cmd = rt_cmd("'%s/hvd-rt-test' %s", "names");
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "refused: hvd: hvd_allreduce: '': every collective needs a tensor name\n");
	CHECK_CONTAINS(p.out, "refused: hvd: hvd_allreduce: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...': "
		       "tensor name longer than 127 bytes\n");
	CHECK_CONTAINS(p.out, "refused: hvd: hvd_allreduce: 'bbbb\\x0a" "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...': "
		       "tensor name longer than 127 bytes\n");
	CHECK_CONTAINS(p.out, "refused: hvd: hvd_allreduce: '(not printable)': tensor names are "
		       "printable ASCII\n");
	CHECK_CONTAINS(p.out, "ok names");
	test_proc_free(&p);
	free(cmd);
}

static void test_ranks_know_who_they_are(void)
{
	struct test_proc p;
	CHECK(run_ranks("", 4, "init", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	for (int r = 0; r < 4; r++) {
		char want[64];
		snprintf(want, sizeof(want), "rank %d/4 local %d/4 backend mpi", r, r);
		CHECK_CONTAINS(p.out, want);
	}
	CHECK_CONTAINS(p.err, "hvd: start-up: 4 ranks, backend mpi");
	CHECK_CONTAINS(p.err, test_hostname());
	test_proc_free(&p);
}

static void test_start_up_report_uses_the_plugin(void)
{
	char args[4200];
	snprintf(args, sizeof(args), "topology=%s/tests/topo/two-cpu-4gpu.xml", test_src_dir());
	CHECK_INT(test_cluster_plugstack(args), 0);
	struct test_proc p;
	CHECK(run_ranks("", 4, "init", 60, &p) == 0); /* plain srun: no --hvd, no binding */
	test_proc_free(&p);
	char *cmd = NULL;
	CHECK(asprintf(&cmd, RT_ENV "srun --hvd -n 4 --gres=gpu:4 '%s/hvd-rt-test' init",
		       test_build_dir()) > 0);
	CHECK(test_run(cmd, 60, &p) == 0);
	free(cmd);
	CHECK_MSG(p.exit_code == 0, "exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "hvd: start-up: 4 ranks, backend mpi"); /* fake GPUs: no CUDA device */
	const char *busids[4] = { "0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0" };
	for (int i = 0; i < 4; i++)
		CHECK_CONTAINS(p.err, busids[i]);
	CHECK(strstr(p.err, "share it") == NULL);
	CHECK(strstr(p.err, "something re-bound it") == NULL);
	CHECK_CONTAINS(p.out, "threads 1"); /* each task bound to its socket's one CPU */
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
}

static void test_exact_one_rank(void)
{
	expect_ok("", 1, "exact", 120, "ok exact");
}

static void test_exact_two_ranks(void)
{
	expect_ok("", 2, "exact", 200, "ok exact");
}

static void test_exact_four_ranks(void)
{
	expect_ok("", 4, "exact", 280, "ok exact");
}

static void test_exact_with_bf16_compression(void)
{
	/* the test values are small integers: exact through bf16 too */
	expect_ok("HVD_COMPRESSION=bf16", 2, "exact 4000000", 120, "ok exact");
}

/* Timeline lanes (tensor names) that contain `phase`, and those that do not. */
static void lanes_with_phase(cJSON *tl, const char *phase, int *with, int *without)
{
	int max_pid = 0;
	cJSON *ev;
	cJSON_ArrayForEach(ev, tl) {
		cJSON *pid = cJSON_GetObjectItem(ev, "pid");
		if (cJSON_IsNumber(pid) && pid->valueint > max_pid)
			max_pid = pid->valueint;
	}
	char *has = calloc((size_t)max_pid + 1, 1), *lane = calloc((size_t)max_pid + 1, 1);
	cJSON_ArrayForEach(ev, tl) {
		cJSON *pid = cJSON_GetObjectItem(ev, "pid"), *name = cJSON_GetObjectItem(ev, "name");
		if (!cJSON_IsNumber(pid) || !cJSON_IsString(name))
			continue;
		if (!strcmp(name->valuestring, "MPI_ALLREDUCE"))
			lane[pid->valueint] = 1;
		if (!strcmp(name->valuestring, phase))
			has[pid->valueint] = 1;
	}
	*with = *without = 0;
	for (int i = 0; i <= max_pid; i++)
		if (lane[i])
			*(has[i] ? with : without) += 1;
	free(has);
	free(lane);
}

static cJSON *read_timeline(const char *name)
{
	char *path = test_path(test_tmpdir(), name);
	char *text = test_read_file(path, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	free(text);
	free(path);
	return j;
}

static void test_many_small_tensors_fused(void)
{
	/* 300 tensors of 1..3000 floats, 8 KiB buckets: most share a bucket,
	 * the ones above 8 KiB go alone and in place */
	expect_ok("HVD_FUSION_THRESHOLD=8192 HVD_TIMELINE=tl.json", 4, "fused 300", 120, "ok fused");
	cJSON *tl = read_timeline("tl.json");
	CHECK(cJSON_IsArray(tl));
	int fused = 0, alone = 0;
	lanes_with_phase(tl, "MEMCPY_IN_FUSION_BUFFER", &fused, &alone);
	CHECK_MSG(fused > 100, "%d tensors went through the fusion buffer", fused);
	CHECK_MSG(alone > 10, "%d tensors went alone", alone);
	CHECK_INT(fused + alone, 300);
	cJSON_Delete(tl);
}

static void test_fusion_off_sends_each_tensor_alone(void)
{
	expect_ok("HVD_FUSION_THRESHOLD=0 HVD_TIMELINE=tl%r.json", 2, "fused 100", 120, "ok fused");
	cJSON *other = read_timeline("tl1.json"); /* %r: one file per rank */
	CHECK(cJSON_IsArray(other));
	cJSON_Delete(other);
	cJSON *tl = read_timeline("tl0.json");
	int fused = -1, alone = -1;
	lanes_with_phase(tl, "MEMCPY_IN_FUSION_BUFFER", &fused, &alone);
	CHECK_INT(fused, 0);
	CHECK_INT(alone, 100);
	cJSON_Delete(tl);
}

/* Slices of one buffer, one after another, are reduced in place (no
 * copy through the fusion buffer) on ranks 0 and 2, while ranks 1 and 3
 * copy their separate buffers: the same sums (the mode checks them). */
static void expect_in_place(const char *mode, const char *env)
{
	char args[64], ok[64], envs[160];
	snprintf(args, sizeof(args), "%s 120", mode);
	snprintf(ok, sizeof(ok), "ok %s", mode);
	snprintf(envs, sizeof(envs), "HVD_FUSION_THRESHOLD=65536 HVD_TIMELINE=tl%%r.json %s", env);
	expect_ok(envs, 4, args, 120, ok);
	for (int r = 0; r < 3; r++) {
		char name[16];
		snprintf(name, sizeof(name), "tl%d.json", r);
		cJSON *tl = read_timeline(name);
		int copied = -1, in_place = -1;
		CHECK(cJSON_IsArray(tl));
		lanes_with_phase(tl, "MEMCPY_IN_FUSION_BUFFER", &copied, &in_place);
		CHECK_MSG(r % 2 == 0 ? copied == 0 && in_place == 120 : copied > 100,
			  "%s: rank %d: %d tensors copied, %d in place", mode, r, copied, in_place);
		cJSON_Delete(tl);
	}
}

static void test_adjacent_slices_reduced_in_place(void)
{
	expect_in_place("slices", "");
	/* averaged buckets in place go in chunks, each scaled while the next
	 * is reduced: 4 KiB chunks make most of them several */
	expect_in_place("slices", "HVD_FUSION_CHUNK=4096");
}

/* Gradients submitted in backward order from one buffer lie last first:
 * rank 0's EXEC says so, ranks 0 and 2 reduce in place, ranks 1 and 3
 * copy into that layout. */
static void test_backward_slices_reduced_in_place(void)
{
	expect_in_place("backward-slices", "HVD_FUSION_CHUNK=4096");
}

static void test_sync_mode_still_correct(void)
{
	expect_ok("HVD_SYNC=1", 2, "fused 60", 120, "ok fused");
}

static void test_broadcast_allgatherv_barrier(void)
{
	expect_ok("", 1, "collect", 60, "ok collect");
	expect_ok("", 2, "collect", 60, "ok collect");
	expect_ok("", 4, "collect", 60, "ok collect");
}

static void test_mismatch_names_the_tensor_on_every_rank(void)
{
	struct test_proc p;
	CHECK(run_ranks("", 3, "mismatch", 60, &p) == 0);
	CHECK(p.exit_code != 0);
	int named = count_lines_with(p.err, "hvd: tensor mismatch: 'grad.common' vs 'grad.rank1.only'");
	CHECK_MSG(named == 3, "%d of 3 ranks name the tensors: %s", named,
		  strstr(p.err, "hvd: tensor") ? strstr(p.err, "hvd: tensor") : p.err);
	CHECK_CONTAINS(p.err, "rank 1 submitted allreduce 'grad.rank1.only'");
	test_proc_free(&p);
}

static void test_bad_setting_stops_every_rank(void)
{
	struct test_proc p;
	CHECK(run_ranks("HVD_CYCLE_TIME_MS=fast", 2, "init", 60, &p) == 0);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: HVD_CYCLE_TIME_MS: 'fast': not a number");
	test_proc_free(&p);
}

static void test_no_pmix_fails_at_once_with_hint(void)
{
	struct test_proc p;
	CHECK(run_ranks("", 2, "init", 60, &p) == 0); /* warm-up: resources free */
	test_proc_free(&p);
	char *cmd = NULL;
	CHECK(asprintf(&cmd, "srun --mpi=none -n 2 '%s/hvd-rt-test' init", test_build_dir()) > 0);
	CHECK(test_run(cmd, 60, &p) == 0);
	free(cmd);
	CHECK(p.exit_code != 0);
	CHECK_MSG(p.seconds < 10, "took %.1f s", p.seconds);
	CHECK_INT(count_lines_with(p.err, "hvd: this step has 2 tasks but no PMIx server"), 2);
	CHECK_CONTAINS(p.err, "run srun --mpi=pmix or set MpiDefault=pmix");
	test_proc_free(&p);
}

static void test_second_program_in_a_task_is_named(void)
{
	struct test_proc p;
	char *cmd = NULL;
	CHECK(asprintf(&cmd, RT_ENV "srun -n 2 sh -c \"'%s/hvd-rt-test' init > /dev/null 2>&1; "
		       "'%s/hvd-rt-test' init\"", test_build_dir(), test_build_dir()) > 0);
	CHECK(test_run(cmd, 60, &p) == 0);
	free(cmd);
	CHECK(p.exit_code != 0);
	CHECK_INT(count_lines_with(p.err, "one PMIx client per task: give each program its own srun step"), 2);
	CHECK_CONTAINS(p.err, "[rank 1/2 ");
	test_proc_free(&p);
}

/* Starts a 4-rank loop, sends SIG to rank 2 once all ranks run, waits.
 * Prints "rc=N elapsed=S" last. */
static int signal_run(const char *env, const char *sig, int rank, int timeout_s, struct test_proc *p)
{
	char *cmd = NULL;
	int rc = asprintf(&cmd,
		"cd '%s' && (: > out.txt; : > err.txt; " RT_ENV "%s srun -n 4 '%s/hvd-rt-test' loop > out.txt 2> err.txt & s=$!; "
		"for i in $(seq 300); do [ \"$(grep -c '^pid' out.txt)\" = 4 ] && break; sleep 0.1; done; "
		"t0=$(date +%%s%%N); kill -%s $(awk '$4 == %d {print $2}' out.txt); wait $s; rc=$?; "
		"t1=$(date +%%s%%N); cat err.txt >&2; sleep 1; "
		"echo left=$(pgrep -f '%s/[h]vd-rt-test loop' | wc -l); "
		"echo rc=$rc elapsed=$(( (t1 - t0) / 1000000 )))",
		test_tmpdir(), env, test_build_dir(), sig, rank, test_build_dir());
	if (rc < 0)
		return -1;
	rc = test_run(cmd, timeout_s, p);
	free(cmd);
	return rc;
}

static long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void test_sigkill_one_of_four_ends_the_job(void)
{
	struct test_proc p;
	CHECK(signal_run("", "KILL", 2, 90, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 0 && ms < 30000, "job ended %ld ms after the kill", ms);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	test_proc_free(&p);
}

/* Rank 0 names a stopped rank and ends the job through Slurm; the ranks
 * it told print the failure late (descheduled: rank 1 after 1.6 s, rank
 * 3 after 2.2 s) and still do: rank 0 waits for them (at most 3 s)
 * before Slurm kills the step, and rank 1, done first, leaves the end
 * to rank 0. Both delays
 * are past the 1.5 s of silence that marks a peer dead (HVD_TIMEOUT_S/2,
 * heartbeats every 0.5 s): nobody sends anything once the failure is
 * known, so neither side may count the silence that follows it. (A killed
 * rank would not do: Slurm's PMIx plugin cancels the step itself when a
 * task dies.) */
static void test_told_ranks_report_before_the_step_is_ended(void)
{
	struct test_proc p;
	CHECK(signal_run("HVD_TIMEOUT_S=3 HVD_HEARTBEAT_S=0.5 HVD_STALL_WARNING_S=0 "
			 "HVD_RT_TEST_ABORT=1 HVD_RT_TEST_REPORT_DELAY_S=1.6,0,2.2", "STOP", 2, 90, &p) == 0);
	CHECK(!p.timed_out);
	char want[200];
	snprintf(want, sizeof(want), "hvd: rank 2 (host %s): 'silent for ", test_hostname());
	CHECK_MSG(count_lines_with(p.err, want) == 3, "ranks 0, 1 and 3 name rank 2: %.1500s", p.err);
	CHECK_CONTAINS(p.err, "srun: Job step aborted");
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 0 && ms < 30000, "job ended %ld ms after the kill", ms);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	test_proc_free(&p);
}

static void test_sigstop_one_rank_is_named_by_the_others(void)
{
	struct test_proc p;
	CHECK(signal_run("HVD_TIMEOUT_S=4 HVD_STALL_WARNING_S=0", "STOP", 2, 90, &p) == 0);
	CHECK(!p.timed_out);
	char want[200];
	snprintf(want, sizeof(want), "hvd: rank 2 (host %s): 'silent for ", test_hostname());
	CHECK_MSG(count_lines_with(p.err, want) == 3, "the 3 live ranks name rank 2: %.900s", p.err);
	CHECK_CONTAINS(p.err, "no heartbeat ");
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	long ms = field(p.out, "elapsed=");
	CHECK_MSG(ms >= 3500 && ms < 4000 + 15000, "others exited %ld ms after the stop", ms);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	test_proc_free(&p);
}

static void test_stall_warning_names_the_late_rank(void)
{
	struct test_proc p;
	CHECK(run_ranks("HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=20", 3, "late 2.5", 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "ok late");
	CHECK_CONTAINS(p.err, "hvd: stall: 'rank 1: [late.grad]': other ranks submitted these");
	CHECK_INT(count_lines_with(p.err, "hvd: stall:"), 1);
	test_proc_free(&p);
}

/* 3 ranks that fail within max_s seconds, `want` said by the two ranks
 * that waited for rank 1. */
static void expect_waiters_name(const char *env, const char *args, double max_s,
				const char *want)
{
	struct test_proc p;
	CHECK(run_ranks(env, 3, args, 60, &p) == 0);
	CHECK(p.exit_code != 0);
	CHECK_MSG(p.seconds < max_s, "took %.1f s", p.seconds);
	CHECK_MSG(count_lines_with(p.err, want) == 2, "the waiting ranks say '%s': %.900s", want,
		  p.err);
	test_proc_free(&p);
}

static void test_stall_past_timeout_fails_every_rank(void)
{
	/* rank 1 itself is busy outside hvd and is ended by Slurm once the
	 * others exit */
	expect_waiters_name("HVD_STALL_WARNING_S=0 HVD_TIMEOUT_S=2", "late 30", 20,
			    "hvd: stalled: 'rank 1: [late.grad]'");
}

static void test_sigstop_rank_zero_is_named_by_the_others(void)
{
	struct test_proc p;
	CHECK(signal_run("HVD_TIMEOUT_S=3 HVD_STALL_WARNING_S=0", "STOP", 0, 90, &p) == 0);
	CHECK(!p.timed_out);
	char want[200];
	snprintf(want, sizeof(want), "hvd: rank 0 (host %s): 'silent for ", test_hostname());
	CHECK_MSG(count_lines_with(p.err, want) == 3, "the 3 other ranks name rank 0: %.900s", p.err);
	CHECK_MSG(field(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	CHECK_MSG(field(p.out, "left=") == 0, "processes left: %s", p.out);
	test_proc_free(&p);
}

static double span_ts(cJSON *ev)
{
	cJSON *ts = cJSON_GetObjectItem(ev, "ts");
	return cJSON_IsNumber(ts) ? ts->valuedouble : -1;
}

static void test_timeline_allreduce_overlaps_backward(void)
{
	expect_ok("HVD_TIMELINE=tl.json", 2, "backward 8", 120, "ok backward");
	cJSON *tl = read_timeline("tl.json");
	CHECK(cJSON_IsArray(tl));
	int compute_pid = -1, in_compute = 0;
	double last_compute_end = -1, first_allreduce = -1;
	int phases[4] = { 0 };
	const char *names[4] = { "NEGOTIATE_ALLREDUCE", "QUEUE", "ALLREDUCE", "MPI_ALLREDUCE" };
	cJSON *ev;
	cJSON_ArrayForEach(ev, tl) {
		cJSON *ph = cJSON_GetObjectItem(ev, "ph"), *name = cJSON_GetObjectItem(ev, "name");
		cJSON *pid = cJSON_GetObjectItem(ev, "pid"), *args = cJSON_GetObjectItem(ev, "args");
		if (!cJSON_IsString(ph) || !cJSON_IsNumber(pid))
			continue;
		cJSON *lane = args ? cJSON_GetObjectItem(args, "name") : NULL;
		if (!strcmp(ph->valuestring, "M") && cJSON_IsString(lane) && !strcmp(lane->valuestring, "compute"))
			compute_pid = pid->valueint;
		if (pid->valueint == compute_pid && !strcmp(ph->valuestring, "B"))
			in_compute = 1;
		if (pid->valueint == compute_pid && !strcmp(ph->valuestring, "E") && in_compute) {
			last_compute_end = span_ts(ev);
			in_compute = 0;
		}
		if (!strcmp(ph->valuestring, "B") && cJSON_IsString(name)) {
			for (int k = 0; k < 4; k++)
				phases[k] += !strcmp(name->valuestring, names[k]);
			if (!strcmp(name->valuestring, "MPI_ALLREDUCE") && first_allreduce < 0)
				first_allreduce = span_ts(ev);
		}
	}
	for (int k = 0; k < 4; k++)
		CHECK_MSG(phases[k] >= 1, "phase %s missing", names[k]);
	CHECK(compute_pid >= 0);
	CHECK(first_allreduce > 0 && last_compute_end > 0);
	CHECK_MSG(first_allreduce < last_compute_end, "first allreduce at %.0f us, last backward "
		  "compute ended at %.0f us: no overlap", first_allreduce, last_compute_end);
	cJSON_Delete(tl);
}

/* Per lane (tensor name starting with prefix): events named `name` with
 * phase ph ("B" spans, "X" ticks); min and max over the lanes, and the
 * number of lanes. */
static int count_per_lane(cJSON *tl, const char *prefix, const char *ph, const char *name,
			  int *min, int *max)
{
	enum { LANES = 4096 };
	static int count[LANES];
	static char ours[LANES];
	memset(count, 0, sizeof(count));
	memset(ours, 0, sizeof(ours));
	cJSON *ev;
	cJSON_ArrayForEach(ev, tl) {
		cJSON *p = cJSON_GetObjectItem(ev, "ph"), *n = cJSON_GetObjectItem(ev, "name");
		cJSON *pid = cJSON_GetObjectItem(ev, "pid"), *args = cJSON_GetObjectItem(ev, "args");
		if (!cJSON_IsString(p) || !cJSON_IsNumber(pid) || pid->valueint < 0 || pid->valueint >= LANES)
			continue;
		cJSON *lane = args ? cJSON_GetObjectItem(args, "name") : NULL;
		if (!strcmp(p->valuestring, "M") && cJSON_IsString(lane) &&
		    !strncmp(lane->valuestring, prefix, strlen(prefix)))
			ours[pid->valueint] = 1;
		if (!strcmp(p->valuestring, ph) && cJSON_IsString(n) && !strcmp(n->valuestring, name))
			count[pid->valueint]++;
	}
	int lanes = 0;
	*min = 1 << 30;
	*max = 0;
	for (int i = 0; i < LANES; i++)
		if (ours[i]) {
			lanes++;
			*min = count[i] < *min ? count[i] : *min;
			*max = count[i] > *max ? count[i] : *max;
		}
	return lanes;
}

/* Rank r's timeline (tl<r>.json) of `steps` steps of the 40 rep.N
 * tensors: each negotiated in step 1 only, the later steps agreed by the
 * engines, none started by rank 0 from its cache. Returns the timeline
 * for more checks (cJSON_Delete it). */
static cJSON *agreed_after_step_one(int r, int steps)
{
	char name[16];
	snprintf(name, sizeof(name), "tl%d.json", r);
	cJSON *tl = read_timeline(name);
	CHECK(cJSON_IsArray(tl));
	int lo, hi;
	CHECK_INT(count_per_lane(tl, "rep.", "B", "NEGOTIATE_ALLREDUCE", &lo, &hi), 40);
	CHECK_MSG(lo == 1 && hi == 1, "rank %d: %d..%d NEGOTIATE spans per tensor in %d steps "
		  "(want 1: step 1 only)", r, lo, hi, steps);
	count_per_lane(tl, "rep.", "X", "PLAN_AGREED", &lo, &hi);
	CHECK_MSG(lo == steps - 1 && hi == steps - 1, "rank %d: %d..%d agreed starts per tensor "
		  "(want steps 2-%d)", r, lo, hi, steps);
	count_per_lane(tl, "rep.", "X", "PLAN_CACHED", &lo, &hi);
	CHECK_MSG(hi == 0, "rank %d: %d cached starts through rank 0", r, hi);
	return tl;
}

static void test_plan_cache_skips_negotiation_after_step_one(void)
{
	/* a long cycle: a bucket never leaves partly submitted on a loaded machine */
	expect_ok("HVD_CYCLE_TIME_MS=1000 HVD_TIMELINE=tl%r.json", 2, "repeat 4 same", 120, "ok repeat");
	for (int r = 0; r < 2; r++) {
		cJSON *tl = agreed_after_step_one(r, 4);
		int lo, hi;
		CHECK_INT(count_per_lane(tl, "rep.", "B", "QUEUE", &lo, &hi), 40);
		CHECK_MSG(lo == 4 && hi == 4, "rank %d: %d..%d QUEUE spans per tensor", r, lo, hi);
		cJSON_Delete(tl);
	}
}

/* A barrier after every step: while the engines agree, a barrier is one
 * more vote (every rank voting "barrier" at the same position is the
 * barrier), so the steps after it are agreed too, none renegotiated
 * through rank 0. */
static void test_plan_cache_keeps_agreeing_across_barriers(void)
{
	expect_ok("HVD_CYCLE_TIME_MS=1000 HVD_TIMELINE=tl%r.json", 2, "repeat 6 barrier", 120,
		  "ok repeat");
	for (int r = 0; r < 2; r++) {
		cJSON *tl = agreed_after_step_one(r, 6);
		int lo, hi;
		CHECK_INT(count_per_lane(tl, "barrier", "X", "PLAN_AGREED", &lo, &hi), 1);
		CHECK_MSG(lo == 6, "rank %d: %d of 6 barriers agreed by the engines", r, lo);
		cJSON_Delete(tl);
	}
}

/* Rank 0 alone calls hvd_barrier between repeated steps: the votes differ
 * ("barrier" against the next bucket), rank 0 negotiates, and every rank
 * names the mismatch. */
static void test_plan_cache_lone_barrier_is_a_mismatch(void)
{
	struct test_proc p;
	CHECK(run_ranks("HVD_CYCLE_TIME_MS=1000 HVD_TIMEOUT_S=60", 2, "repeat 6 lonebarrier", 90, &p) ==
	      0);
	CHECK_MSG(p.exit_code != 0, "exit 0: %.300s", p.out);
	CHECK_MSG(count_lines_with(p.err, "hvd: tensor mismatch: 'barrier' vs 'rep.0'") == 2,
		  "want the mismatch from both ranks: %.900s", p.err);
	CHECK_MSG(p.seconds < 30, "took %.1f s (HVD_TIMEOUT_S is 60: named at once, not timed out)",
		  p.seconds);
	test_proc_free(&p);
}

static void test_plan_cache_relearns_a_changed_count(void)
{
	expect_ok("HVD_CYCLE_TIME_MS=1000 HVD_TIMELINE=tl.json", 2, "repeat 6 count", 120, "ok repeat");
	cJSON *tl = read_timeline("tl.json");
	int lo, hi;
	/* rep.7 grows in step 3 and shrinks back in step 4: the engines
	 * disagree with the cache there and rank 0 renegotiates from rep.7 on
	 * (rep.0-6 repeat, but their bucket is broken); steps 5 and 6 repeat
	 * step 4 and are agreed by the engines */
	CHECK_INT(count_per_lane(tl, "rep.", "B", "NEGOTIATE_ALLREDUCE", &lo, &hi), 40);
	CHECK_MSG(lo == 1 && hi == 3, "%d..%d NEGOTIATE spans per tensor (want 1 for rep.0-6, "
		  "3 for the others)", lo, hi);
	count_per_lane(tl, "rep.", "X", "PLAN_AGREED", &lo, &hi);
	CHECK_MSG(lo == 3 && hi == 3, "%d..%d agreed starts per tensor (want steps 2, 5, 6)", lo, hi);
	cJSON_Delete(tl);
}

/* Step 1 pauses between rep.19 and rep.20, so the plan learns two
 * buckets; the later steps submit all 40 at once and wait: the engines
 * agree on both cached buckets with one vote and run them as one (the
 * sums are checked every step). Without merging: 2 agreed per step. */
static void test_plan_cache_runs_buckets_submitted_together_as_one(void)
{
	struct test_proc p;
	CHECK(run_ranks("HVD_CYCLE_TIME_MS=100", 2, "repeat 6 split", 120, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.out, "ok repeat");
	for (int r = 0; r < 2; r++) {
		char want[64];
		snprintf(want, sizeof(want), "rank %d: ", r);
		const char *at = strstr(p.out, want);
		unsigned long agreed = at ? strtoul(at + strlen(want), NULL, 10) : 0;
		CHECK_MSG(at && agreed >= 5 && agreed < 10, "rank %d: %lu buckets agreed in steps 2-6 "
			  "(want 5..9: two cached buckets run as one at least once): %s", r, agreed,
			  p.out);
	}
	test_proc_free(&p);
}

static void expect_mismatch(const char *variant, const char *want)
{
	struct test_proc p;
	char args[64];
	snprintf(args, sizeof(args), "repeat 4 %s", variant);
	CHECK(run_ranks("", 3, args, 60, &p) == 0);
	CHECK(p.exit_code != 0);
	int named = count_lines_with(p.err, want);
	CHECK_MSG(named == 3, "%s: %d of 3 ranks say '%s': %.900s", variant, named, want, p.err);
	test_proc_free(&p);
}

static void test_plan_cache_changed_order_is_a_mismatch(void)
{
	expect_mismatch("order", "hvd: tensor mismatch: 'rep.5' vs 'rep.6': rank 0 submitted "
			"allreduce 'rep.5' (float32 x");
}

static void test_plan_cache_new_tensor_is_a_mismatch(void)
{
	expect_mismatch("new", "hvd: tensor mismatch: 'rep.21' vs 'rep.extra': rank 0 submitted "
			"allreduce 'rep.21' (float32 x");
}

/* Renamed inside a cached bucket, with the same size, dtype and op: the
 * name alone differs. */
static void test_plan_cache_renamed_tensor_is_a_mismatch(void)
{
	expect_mismatch("rename", "hvd: tensor mismatch: 'rep.12' vs 'rep.renamed': rank 0 "
			"submitted allreduce 'rep.12' (float32 x");
}

static void test_plan_cache_missing_tensor_is_a_stall(void)
{
	expect_waiters_name("HVD_STALL_WARNING_S=0 HVD_TIMEOUT_S=2", "repeat 4 missing", 25,
			    "hvd: stalled: 'rank 1: [rep.39]'");
}

static void test_plan_cache_rank_that_stops_submitting_is_named(void)
{
	/* rank 1 submits nothing in step 3 of a repeated sequence: the other
	 * engines wait in their agreement, tell rank 0, every engine is
	 * nudged to vote, and the stall inspector names rank 1; on every
	 * coordination plane */
	static const char *const votes[] = { "shm", "messages", "ring" };
	static const struct ranks_spec runs[] = {
		{ "HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3 HVD_VOTE=shm", 3, "repeat 4 stop" },
		{ "HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3 HVD_VOTE=messages", 3, "repeat 4 stop" },
		{ "HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3 HVD_VOTE=ring", 3, "repeat 4 stop" },
	};
	struct test_proc ps[3];
	run_ranks_batched(runs, 3, 60, ps);
	for (int k = 0; k < 3; k++) {
		struct test_proc p = ps[k];
		CHECK(p.exit_code != 0);
		CHECK_MSG(p.seconds < 25, "HVD_VOTE=%s: took %.1f s", votes[k], p.seconds);
		CHECK_MSG(count_lines_with(p.err, "hvd: stall: 'rank 1: [rep.0, rep.1, rep.2") >= 1,
			  "HVD_VOTE=%s: rank 0 warns about rank 1: %.900s", votes[k], p.err);
		CHECK_MSG(count_lines_with(p.err, "hvd: stalled: 'rank 1: [rep.0, rep.1, rep.2, rep.3, "
					   "rep.4, rep.5, ...]'") == 2,
			  "HVD_VOTE=%s: the waiting ranks name rank 1 and its tensors: %.900s", votes[k],
			  p.err);
		test_proc_free(&p);
	}
}

static void test_plan_cache_rank_that_shuts_down_is_named(void)
{
	/* rank 1 calls hvd_shutdown instead of step 3: its engine votes "no"
	 * on its way out, so the others hear of it at once, not after
	 * HVD_TIMEOUT_S */
	expect_waiters_name("HVD_TIMEOUT_S=20", "repeat 4 quit", 15,
			    "called hvd_shutdown: 'rank 1: [rep.0, rep.1, rep.2");
}

/* Rank 0's "checksum NNNN" line with n ranks. */
static void checksum_n(const char *env, int n, char *out, size_t len)
{
	struct test_proc p;
	CHECK(run_ranks(env, n, "checksum", 120, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %.600s", env, p.exit_code, p.err);
	const char *c = strstr(p.out, "checksum ");
	snprintf(out, len, "%.25s", c ? c : "(none)");
	test_proc_free(&p);
}

static void checksum_of(const char *env, char *out, size_t len)
{
	checksum_n(env, 2, out, len);
}

static void test_chunked_bucket_sums_equal_one_piece(void)
{
	char one[32], chunked[32], odd[32];
	checksum_of("HVD_FUSION_CHUNK=0", one, sizeof(one));
	checksum_of("HVD_FUSION_CHUNK=65536 HVD_TIMELINE=tl.json", chunked, sizeof(chunked));
	checksum_of("HVD_FUSION_CHUNK=4100", odd, sizeof(odd)); /* splits tensors mid-way */
	CHECK(strstr(one, "checksum ") == one);
	CHECK_STR(chunked, one);
	CHECK_STR(odd, one);
	/* one reduction span per tensor however many chunks its bucket had,
	 * and at most one copy in and out: a bucket that found one tensor
	 * ready (which depends on timing) reduces it in place, uncopied */
	cJSON *tl = read_timeline("tl.json");
	const char *phase[3] = { "MEMCPY_IN_FUSION_BUFFER", "MPI_ALLREDUCE", "MEMCPY_OUT_FUSION_BUFFER" };
	for (int k = 0; k < 3; k++) {
		int lo, hi;
		CHECK_INT(count_per_lane(tl, "checksum.", "B", phase[k], &lo, &hi), 150);
		CHECK_MSG((lo == 1 || (k != 1 && lo == 0)) && hi == 1, "%s: %d..%d spans per tensor",
			  phase[k], lo, hi);
	}
	cJSON_Delete(tl);
}

/* 4 ranks on one node, non-integer values: buckets of at most 8 KiB and
 * the one-piece buckets (about 500 KB) get the same bits. */
static void test_four_ranks_small_and_large_reductions_agree(void)
{
	char one[32], small[32];
	checksum_n("HVD_FUSION_CHUNK=0", 4, one, sizeof(one));
	checksum_n("HVD_FUSION_THRESHOLD=8192", 4, small, sizeof(small));
	CHECK(strstr(one, "checksum ") == one);
	CHECK_STR(small, one);
}

/* What hvd-rt-test small said: rank 0's checksum, the fewest buckets
 * any rank says the engines agreed on, how rank 0's votes travelled and
 * the most vote names any rank saw in /dev/shm. */
struct small_result {
	char sum[32];
	unsigned long agreed;
	char votes_by[32];
	int names;
};

static void small_parse(const struct ranks_spec *s, const struct test_proc *p, struct small_result *res)
{
	*res = (struct small_result){ .agreed = ~0ul };
	CHECK_MSG(p->exit_code == 0, "%s %s: exit %d: %.600s", s->env, s->args, p->exit_code, p->err);
	const char *c = strstr(p->out, "checksum ");
	snprintf(res->sum, sizeof(res->sum), "%.25s", c ? c : "(none)");
	for (int r = 0; r < s->n; r++) {
		char want[32], by[32] = "";
		unsigned long a = 0;
		int names = 0;
		snprintf(want, sizeof(want), "rank %d: ", r);
		const char *at = strstr(p->out, want);
		CHECK_MSG(at && sscanf(at + strlen(want), "%lu buckets agreed, votes by %31[a-z ], %d vote "
				       "names", &a, by, &names) == 3,
			  "%s: rank %d said nothing: %.300s", s->args, r, p->out);
		if (a < res->agreed)
			res->agreed = a;
		if (r == 0)
			snprintf(res->votes_by, sizeof(res->votes_by), "%s", by);
		if (names > res->names)
			res->names = names;
	}
}

/* hvd-rt-test small ARGS under each of envs[0..count), together. */
static void small_runs(const char *const *envs, int count, int n, const char *args,
		       struct small_result *res)
{
	char full[128];
	struct ranks_spec specs[4];
	struct test_proc p[4];
	CHECK_MSG(count >= 1 && count <= 4, "small_runs: %d runs (1 to 4)", count);
	if (count < 1 || count > 4)
		return;
	snprintf(full, sizeof(full), "small %s", args);
	for (int k = 0; k < count; k++)
		specs[k] = (struct ranks_spec){ envs[k], n, full };
	run_ranks_batched(specs, count, 120, p);
	for (int k = 0; k < count; k++) {
		small_parse(&specs[k], &p[k], &res[k]);
		test_proc_free(&p[k]);
	}
}

static void small_run(const char *env, int n, const char *args, struct small_result *res)
{
	small_runs(&env, 1, n, args, res);
}

/* A repeated small bucket (64 tensors, up to 64 KiB) is agreed among the
 * engines every step; its sums equal, bit for bit, those of a run with a
 * timeline and of one that waits for every tensor alone (HVD_SYNC), in
 * place forward or last first, through the fusion buffer, and averaged,
 * on 2 and 4 ranks. */
static void test_small_buckets_are_agreed(void)
{
	static const struct { int n; const char *args; } cases[] = {
		{ 2, "12 1024 forward sum" }, { 2, "12 1024 reversed sum" },
		{ 2, "12 1024 scattered sum" }, { 2, "12 64 forward average" },
		{ 2, "12 3072 reversed average" }, { 2, "12 16384 scattered average" },
		{ 4, "12 1024 forward sum" }, { 4, "12 3072 scattered average" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int n = cases[k].n;
		const char *args = cases[k].args;
		static const char *const envs[] = { "HVD_CYCLE_TIME_MS=1000",
			"HVD_CYCLE_TIME_MS=1000 HVD_TIMELINE=tl.json", "HVD_SYNC=1" };
		struct small_result r[3];
		small_runs(envs, 3, n, args, r);
		const struct small_result with = r[0], timeline = r[1], sync = r[2];
		CHECK(strstr(with.sum, "checksum ") == with.sum);
		CHECK_MSG(!strcmp(with.sum, timeline.sum) && !strcmp(with.sum, sync.sum),
			  "%d ranks %s: %s, %s with a timeline, %s under HVD_SYNC", n, args, with.sum,
			  timeline.sum, sync.sum);
		/* 11 repeated steps, each one bucket unless a loaded machine split it */
		CHECK_MSG(with.agreed >= 11, "%d ranks %s: %lu agreed buckets (want 11 or more)", n,
			  args, with.agreed);
	}
}

/* Every coordination plane (vote/vote.h) on one node, the data
 * backend MPI: auto takes shared memory; shm, messages (MPI_Iallreduce)
 * and a TCP ring of its own each agree the repeated bucket every step,
 * with the sums of a run that negotiates every bucket through rank 0
 * (off), bit for bit; no vote name is left in /dev/shm while it runs
 * (one run at a time: the node's jobs share one /dev/shm). */
static void test_small_buckets_are_agreed_on_every_vote_transport(void)
{
	static const struct { const char *vote, *by; } cases[] = {
		{ "auto", "shared memory" }, { "shm", "shared memory" }, { "messages", "messages" },
		{ "ring", "ring" }, { "off", "nothing" },
	};
	struct small_result off;
	small_run("HVD_CYCLE_TIME_MS=1000 HVD_VOTE=off", 2, "12 1024 reversed sum", &off);
	CHECK_MSG(off.agreed == 0, "HVD_VOTE=off: %lu buckets agreed", off.agreed);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char env[96];
		struct small_result r;
		snprintf(env, sizeof(env), "HVD_CYCLE_TIME_MS=1000 HVD_VOTE=%s", cases[k].vote);
		small_run(env, 2, "12 1024 reversed sum", &r);
		CHECK_MSG(!strcmp(r.votes_by, cases[k].by), "HVD_VOTE=%s: votes by '%s' (want '%s')",
			  cases[k].vote, r.votes_by, cases[k].by);
		CHECK_MSG(!strcmp(r.sum, off.sum), "HVD_VOTE=%s: %s, %s through rank 0", cases[k].vote,
			  r.sum, off.sum);
		CHECK_MSG(strcmp(cases[k].vote, "off") == 0 || r.agreed >= 11,
			  "HVD_VOTE=%s: %lu agreed buckets (want 11 or more)", cases[k].vote, r.agreed);
		CHECK_MSG(r.names == 0, "HVD_VOTE=%s: %d vote names in /dev/shm during the job",
			  cases[k].vote, r.names);
	}
}

/* When the votes differ (rank 0's tensors lie last first, the others' do
 * not), every rank runs the bucket in one layout, on tensors as they
 * were: the sums equal those of a run that plans every bucket through
 * rank 0 (HVD_VOTE=off) and of one with a timeline, and the engines
 * agree again after. */
static void test_votes_that_differ_leave_the_tensors_alone(void)
{
	static const struct { int n; const char *args; } cases[] = {
		{ 2, "12 3072 mixed average" }, { 4, "8 1024 mixed sum" }, { 2, "8 16400 forward sum" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int n = cases[k].n;
		const char *args = cases[k].args;
		static const char *const envs[] = { "HVD_CYCLE_TIME_MS=1000",
			"HVD_CYCLE_TIME_MS=1000 HVD_TIMELINE=tl.json", "HVD_CYCLE_TIME_MS=1000 HVD_VOTE=off" };
		struct small_result r[3];
		small_runs(envs, 3, n, args, r);
		const struct small_result with = r[0], timeline = r[1], off = r[2];
		CHECK(strstr(with.sum, "checksum ") == with.sum);
		CHECK_MSG(!strcmp(with.sum, off.sum) && !strcmp(with.sum, timeline.sum),
			  "%d ranks %s: %s, %s with a timeline, %s through rank 0", n, args, with.sum,
			  timeline.sum, off.sum);
		CHECK_MSG(with.agreed >= 5, "%d ranks %s: %lu agreed buckets (want 5 or more)", n, args,
			  with.agreed);
	}
}

/* The failures of a repeated step on 2 ranks, where the engines agree
 * on the 55 KiB bucket: rank 1 stops submitting (rank 0 has voted; rank
 * 1, nudged, votes "no"), calls hvd_shutdown instead, or leaves a tensor
 * out. Rank 0 names rank 1 as
 * with 3 ranks, well before HVD_TIMEOUT_S ends the job. */
static void test_failures_of_an_agreed_step_on_two_ranks(void)
{
	static const struct { const char *env, *args, *want; double max_s; } cases[] = {
		{ "HVD_STALL_WARNING_S=1 HVD_TIMEOUT_S=3", "repeat 4 stop",
		  "hvd: stalled: 'rank 1: [rep.0, rep.1, rep.2, rep.3, rep.4, rep.5, ...]'", 25 },
		{ "HVD_TIMEOUT_S=20", "repeat 4 quit", "called hvd_shutdown: 'rank 1: [rep.0, rep.1, rep.2",
		  15 },
		{ "HVD_STALL_WARNING_S=0 HVD_TIMEOUT_S=2", "repeat 4 missing",
		  "hvd: stalled: 'rank 1: [rep.39]'", 25 },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct ranks_spec runs[N];
	struct test_proc ps[N];
	for (int k = 0; k < N; k++)
		runs[k] = (struct ranks_spec){ cases[k].env, 2, cases[k].args };
	run_ranks_batched(runs, N, 60, ps);
	for (int k = 0; k < N; k++) {
		struct test_proc p = ps[k];
		CHECK_MSG(p.exit_code != 0, "%s: exit 0", cases[k].args);
		CHECK_MSG(p.seconds < cases[k].max_s, "%s: took %.1f s", cases[k].args, p.seconds);
		CHECK_MSG(count_lines_with(p.err, cases[k].want) == 1, "%s: rank 0 says '%s': %.900s",
			  cases[k].args, cases[k].want, p.err);
		test_proc_free(&p);
	}
}

const struct test_case runtime_slurm_tests[] = {
	{ "standalone_is_one_rank", test_standalone_is_one_rank },
	{ "ranks_know_who_they_are", test_ranks_know_who_they_are },
	{ "start_up_report_uses_the_plugin", test_start_up_report_uses_the_plugin },
	{ "exact_one_rank", test_exact_one_rank },
	{ "exact_two_ranks", test_exact_two_ranks },
	{ "exact_four_ranks", test_exact_four_ranks },
	{ "exact_with_bf16_compression", test_exact_with_bf16_compression },
	{ "many_small_tensors_fused", test_many_small_tensors_fused },
	{ "fusion_off_sends_each_tensor_alone", test_fusion_off_sends_each_tensor_alone },
	{ "sync_mode_still_correct", test_sync_mode_still_correct },
	{ "broadcast_allgatherv_barrier", test_broadcast_allgatherv_barrier },
	{ "adjacent_slices_reduced_in_place", test_adjacent_slices_reduced_in_place },
	{ "backward_slices_reduced_in_place", test_backward_slices_reduced_in_place },
	{ "mismatch_names_the_tensor_on_every_rank", test_mismatch_names_the_tensor_on_every_rank },
	{ "bad_setting_stops_every_rank", test_bad_setting_stops_every_rank },
	{ "no_pmix_fails_at_once_with_hint", test_no_pmix_fails_at_once_with_hint },
	{ "second_program_in_a_task_is_named", test_second_program_in_a_task_is_named },
	{ "sigkill_one_of_four_ends_the_job", test_sigkill_one_of_four_ends_the_job },
	{ "told_ranks_report_before_the_step_is_ended", test_told_ranks_report_before_the_step_is_ended },
	{ "sigstop_one_rank_is_named_by_the_others", test_sigstop_one_rank_is_named_by_the_others },
	{ "sigstop_rank_zero_is_named_by_the_others", test_sigstop_rank_zero_is_named_by_the_others },
	{ "stall_warning_names_the_late_rank", test_stall_warning_names_the_late_rank },
	{ "stall_past_timeout_fails_every_rank", test_stall_past_timeout_fails_every_rank },
	{ "timeline_allreduce_overlaps_backward", test_timeline_allreduce_overlaps_backward },
	{ "plan_cache_skips_negotiation_after_step_one", test_plan_cache_skips_negotiation_after_step_one },
	{ "plan_cache_keeps_agreeing_across_barriers", test_plan_cache_keeps_agreeing_across_barriers },
	{ "plan_cache_lone_barrier_is_a_mismatch", test_plan_cache_lone_barrier_is_a_mismatch },
	{ "plan_cache_relearns_a_changed_count", test_plan_cache_relearns_a_changed_count },
	{ "plan_cache_runs_buckets_submitted_together_as_one",
	  test_plan_cache_runs_buckets_submitted_together_as_one },
	{ "plan_cache_changed_order_is_a_mismatch", test_plan_cache_changed_order_is_a_mismatch },
	{ "plan_cache_new_tensor_is_a_mismatch", test_plan_cache_new_tensor_is_a_mismatch },
	{ "plan_cache_renamed_tensor_is_a_mismatch", test_plan_cache_renamed_tensor_is_a_mismatch },
	{ "plan_cache_missing_tensor_is_a_stall", test_plan_cache_missing_tensor_is_a_stall },
	{ "plan_cache_rank_that_stops_submitting_is_named",
	  test_plan_cache_rank_that_stops_submitting_is_named },
	{ "plan_cache_rank_that_shuts_down_is_named", test_plan_cache_rank_that_shuts_down_is_named },
	{ "chunked_bucket_sums_equal_one_piece", test_chunked_bucket_sums_equal_one_piece },
	{ "four_ranks_small_and_large_reductions_agree",
	  test_four_ranks_small_and_large_reductions_agree },
	{ "small_buckets_are_agreed", test_small_buckets_are_agreed },
	{ "small_buckets_are_agreed_on_every_vote_transport",
	  test_small_buckets_are_agreed_on_every_vote_transport },
	{ "votes_that_differ_leave_the_tensors_alone", test_votes_that_differ_leave_the_tensors_alone },
	{ "failures_of_an_agreed_step_on_two_ranks", test_failures_of_an_agreed_step_on_two_ranks },
	{ 0 }
};
