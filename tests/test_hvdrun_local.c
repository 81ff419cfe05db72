/* test_hvdrun_local.c - group "hvdrun-local": hvdrun -n N, ranks on this
 * machine without a scheduler. Its placement on every real topology of
 * tests/topo equals the plugin's for srun --hvd with N tasks granted the
 * node's GPUs (placement_compute asked as task.c asks it); on this
 * machine each rank runs on the CPUs and memory policy its placement
 * says; hvd-check passes on every rank; more ranks than GPUs are refused;
 * a killed or a stopped rank is named and ends the others; two local
 * ranks train the bits one rank accumulating two does, and Ctrl-C (the
 * agreed stop, exit 130) then --resume gives the bits of a run never
 * stopped; on an emulated node's four GPUs each rank gets its own and
 * NCCL opens on it (run by gpu-emulated in the emulated build).
 * What it does not do: run over ssh (env-launch-contrib tests that).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_compare.h"
#include "env_launch.h"
#include "placement.h"
#include "runner.h"
#include "topology.h"

static char *hvdrun_path(void)
{
	return test_path(test_build_dir(), "hvdrun");
}

/* The plugin's line for task i of n on topo, every GPU granted (Slurm's
 * ids 0..G-1, no device minors: the G-th GPU in bus order). */
static int plugin_line(const struct placement_topo *topo, int n, int i, enum hvd_bind bind,
		       char *line, size_t len)
{
	int gpu[PLACEMENT_MAX_GPUS], ids[PLACEMENT_MAX_GPUS], g = topo->gpu_count;
	char cpus[4096], err[512], visible[PLACEMENT_MAX_GPUS * 8] = "";
	for (int k = 0; k < g && k < PLACEMENT_MAX_GPUS; k++)
		ids[k] = k;
	topology_map_ids(topo, NULL, 0, ids, g, gpu);
	struct placement_request req = {
		.topo = topo, .granted_count = g, .granted_gpu = gpu, .local_id = i, .local_count = n,
		.allowed = topo->machine_cpus, .gpu_mode = HVD_GPU_FIRST, .bind = bind,
	};
	struct placement_result res;
	if (placement_compute(&req, &res, err, sizeof(err)))
		return snprintf(line, len, "%s", err), -1;
	for (int k = 0; k < res.order_count; k++)
		snprintf(visible + strlen(visible), sizeof(visible) - strlen(visible), "%s%d",
			 k ? "," : "", res.order[k]);
	placement_format_cpus(bind == HVD_BIND_NONE ? &topo->machine_cpus : &res.cpus, cpus,
			      sizeof(cpus));
	int own = res.granted_index >= 0 ? gpu[res.granted_index] : -1;
	char gpu_text[64];
	if (res.granted_index >= 0)
		snprintf(gpu_text, sizeof(gpu_text), "GPU %d (%s)", res.granted_index,
			 own >= 0 ? topo->gpus[own].busid : "bus id unknown");
	else
		snprintf(gpu_text, sizeof(gpu_text), "GPU none (bus id unknown)");
	snprintf(line, len, ": %s, NUMA %d, socket %d, CPUs %s, bind %s, gpu first, "
		 "CUDA_VISIBLE_DEVICES=%s\n", gpu_text, res.numa_node, res.socket, cpus,
		 options_bind_name(bind), g ? visible : "(unset)");
	return 0;
}

/* hvdrun --dry-run on xml, every mode: each rank's line is the plugin's. */
static void same_as_plugin(const char *xml, int *checked)
{
	static const enum hvd_bind modes[] = { HVD_BIND_NUMA, HVD_BIND_SOCKET, HVD_BIND_CORE,
					       HVD_BIND_NONE };
	struct placement_topo topo = { 0 };
	char err[512], cmd[PATH_MAX * 2 + 200], want[8192];
	struct test_proc p;
	char *prog = hvdrun_path();
	if (topology_load(xml, &topo, err, sizeof(err))) {
		CHECK_MSG(0, "%s", err);
		free(prog);
		return;
	}
	/* one rank per GPU, or two per socket on a machine without GPUs */
	int n = topo.gpu_count ? topo.gpu_count : 2 * topo.socket_count;
	if (n > PLACEMENT_MAX_GPUS)
		n = PLACEMENT_MAX_GPUS;
	for (size_t m = 0; n > 0 && m < sizeof(modes) / sizeof(modes[0]); m++) {
		snprintf(cmd, sizeof(cmd), "env -u CUDA_VISIBLE_DEVICES '%s' -n %d --topology '%s' "
			 "--hvd %s --dry-run -- true", prog, n, xml, options_bind_name(modes[m]));
		if (test_run(cmd, 30, &p))
			break;
		CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", cmd, p.exit_code, p.err);
		for (int i = 0; i < n; i++) {
			if (plugin_line(&topo, n, i, modes[m], want, sizeof(want))) {
				CHECK_MSG(strstr(p.err, want) != NULL, "%s: the plugin refused: %s, "
					  "hvdrun: %s", xml, want, p.err);
				continue;
			}
			char rank[32];
			snprintf(rank, sizeof(rank), "hvdrun: rank %d on ", i);
			const char *line = strstr(p.out, rank);
			const char *tail = line ? strchr(line + strlen(rank), ':') : NULL;
			CHECK_MSG(tail && !strncmp(tail, want, strlen(want)), "%s, bind %s, rank %d of "
				  "%d: the plugin says%s; hvdrun:\n%s", xml, options_bind_name(modes[m]),
				  i, n, want, p.out);
			(*checked)++;
		}
		test_proc_free(&p);
	}
	topology_free(&topo);
	free(prog);
}

static void test_placement_equals_the_plugins_on_real_topologies(void)
{
	char *dirs[2] = { test_path(test_src_dir(), "tests/topo/real"),
			  test_path(test_src_dir(), "tests/topo") };
	int files = 0, checked = 0;
	for (int d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;
		while (dir && (e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			if (len < 5 || strcmp(e->d_name + len - 4, ".xml"))
				continue;
			char *xml = test_path(dirs[d], e->d_name);
			same_as_plugin(xml, &checked);
			files++;
			free(xml);
		}
		if (dir)
			closedir(dir);
		free(dirs[d]);
	}
	CHECK_MSG(files >= 25, "only %d topologies found", files);
	printf("  measured: %d ranks on %d topologies, 4 bind modes each, placed as the plugin "
	       "places them\n", checked, files);
}

/* "KEY:\tVALUE" of text, or "". */
static void status_field(const char *text, const char *key, char *out, size_t len)
{
	const char *at = strstr(text, key);
	out[0] = '\0';
	if (at)
		sscanf(at + strlen(key), " %1023[^\n]", out);
	(void)len;
}

/* On this machine: each rank's affinity is what --dry-run planned (and
 * HVD_CPUS says), memory prefers its NUMA node (numa_maps "prefer:N";
 * under none the policy is untouched), the job secret is a 0600 file
 * that is gone afterwards. */
static void test_ranks_run_where_the_plan_puts_them(void)
{
	static const char *const modes[] = { "core", "numa", "none" };
	char *prog = hvdrun_path(), cmd[PATH_MAX * 2 + 600], want[128], got[1024], plan[4096];
	struct test_proc p, dry;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		snprintf(cmd, sizeof(cmd), "'%s' -n 2 --hvd %s --dry-run -- true", prog, modes[m]);
		CHECK(test_run(cmd, 30, &dry) == 0 && dry.exit_code == 0);
		snprintf(cmd, sizeof(cmd), "cd '%s' && TMPDIR='%s' '%s' -n 2 --hvd %s -- sh -c 'grep "
			 "Cpus_allowed_list /proc/self/status; echo cpus=$HVD_CPUS bind=$HVD_BIND; "
			 "head -1 /proc/self/numa_maps | cut -d\" \" -f2; stat -c mode=%%a "
			 "\"$HVD_SECRET_FILE\"'; ls", test_tmpdir(), test_tmpdir(), prog, modes[m]);
		if (test_run(cmd, 30, &p))
			break;
		CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", modes[m], p.exit_code, p.err);
		for (int r = 0; r < 2; r++) {
			char prefix[32], *line, rank_out[4096] = "";
			snprintf(prefix, sizeof(prefix), "[rank %d] ", r);
			for (line = strstr(p.out, prefix); line; line = strstr(line + 1, prefix))
				snprintf(rank_out + strlen(rank_out), sizeof(rank_out) - strlen(rank_out),
					 "%.*s\n", (int)strcspn(line + strlen(prefix), "\n"),
					 line + strlen(prefix));
			snprintf(want, sizeof(want), "hvdrun: rank %d on ", r);
			status_field(strstr(dry.out, want) ? strstr(dry.out, want) : "", "CPUs", plan,
				     sizeof(plan));
			plan[strcspn(plan, ",")] = '\0';
			status_field(rank_out, "Cpus_allowed_list:", got, sizeof(got));
			CHECK_MSG(!strcmp(got, plan), "%s, rank %d: runs on '%s', planned '%s'", modes[m],
				  r, got, plan);
			snprintf(want, sizeof(want), "cpus=%s bind=%s\n", plan, modes[m]);
			CHECK_CONTAINS(rank_out, want);
			CHECK_CONTAINS(rank_out, strcmp(modes[m], "none") ? "prefer:0\n" : "default\n");
			CHECK_CONTAINS(rank_out, "mode=600\n");
		}
		CHECK_MSG(!strstr(p.out, "hvdrun-secret"), "the secret file is left: %s", p.out);
		test_proc_free(&p);
		test_proc_free(&dry);
	}
	free(prog);
}

static void test_hvd_check_passes_on_every_rank(void)
{
	char cmd[PATH_MAX * 2 + 100];
	struct test_proc p;
	char *prog = hvdrun_path();
	snprintf(cmd, sizeof(cmd), "HVD_TIMEOUT_S=30 '%s' -n 2 -- '%s/hvd-check'", prog,
		 test_build_dir());
	if (test_run(cmd, 90, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, p.err);
		CHECK_CONTAINS(p.out, "[rank 0] hvd-check: 2 tasks on 1 nodes");
		CHECK_CONTAINS(p.out, "[rank 0] hvd-check: PASS: 1 of 1 nodes");
		CHECK_MSG(strstr(p.out, "0/2") && strstr(p.out, "1/2"), "a rank's row is missing: %s",
			  p.out);
		CHECK_MSG(!strstr(p.out, "FAIL"), "%s", p.out);
		test_proc_free(&p);
	}
	free(prog);
}

/* One line each, nothing started. */
static void test_refusals_in_one_line(void)
{
	static const struct {
		const char *env, *args, *err;
	} cases[] = {
		{ "", "-n 5 --topology %s -- true",
		  "hvdrun: -n: '5': 4 GPUs here: one rank per GPU (give -n 4 or fewer)\n" },
		{ "CUDA_VISIBLE_DEVICES=1,3", "-n 3 --topology %s -- true",
		  "hvdrun: -n: '3': 2 GPUs here (CUDA_VISIBLE_DEVICES '1,3'): one rank per GPU "
		  "(give -n 2 or fewer)\n" },
		{ "", "-n 2 --topology %s", "hvdrun: --: '': no command after it (hvdrun --help)\n" },
		{ "", "--topology %s -- true",
		  "hvdrun: -n: '': missing: how many ranks on this machine (hvdrun --help)\n" },
		{ "", "-n 0 --topology %s -- true",
		  "hvdrun: -n: '0': unknown option, or a value it does not take (hvdrun --help)\n" },
		{ "", "-n 2.0 --topology %s -- true",
		  "hvdrun: -n: '2.0': unknown option, or a value it does not take (hvdrun --help)\n" },
		{ "", "-n 2 -g 1e1 --topology %s -- true",
		  "hvdrun: -g: '1e1': unknown option, or a value it does not take (hvdrun --help)\n" },
	};
	char *prog = hvdrun_path(), *xml = test_path(test_src_dir(), "tests/topo/two-cpu-4gpu.xml");
	char args[PATH_MAX + 100], cmd[PATH_MAX * 3 + 200];
	struct test_proc p;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), cases[i].args, xml);
		snprintf(cmd, sizeof(cmd), "env -u CUDA_VISIBLE_DEVICES %s '%s' %s", cases[i].env, prog,
			 args);
		if (test_run(cmd, 30, &p))
			break;
		CHECK_MSG(p.exit_code == 2, "%s: exit %d", args, p.exit_code);
		CHECK_STR(p.err, cases[i].err);
		CHECK_STR(p.out, "");
		test_proc_free(&p);
	}
	free(xml);
	free(prog);
}

/* hvdrun ENV -n N -- CMD (each rank first prints "pid P rank R"), then
 * ACTION (shell; $h: hvdrun, $r1: rank 1's pid) once every rank has said
 * so; waits up to limit_s. Prints rc=, ms= (ACTION to the end) and left=
 * (copies of the rank's program still running, then killed). */
static int hvdrun_then(const char *env, int n, const char *args, const char *action, int limit_s,
		       struct test_proc *p)
{
	const char *t = test_tmpdir();
	char *prog = hvdrun_path(), line[8192];
	snprintf(line, sizeof(line), "cd '%s' && cp '%s/hvd-rt-test' rtloop && (env "
		 "--default-signal=INT %s '%s' -n %d %s -- '%s/rtloop' loop > run.out 2> run.err & "
		 "h=$!; for i in $(seq 400); do [ \"$(grep -c '] pid ' run.out)\" = %d ] && break; "
		 "sleep 0.05; done; r1=$(awk '/^.rank 1. pid/ { print $4 }' run.out); "
		 "t0=$(date +%%s%%N); %s; for i in $(seq %d); do kill -0 $h 2> /dev/null || break; "
		 "sleep 0.05; done; t1=$(date +%%s%%N); if kill -0 $h 2> /dev/null; then "
		 "echo rc=running; kill -KILL $h; else wait $h; echo rc=$?; fi; "
		 "echo ms=$(((t1 - t0) / 1000000)); sleep 1; echo left=$(pgrep -f '^%s/rtloop' | wc -l); "
		 "pkill -KILL -f '^%s/rtloop'; cat run.err >&2)", t, test_build_dir(), env, prog, n,
		 args, t, n, action, limit_s * 20, t, t);
	free(prog);
	return test_run(line, limit_s + 30, p);
}

static long field_of(const char *out, const char *key)
{
	const char *s = strstr(out, key);
	return s ? strtol(s + strlen(key), NULL, 10) : -1;
}

static void test_killed_rank_is_named_and_ends_the_others(void)
{
	struct test_proc p;
	if (hvdrun_then("HVD_TIMEOUT_S=30", 3, "-g 5", "kill -KILL $r1", 20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=137\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	CHECK_MSG(field_of(p.out, "ms=") < 8000, "hvdrun ended %ld ms after kill -9 of rank 1",
		  field_of(p.out, "ms="));
	CHECK_CONTAINS(p.err, "hvdrun: rank 1 (pid ");
	CHECK_CONTAINS(p.err, ") was killed by SIGKILL: ending every rank (SIGTERM; SIGKILL after 5 s)");
	CHECK_CONTAINS(p.out, "left=0\n");
	printf("  measured: hvdrun ended %ld ms after kill -9 of rank 1 of 3\n", field_of(p.out, "ms="));
	test_proc_free(&p);
}

/* The others name it after HVD_TIMEOUT_S (4 s) and fail; hvdrun ends it. */
static void test_stopped_rank_is_named_within_the_stall_limit(void)
{
	struct test_proc p;
	if (hvdrun_then("HVD_TIMEOUT_S=4", 3, "-g 5", "kill -STOP $r1", 25, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=1\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	long ms = field_of(p.out, "ms=");
	CHECK_MSG(ms >= 3500 && ms < 9000, "hvdrun ended %ld ms after SIGSTOP of rank 1 "
		  "(HVD_TIMEOUT_S=4)", ms);
	CHECK_CONTAINS(p.err, "'silent for ");
	CHECK_CONTAINS(p.err, "hvd: rank 1 (host ");
	CHECK_CONTAINS(p.err, "exited with status 1: ending every rank");
	CHECK_CONTAINS(p.out, "left=0\n");
	printf("  measured: hvdrun ended %ld ms after SIGSTOP of rank 1 (HVD_TIMEOUT_S=4)\n", ms);
	test_proc_free(&p);
}

/* Ctrl-C while a rank is stopped: every rank ends, hvdrun exits 130. */
static void test_ctrl_c_ends_every_rank_with_130(void)
{
	struct test_proc p;
	if (hvdrun_then("HVD_TIMEOUT_S=60", 2, "-g 5", "kill -STOP $r1; sleep 0.3; kill -INT $h",
			20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=130\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	CHECK_MSG(field_of(p.out, "ms=") < 8000, "hvdrun ended %ld ms after Ctrl-C",
		  field_of(p.out, "ms="));
	CHECK_CONTAINS(p.err, "hvdrun: SIGINT: ending every rank (SIGTERM: chexnet saves a checkpoint");
	CHECK_CONTAINS(p.out, "left=0\n");
	test_proc_free(&p);
}

/* 5 steps: one epoch, as env-launch's equality cases (--steps of a later
 * argument wins) */
/* Ranks that ignore SIGTERM: a second Ctrl-C kills them at once, long
 * before the 30 s grace. */
static void test_second_ctrl_c_kills_at_once(void)
{
	char cmd[PATH_MAX * 2 + 1024], *prog = hvdrun_path();
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && (env --default-signal=INT '%s' -n 2 -g 30 -- sh -c "
		 "'trap \"\" TERM; echo up; while :; do sleep 0.1; done' > o 2> e & h=$!; "
		 "for i in $(seq 200); do [ \"$(grep -c up o)\" = 2 ] && break; sleep 0.05; done; "
		 "kill -INT $h; sleep 0.5; t0=$(date +%%s%%N); kill -INT $h; wait $h; echo rc=$?; "
		 "echo ms=$((($(date +%%s%%N) - t0) / 1000000)); cat e >&2)", test_tmpdir(), prog);
	if (test_run(cmd, 60, &p) == 0) {
		CHECK_MSG(strstr(p.out, "rc=130\n"), "%s %s", p.out, p.err);
		CHECK_MSG(field_of(p.out, "ms=") < 3000, "the second Ctrl-C ended them after %ld ms",
			  field_of(p.out, "ms="));
		CHECK_CONTAINS(p.err, "hvdrun: SIGINT again: killing every rank\n");
		test_proc_free(&p);
	}
	free(prog);
}

/* hvdrun killed outright: no rank outlives it. */
static void test_ranks_die_with_a_killed_hvdrun(void)
{
	struct test_proc p;
	if (hvdrun_then("HVD_TIMEOUT_S=60", 2, "", "kill -KILL $h", 10, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=137\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	CHECK_CONTAINS(p.out, "left=0\n");
	test_proc_free(&p);
}

#define TRAIN_ARGS "--data shards --size 32 --threads 1 --loader-threads 1 --optimizer sgd " \
	"--lr 0.001 --steps 5 --batch 8 --progress-every 1"

/* `hvdrun -n 2 -- chexnet train ... ARGS` in tmpdir; its exit status. */
static int train_two(const char *args, const char *action)
{
	char cmd[PATH_MAX + 2048];
	struct test_proc p;
	char *prog = hvdrun_path();
	snprintf(cmd, sizeof(cmd), "cd '%s' && (env --default-signal=INT HVD_TIMEOUT_S=60 '%s' -n 2 "
		 "-- ./chexnet train " TRAIN_ARGS " %s > train.out 2> train.err & h=$!; %s; wait $h; "
		 "echo rc=$?; cat train.err >&2)", test_tmpdir(), prog, args, action);
	free(prog);
	if (test_run(cmd, 300, &p))
		return -1;
	int rc = (int)field_of(p.out, "rc=");
	CHECK_MSG(rc == 0 || rc == 130, "hvdrun -n 2 -- chexnet train %s: rc %d: %s", args, rc,
		  test_tail(p.err, 1200));
	test_proc_free(&p);
	return rc;
}

static void test_two_ranks_train_as_one_accumulating_and_resume_bit_exact(void)
{
	if (env_launch_data())
		return;
	CHECK_INT(train_two("--out whole", ":"), 0);
	char cmd[PATH_MAX + 512];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && ./chexnet train " TRAIN_ARGS " --accumulate 2 --out acc",
		 test_tmpdir());
	if (test_run(cmd, 240, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "one rank, --accumulate 2: exit %d: %s", p.exit_code,
			  test_tail(p.err, 900));
		test_proc_free(&p);
	}
	double same = ckpt_max_rel_diff("whole", "acc");
	CHECK_MSG(same == 0, "hvdrun -n 2 vs --accumulate 2: max rel diff %.3g, want 0", same);
	/* Ctrl-C once rank 0 has reported step 3: the agreed stop */
	CHECK_INT(train_two("--out stopped", "for i in $(seq 1200); do grep -q 'step 2/' train.err "
			    "&& break; sleep 0.05; done; kill -INT $h"), 130);
	char *err = test_path(test_tmpdir(), "train.err"), *text = test_read_file(err, NULL), more[64];
	const char *at = text ? strstr(text, "stopped at epoch 1 step ") : NULL;
	long done = at ? strtol(at + strlen("stopped at epoch 1 step "), NULL, 10) : -1;
	CHECK_MSG(text && strstr(text, "hvdrun: SIGINT: ending every rank") && done > 0 && done < 5,
		  "%s", text ? test_tail(text, 900) : "");
	free(text);
	free(err);
	/* --steps counts this session's steps: the rest of the 5 */
	snprintf(more, sizeof(more), "--resume stopped --steps %ld", 5 - done);
	if (done > 0 && done < 5)
		CHECK_INT(train_two(more, ":"), 0);
	double resumed = ckpt_max_rel_diff("stopped", "whole");
	CHECK_MSG(resumed == 0, "stopped + --resume vs never stopped: max rel diff %.3g, want 0",
		  resumed);
}

/* A host file instead of -n: the ssh launcher (HVDRUN_SSH; installed, the
 * copy of contrib/hvdrun beside the helpers) gets every argument. */
static void test_a_host_file_goes_to_the_ssh_launcher(void)
{
	char cmd[PATH_MAX * 4], *prog = hvdrun_path();
	struct test_proc p;
	if (env_launch_secret("secret")) {
		free(prog);
		return;
	}
	snprintf(cmd, sizeof(cmd), "cd '%s' && printf '127.0.0.1\\n127.0.0.1\\n' > hosts && "
		 "HVDRUN_SSH='%s/contrib/hvdrun' HVDRUN_RSH='%s/tests/local_rsh.sh' '%s' -g 1 -p %d "
		 "-s secret hosts -- sh -c 'echo started $HVD_RANK of $HVD_SIZE'", test_tmpdir(),
		 test_src_dir(), test_src_dir(), prog, env_launch_port());
	if (test_run(cmd, 60, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 900));
		CHECK_CONTAINS(p.out, "started 0 of 2");
		CHECK_CONTAINS(p.out, "started 1 of 2");
		test_proc_free(&p);
	}
	snprintf(cmd, sizeof(cmd), "HVDRUN_SSH=/nonexistent/hvdrun-ssh '%s' hosts -- true", prog);
	if (test_run(cmd, 10, &p) == 0) {
		CHECK_INT(p.exit_code, 2);
		CHECK_STR(p.err, "hvdrun: '/nonexistent/hvdrun-ssh': No such file or directory (the ssh "
			  "launcher)\n");
		test_proc_free(&p);
	}
	free(prog);
}

/* Four ranks on the four GPUs of an emulated node (HVD_EMU_TOPOLOGY: the
 * emulated CUDA runtime's devices come from the same XML): each sees its
 * own GPU first, names it in HVD_GPU_BUSID, and the NCCL backend opens on
 * it (cudaDeviceGetByPCIBusId, a communicator of 4). Skipped where CUDA has no device: the
 * gpu-emulated group runs it in the emulated build. */
static void test_emulated_gpus_each_rank_on_its_own(void)
{
	char *prog = hvdrun_path(), *xml = test_path(test_src_dir(), "tests/topo/two-cpu-4gpu.xml");
	char cmd[PATH_MAX * 4];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u CUDA_VISIBLE_DEVICES HVD_EMU_TOPOLOGY='%s' "
		 "HVD_BACKEND=nccl HVD_TIMEOUT_S=30 '%s' -n 4 --topology '%s' -- sh -c 'echo "
		 "\"visible=$CUDA_VISIBLE_DEVICES busid=$HVD_GPU_BUSID\"; exec \"$0\" init' "
		 "'%s/hvd-rt-test'", test_tmpdir(), xml, prog, xml, test_build_dir());
	if (test_run(cmd, 120, &p) == 0) {
		if (strstr(p.err, "CUDA driver version is insufficient") || strstr(p.err, "no CUDA"))
			test_skip("no CUDA device for NCCL here: %.200s", p.err);
		else {
			static const char *const want[] = {
				"[rank 0] visible=0,1,2,3 busid=0000:3b:00.0\n",
				"[rank 1] visible=1,0,2,3 busid=0000:5e:00.0\n",
				"[rank 2] visible=2,0,1,3 busid=0000:86:00.0\n",
				"[rank 3] visible=3,0,1,2 busid=0000:af:00.0\n",
			};
			CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 1200));
			for (int r = 0; r < 4; r++)
				CHECK_CONTAINS(p.out, want[r]);
			CHECK_CONTAINS(p.err, "hvd: start-up: 4 ranks, backend nccl");
			for (int r = 0; r < 4; r++) {
				char line[64];
				snprintf(line, sizeof(line), "[rank %d] rank %d/4 local %d/4 backend nccl", r,
					 r, r);
				CHECK_CONTAINS(p.out, line);
			}
			CHECK_CONTAINS(p.out, "[rank 0] ok init");
		}
		test_proc_free(&p);
	}
	free(xml);
	free(prog);
}

/* --resume on another rank count without --accumulate: chexnet keeps
 * the run's micro-batches per step itself (2 ranks x 1 -> 1 rank x 2:
 * the bits of a run never stopped), and where no accumulation keeps
 * them (3 ranks) the change of the global batch is refused as any
 * other, without --allow-changes. */
static void test_resume_on_other_ranks_keeps_the_global_batch(void)
{
	char cmd[PATH_MAX * 2 + 512], *prog = hvdrun_path();
	struct test_proc p;
	if (env_launch_data()) {
		free(prog);
		return;
	}
	CHECK_INT(train_two("--out whole", ":"), 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' -n 2 -- ./chexnet train " TRAIN_ARGS " --steps 2 "
		 "--out part > /dev/null 2>&1 && ./chexnet train --resume part --steps 3 --quiet && "
		 "cp -r part part3 && '%s' -n 3 -- ./chexnet train --resume part3 --steps 1 --quiet",
		 test_tmpdir(), prog, prog);
	if (test_run(cmd, 300, &p) == 0) {
		CHECK_MSG(p.exit_code == 1, "the 3-rank resume: exit %d: %s", p.exit_code,
			  test_tail(p.err, 900));
		CHECK_CONTAINS(p.err, "chexnet: --resume: 'part': 1 rank, 2 when it stopped: "
			       "--accumulate 2 keeps its global batch (2 micro-batches per step)\n");
		CHECK_CONTAINS(p.err, "'part3': 3 ranks, 1 when it stopped: no --accumulate keeps its 2 "
			       "micro-batches per step; 1 gives 3, the nearest");
		CHECK_CONTAINS(p.err, "--allow-changes accepts that");
		test_proc_free(&p);
	}
	double diff = ckpt_max_rel_diff("part", "whole");
	CHECK_MSG(diff == 0, "2 ranks, then 1 rank resumed: max rel diff %.3g from 2 ranks "
		  "throughout, want 0", diff);
	free(prog);
}

const struct test_case hvdrun_local_tests[] = {
	{ "resume_on_other_ranks_keeps_the_global_batch",
	  test_resume_on_other_ranks_keeps_the_global_batch },
	{ "emulated_gpus_each_rank_on_its_own", test_emulated_gpus_each_rank_on_its_own },
	{ "a_host_file_goes_to_the_ssh_launcher", test_a_host_file_goes_to_the_ssh_launcher },
	{ "placement_equals_the_plugins_on_real_topologies",
	  test_placement_equals_the_plugins_on_real_topologies },
	{ "ranks_run_where_the_plan_puts_them", test_ranks_run_where_the_plan_puts_them },
	{ "hvd_check_passes_on_every_rank", test_hvd_check_passes_on_every_rank },
	{ "refusals_in_one_line", test_refusals_in_one_line },
	{ "killed_rank_is_named_and_ends_the_others", test_killed_rank_is_named_and_ends_the_others },
	{ "stopped_rank_is_named_within_the_stall_limit",
	  test_stopped_rank_is_named_within_the_stall_limit },
	{ "ctrl_c_ends_every_rank_with_130", test_ctrl_c_ends_every_rank_with_130 },
	{ "second_ctrl_c_kills_at_once", test_second_ctrl_c_kills_at_once },
	{ "ranks_die_with_a_killed_hvdrun", test_ranks_die_with_a_killed_hvdrun },
	{ "two_ranks_train_as_one_accumulating_and_resume_bit_exact",
	  test_two_ranks_train_as_one_accumulating_and_resume_bit_exact },
	{ NULL, NULL },
};
