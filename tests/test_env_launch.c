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
 * two processes with one index), and contrib/k8s's manifests against the
 * runtime's variable names (tests/k8s_manifest.py). Group
 * env-launch-slurm: the same 2-rank training under srun gives the same
 * bits.
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

#include "bootstrap_env.h"
#include "ckpt_compare.h"
#include "runner.h"
#include "settings.h"

/* A loopback port free now (the kernel's next ephemeral one). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* tmpdir/NAME: 64 random bytes, mode 0600 (as a mounted Secret). */
static int make_secret(const char *name)
{
	char *path = test_path(test_tmpdir(), name), buf[64];
	FILE *r = fopen("/dev/urandom", "rb");
	int ok = r && fread(buf, 1, sizeof(buf), r) == sizeof(buf) &&
		 !test_write_file(path, buf, sizeof(buf)) && !chmod(path, 0600);
	if (r)
		fclose(r);
	free(path);
	CHECK_MSG(ok, "cannot write the secret file %s", name);
	return ok ? 0 : -1;
}

/* `cd tmpdir && ENV env_launch.sh SIZE COORD CMD`; coord NULL = 127.0.0.1:free. */
static int launch(const char *env, int size, const char *coord, const char *cmd, int timeout_s,
		  struct test_proc *p)
{
	char where[300], *line = NULL;
	if (!coord) {
		snprintf(where, sizeof(where), "127.0.0.1:%d", free_port());
		coord = where;
	}
	if (make_secret("secret") ||
	    asprintf(&line, "cd '%s' && %s '%s/tests/env_launch.sh' %d %s %s", test_tmpdir(), env,
		     test_src_dir(), size, coord, cmd) < 0)
		return -1;
	int rc = test_run(line, timeout_s, p);
	if (rc)
		test_fail_at(__FILE__, __LINE__, "could not run: %s", line);
	free(line);
	return rc;
}

/* Exit status and ms of process k from the `rcK=S ms=M` lines; -1 if absent. */
static int status_of(const struct test_proc *p, int k, long *ms)
{
	char key[16];
	snprintf(key, sizeof(key), "rc%d=", k);
	const char *at = strstr(p->out, key);
	if (!at)
		return -1;
	int st = atoi(at + strlen(key));
	const char *m = strstr(at, "ms=");
	if (ms)
		*ms = m ? atol(m + 3) : -1;
	return st;
}

/* tmpdir/err.K or out.K, malloc'd ("" when missing). */
static char *output(const char *stream, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "%s.%d", stream, k);
	char *path = test_path(test_tmpdir(), name), *text = test_read_file(path, NULL);
	free(path);
	return text ? text : strdup("");
}

/* Every process exits 0; rank 0 (process 0) prints `ok MODE`. */
static void expect_all_ok(const struct test_proc *p, int n, const char *ok)
{
	for (int k = 0; k < n; k++) {
		char *out = output("out", k), *err = output("err", k);
		CHECK_MSG(status_of(p, k, NULL) == 0, "process %d: %.600s", k, err);
		CHECK_MSG(k || strstr(out, ok) != NULL, "rank 0: no '%s' in '%.200s'", ok, out);
		free(out);
		free(err);
	}
}

static char *rt_test(const char *args)
{
	char *cmd = NULL;
	if (asprintf(&cmd, "'%s/hvd-rt-test' %s", test_build_dir(), args) < 0)
		return NULL;
	return cmd;
}

static void run_ok(int n, const char *args, const char *ok)
{
	struct test_proc p;
	char *cmd = rt_test(args);
	if (launch("HVD_TIMEOUT_S=30", n, NULL, cmd, 120, &p) == 0) {
		expect_all_ok(&p, n, ok);
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_two_pods_start_with_the_report(void)
{
	struct test_proc p;
	char *cmd = rt_test("init");
	if (launch("", 2, NULL, cmd, 60, &p) == 0) {
		expect_all_ok(&p, 2, "ok init");
		char *out1 = output("out", 1), *err0 = output("err", 0);
		CHECK_CONTAINS(out1, "rank 1/2 local 1/2 backend tcp");
		CHECK_CONTAINS(err0, "hvd: start-up: 2 ranks, backend tcp, 1 node");
		CHECK_CONTAINS(err0, "hvd: setting: HVD_SIZE=2");
		free(out1);
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
	snprintf(coord, sizeof(coord), "chexnet-0.chexnet:%d", free_port());
	if (test_run("unshare --mount --propagation private true", 10, &p) || p.exit_code) {
		test_proc_free(&p);
		free(hosts);
		SKIP("no mount namespace here (unshare --mount needs root)");
	}
	test_proc_free(&p);
	if (asprintf(&cmd, "unshare --mount --propagation private sh -c 'mount --bind %s /etc/hosts && "
		     "exec \"$0\" \"$@\"' '%s/hvd-rt-test' exact 65536", hosts, test_build_dir()) < 0)
		return;
	if (launch("", 2, coord, cmd, 60, &p) == 0) {
		expect_all_ok(&p, 2, "ok exact");
		char *err0 = output("err", 0);
		CHECK_CONTAINS(err0, "HVD_COORDINATOR=chexnet-0.chexnet:");
		free(err0);
		test_proc_free(&p);
	}
	free(cmd);
	free(hosts);
}

/* tmpdir/chexnet, synthetic NIH images and their pack in tmpdir/shards. */
static int make_data(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && cp '%s/chexnet' chexnet && ./chexnet synth --out nih "
		 "--count 200 --size 128 --seed 3 && ./chexnet pack --data nih --out shards --size 72",
		 test_tmpdir(), test_build_dir());
	if (test_run(cmd, 120, &p))
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "synth + pack: exit %d: %.600s", rc, p.err);
	test_proc_free(&p);
	return rc ? -1 : 0;
}

#define TRAIN "--data shards --size 64 --threads 1 --optimizer sgd --lr 0.001 --steps 5 --quiet"

static void train_alone(const char *args)
{
	char cmd[1024];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && ./chexnet train " TRAIN " %s", test_tmpdir(), args);
	if (test_run(cmd, 240, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "chexnet train %s: exit %d: %.600s", args, p.exit_code, p.err);
	test_proc_free(&p);
}

static void train_pods(int n, const char *args)
{
	char cmd[1024];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "./chexnet train " TRAIN " %s", args);
	if (launch("", n, NULL, cmd, 240, &p))
		return;
	for (int k = 0; k < n; k++) {
		char *err = output("err", k);
		CHECK_MSG(status_of(&p, k, NULL) == 0, "pod %d of %d: %.600s", k, n, err);
		free(err);
	}
	test_proc_free(&p);
}

static void test_two_pods_b8_bit_identical_to_one_accumulating_two(void)
{
	if (make_data())
		return;
	train_pods(2, "--batch 8 --out dist");
	train_alone("--batch 8 --accumulate 2 --out acc");
	train_alone("--batch 8 --out plain");
	double same = ckpt_max_rel_diff("dist", "acc"), other = ckpt_max_rel_diff("dist", "plain");
	CHECK_MSG(same == 0, "2 pods vs --accumulate 2: max rel diff %.3g, want 0 (bit-identical)", same);
	CHECK_MSG(other > 1e-5, "2 pods vs one rank without accumulation differ by only %.3g", other);
}

static void test_four_pods_within_1e5_of_one_accumulating_four(void)
{
	if (make_data())
		return;
	train_pods(4, "--batch 4 --out dist");
	train_alone("--batch 4 --accumulate 4 --out acc");
	double same = ckpt_max_rel_diff("dist", "acc");
	CHECK_MSG(same >= 0 && same <= 1e-5, "4 pods vs --accumulate 4: max rel diff %.3g", same);
}

/* ---- failures ---- */

static void test_killed_pod_fails_the_others_at_once_naming_it(void)
{
	struct test_proc p;
	char *cmd = rt_test("loop");
	if (launch("HVD_TIMEOUT_S=60 HVD_RT_TEST_ABORT=1 EL_SIGNAL=KILL EL_TARGET=2", 4, NULL, cmd, 90,
		   &p) == 0) {
		for (int k = 0; k < 4; k++) {
			long ms = -1;
			int st = status_of(&p, k, &ms);
			if (k == 2) {
				CHECK_MSG(st == 137, "the killed pod: status %d", st);
				continue;
			}
			char *err = output("err", k);
			CHECK_MSG(st == 1, "pod %d: status %d (want 1: main returned): %.400s", k, st, err);
			CHECK_MSG(ms >= 0 && ms < 5000, "pod %d ended %ld ms after the kill", k, ms);
			CHECK_CONTAINS(err, "hvd: rank 2 (host ");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

static void test_stopped_pod_is_named_within_the_timeout(void)
{
	struct test_proc p;
	char *cmd = rt_test("loop");
	if (launch("HVD_TIMEOUT_S=4 EL_SIGNAL=STOP EL_TARGET=1", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k += 2) {
			long ms = -1;
			int st = status_of(&p, k, &ms);
			char *err = output("err", k);
			CHECK_MSG(st == 1, "pod %d: status %d: %.400s", k, st, err);
			CHECK_MSG(ms >= 3000 && ms < 4000 + 3000, "pod %d ended %ld ms after SIGSTOP "
				  "(HVD_TIMEOUT_S=4)", k, ms);
			CHECK_CONTAINS(err, "rank 1 (host ");
			CHECK_CONTAINS(err, "silent for");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* An intruder with another secret claims index 1 first; the real rank 1
 * comes a second later and the job finishes; the intruder never joins. */
static void test_process_without_the_secret_cannot_join(void)
{
	struct test_proc p;
	char *cmd = rt_test("exact 65536");
	if (make_secret("other") == 0 &&
	    launch("HVD_TIMEOUT_S=4 EL_INDEXES='0 1 1' EL_ENV_1=HVD_SECRET_FILE=other EL_DELAY_2=1",
		   2, NULL, cmd, 60, &p) == 0) {
		char *err0 = output("err", 0), *err1 = output("err", 1), *err2 = output("err", 2);
		CHECK_MSG(status_of(&p, 0, NULL) == 0, "rank 0: %.600s", err0);
		CHECK_MSG(status_of(&p, 2, NULL) == 0, "rank 1: %.600s", err2);
		CHECK_MSG(status_of(&p, 1, NULL) == 1, "the intruder: %.600s", err1);
		CHECK_CONTAINS(err0, "failed authentication");
		CHECK_CONTAINS(err1, "hvd: HVD_COORDINATOR: '127.0.0.1:");
		CHECK_CONTAINS(err1, "rank 0 did not answer within HVD_TIMEOUT_S (4 s)");
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
	char *cmd = rt_test("mismatch");
	if (launch("HVD_RT_TEST_ABORT=1", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k++) {
			char *err = output("err", k);
			CHECK_MSG(status_of(&p, k, NULL) == 1, "rank %d: %.600s", k, err);
			CHECK_CONTAINS(err, "hvd: tensor mismatch:");
			CHECK_MSG(!strstr(err, "hvd_abort_job"), "rank %d: %.600s", k, err);
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
	char *cmd = rt_test("init");
	if (launch(env, size, NULL, cmd, 30, &p) == 0) {
		char *err = output("err", 0);
		CHECK_MSG(status_of(&p, 0, NULL) == 1, "%s: %.600s", env, err);
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
	int local[5], node[5], lsize = 0, nodes = 0;
	bootstrap_env_places(names, 5, 4, local, node, &lsize, &nodes);
	CHECK_INT(local[2], 1);
	CHECK_INT(local[4], 1);
	CHECK_INT(node[3], 2);
	CHECK_INT(node[4], 1);
	CHECK_INT(lsize, 2);
	CHECK_INT(nodes, 3);
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
	char *cmd = rt_test("init");
	if (launch("HVD_TIMEOUT_S=3 EL_INDEXES=1", 2, coord, cmd, 60, &p) == 0) {
		long ms = -1;
		char *err = output("err", 0);
		CHECK_MSG(status_of(&p, 0, &ms) == 1, "%.600s", err);
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
	char *cmd = rt_test("init");
	if (launch("HVD_TIMEOUT_S=10 EL_INDEXES='0 1 1' EL_DELAY_2=0.5", 3, NULL, cmd, 60, &p) == 0) {
		for (int k = 0; k < 3; k++) {
			long ms = -1;
			char *err = output("err", k);
			CHECK_MSG(status_of(&p, k, &ms) == 1, "process %d: %.600s", k, err);
			CHECK_MSG(ms < 5000, "process %d ended after %ld ms", k, ms);
			CHECK_CONTAINS(err, "hvd: HVD_RANK: '1': claimed by two processes");
			free(err);
		}
		test_proc_free(&p);
	}
	free(cmd);
}

/* ---- contrib/k8s ---- */

/* tests/k8s_manifest.py checks the manifests and prints the container's
 * environment (NAME=value) for index 0; the runtime must know every HVD_*
 * name and accept the values. */
static void test_manifests_match_the_runtime(void)
{
	struct test_proc p;
	char *cmd = NULL;
	if (asprintf(&cmd, "python3 '%s/tests/k8s_manifest.py' '%s/contrib/k8s'", test_src_dir(),
		     test_src_dir()) < 0 || test_run(cmd, 60, &p)) {
		free(cmd);
		return;
	}
	CHECK_MSG(p.exit_code == 0, "k8s_manifest.py: %.900s", p.err);
	char *envp[64] = { 0 }, *copy = strdup(p.out);
	int n = 0, hvd = 0;
	for (char *line = strtok(copy, "\n"); line && n < 63; line = strtok(NULL, "\n")) {
		envp[n++] = line;
		hvd += !strncmp(line, "HVD_", 4);
	}
	struct hvd_settings s;
	char err[512], described[4096];
	int rank = -1, size = -1;
	CHECK_MSG(settings_parse(envp, &s, err, sizeof(err)) == 0, "%s", err);
	CHECK_INT(settings_describe(envp, described, sizeof(described)), hvd);
	CHECK_MSG(bootstrap_env_parse(envp, &rank, &size, err, sizeof(err)) == 0, "%s", err);
	CHECK_INT(rank, 0);
	CHECK_MSG(size > 1, "HVD_SIZE %d", size);
	free(copy);
	test_proc_free(&p);
	free(cmd);
}

/* The pod's own command and environment from the manifest, run as 4
 * local pods: paths of the image and volumes mapped into tmpdir, the
 * coordinator name through a private hosts file, the port made free. One
 * pod gets SIGTERM (preemption): every pod checkpoints and exits 75; the
 * same command again (the next Job) finds data/run/last, resumes, exits 0. */
static char *pod_script(const char *manifest_out, char *env, size_t envlen)
{
	char *copy = strdup(manifest_out), *script = NULL, *save = NULL;
	size_t used = 0;
	env[0] = '\0';
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "COMMAND=", 8)) {
			script = strdup(l + 8);
			continue;
		}
		if (!strncmp(l, "HVD_SECRET_FILE=", 16))
			used += (size_t)snprintf(env + used, envlen - used, "EL_SECRET='%s/secret' ", test_tmpdir());
		else if (!strncmp(l, "HVD_", 4) && strncmp(l, "HVD_SIZE=", 9) && strncmp(l, "HVD_COORDINATOR=", 16))
			used += (size_t)snprintf(env + used, envlen - used, "%.*s='%s' ",
						 (int)strcspn(l, "="), l, strchr(l, '=') + 1);
	}
	free(copy);
	if (!script)
		return NULL;
	/* "\n" escapes back to lines; image and volume paths into tmpdir */
	char *out = calloc(1, strlen(script) * 2 + 4096), *o = out;
	for (const char *p = script; *p;) {
		if (!strncmp(p, "\\n", 2)) {
			*o++ = '\n';
			p += 2;
		} else if (!strncmp(p, "/usr/local/bin/chexnet", 22)) {
			o += sprintf(o, "%s/chexnet", test_tmpdir());
			p += 22;
		} else if (!strncmp(p, "/data/", 6)) {
			o += sprintf(o, "%s/data/", test_tmpdir());
			p += 6;
		} else {
			*o++ = *p++;
		}
	}
	free(script);
	return out;
}

static void test_pod_command_preempted_then_resumed(void)
{
	struct test_proc p;
	char *cmd = NULL, env[2048], coord[64], line[4096];
	if (asprintf(&cmd, "python3 '%s/tests/k8s_manifest.py' '%s/contrib/k8s'", test_src_dir(),
		     test_src_dir()) < 0 || test_run(cmd, 60, &p))
		return;
	free(cmd);
	char *script = pod_script(p.out, env, sizeof(env)), *path = test_path(test_tmpdir(), "pod.sh");
	test_proc_free(&p);
	CHECK(script && test_write_file(path, script, strlen(script)) == 0);
	char *hosts = test_path(test_tmpdir(), "hosts");
	const char *text = "127.0.0.1 localhost\n127.0.0.1 chexnet-0.chexnet\n";
	CHECK(test_write_file(hosts, text, strlen(text)) == 0);
	if (make_data() || test_run("unshare --mount --propagation private true", 10, &p) || p.exit_code)
		goto out;
	test_proc_free(&p);
	snprintf(line, sizeof(line), "cd '%s' && mkdir -p data && mv shards data/", test_tmpdir());
	test_run(line, 30, &p);
	test_proc_free(&p);
	snprintf(coord, sizeof(coord), "chexnet-0.chexnet:%d", free_port());
	snprintf(line, sizeof(line), "unshare --mount --propagation private sh -c 'mount --bind %s "
		 "/etc/hosts && exec sh %s \"$@\"' pod --size 32 --threads 1 --loader-threads 1 "
		 "--progress-every 1", hosts, path);
	char first[4096];
	snprintf(first, sizeof(first), "%s EL_SIGNAL=TERM EL_TARGET=2 EL_WAIT_FOR='step 2/'", env);
	if (launch(first, 4, coord, line, 240, &p))
		goto out;
	CHECK_MSG(strstr(p.out, "rc3="), "launch: %.600s %.600s", p.out, p.err);
	for (int k = 0; k < 4; k++) {
		char *err = output("err", k);
		CHECK_MSG(status_of(&p, k, NULL) == 75, "pod %d after SIGTERM to pod 2: %.900s", k, err);
		free(err);
	}
	test_proc_free(&p);
	char *err0 = output("err", 0);
	CHECK_CONTAINS(err0, "exit 75");
	free(err0);
	if (launch(env, 4, coord, line, 240, &p))
		goto out;
	for (int k = 0; k < 4; k++) {
		char *err = output("err", k);
		CHECK_MSG(status_of(&p, k, NULL) == 0, "pod %d of the next Job: %.900s", k, err);
		free(err);
	}
	test_proc_free(&p);
	err0 = output("err", 0);
	CHECK_CONTAINS(err0, "resum");
	free(err0);
out:
	free(script);
	free(path);
	free(hosts);
}

/* ---- contrib/hvdrun (ssh replaced by tests/local_rsh.sh) ---- */

static int hvdrun(const char *env, const char *cmd, int timeout_s, struct test_proc *p)
{
	char line[2048];
	snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n# second rank\\n127.0.0.1\\n' > "
		 "hosts && %s HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -p %d -s secret "
		 "hosts -- %s", test_tmpdir(), env, test_src_dir(), test_src_dir(), free_port(), cmd);
	if (make_secret("secret"))
		return -1;
	return test_run(line, timeout_s, p);
}

static void test_hvdrun_two_ranks_by_hand(void)
{
	struct test_proc p;
	char *cmd = rt_test("exact 65536");
	if (hvdrun("HVD_TIMEOUT_S=20", cmd, 60, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "hvdrun: exit %d: %.900s", p.exit_code, p.err);
		CHECK_CONTAINS(p.out, "ok exact");
		CHECK_CONTAINS(p.err, "hvd: start-up: 2 ranks, backend tcp");
		CHECK_CONTAINS(p.err, "hvd: setting: HVD_TIMEOUT_S=20"); /* passed on */
		test_proc_free(&p);
	}
	free(cmd);
	CHECK(hvdrun("", "", 10, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "usage: hvdrun");
	test_proc_free(&p);
}

/* hvdrun ended (SIGTERM; Ctrl-C in a terminal): every rank is gone. */
static void test_hvdrun_stopped_takes_every_rank_down(void)
{
	struct test_proc p;
	char setup[1024];
	snprintf(setup, sizeof(setup), "cp '%s/hvd-rt-test' '%s/rtloop'", test_build_dir(), test_tmpdir());
	CHECK(test_run(setup, 10, &p) == 0);
	test_proc_free(&p);
	char line[2048];
	snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n127.0.0.1\\n' > hosts && "
		 "(HVD_TIMEOUT_S=20 HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -p %d -s "
		 "secret hosts -- '%s/rtloop' loop > loop.out 2> loop.err & h=$!; for i in $(seq 200); "
		 "do [ \"$(grep -c pid loop.out)\" = 2 ] && break; sleep 0.05; done; kill -TERM $h; "
		 "wait $h; sleep 2; echo left=$(pgrep -f '^%s/rtloop loop' | wc -l))", test_tmpdir(),
		 test_src_dir(), test_src_dir(), free_port(), test_tmpdir(), test_tmpdir());
	if (make_secret("secret") || test_run(line, 60, &p))
		return;
	CHECK_CONTAINS(p.out, "left=0");
	char *loop = test_path(test_tmpdir(), "loop.out"), *text = test_read_file(loop, NULL);
	CHECK_MSG(text && strstr(text, "rank 1"), "the ranks never started: %s", text ? text : "");
	free(text);
	free(loop);
	test_proc_free(&p);
}

const struct test_case env_launch_tests[] = {
	{ "bootstrap_env_parse_rules", test_bootstrap_env_parse_rules },
	{ "two_pods_start_with_the_report", test_two_pods_start_with_the_report },
	{ "exact_two_three_four_ranks", test_exact_two_three_four_ranks },
	{ "coordinator_by_name_from_a_private_hosts_file", test_coordinator_by_name_from_a_private_hosts_file },
	{ "killed_pod_fails_the_others_at_once_naming_it", test_killed_pod_fails_the_others_at_once_naming_it },
	{ "stopped_pod_is_named_within_the_timeout", test_stopped_pod_is_named_within_the_timeout },
	{ "process_without_the_secret_cannot_join", test_process_without_the_secret_cannot_join },
	{ "abort_job_returns_and_every_rank_exits", test_abort_job_returns_and_every_rank_exits },
	{ "rank_not_below_size_is_refused", test_rank_not_below_size_is_refused },
	{ "coordinator_that_never_answers_fails_after_the_timeout",
	  test_coordinator_that_never_answers_fails_after_the_timeout },
	{ "two_processes_with_one_index_fail_the_job", test_two_processes_with_one_index_fail_the_job },
	{ "manifests_match_the_runtime", test_manifests_match_the_runtime },
	{ "hvdrun_two_ranks_by_hand", test_hvdrun_two_ranks_by_hand },
	{ "hvdrun_stopped_takes_every_rank_down", test_hvdrun_stopped_takes_every_rank_down },
	{ "pod_command_preempted_then_resumed", test_pod_command_preempted_then_resumed },
	{ "two_pods_b8_bit_identical_to_one_accumulating_two",
	  test_two_pods_b8_bit_identical_to_one_accumulating_two },
	{ "four_pods_within_1e5_of_one_accumulating_four", test_four_pods_within_1e5_of_one_accumulating_four },
	{ 0 }
};

/* The same training under srun (PMIx, MPI) and as two pods (TCP ring):
 * the same bits. */
static void test_two_pods_bit_identical_to_srun(void)
{
	char cmd[1024];
	struct test_proc p;
	if (make_data())
		return;
	train_pods(2, "--batch 8 --out pods");
	snprintf(cmd, sizeof(cmd), "cd '%s' && srun -n 2 '%s/chexnet' train " TRAIN " --batch 8 "
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
