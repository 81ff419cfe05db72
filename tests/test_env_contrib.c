/* test_env_contrib.c - contrib/k8s and contrib/hvdrun without a cluster:
 * the manifests against the runtime's variable names and secret path
 * (tests/k8s_manifest.py), the pod's own command with the pod's
 * environment as 4 local pods (preempted, then resumed by the next Job),
 * both images' package lists against `ldd build/chexnet` and dpkg
 * (tests/docker_libs.py), the Job against the Kubernetes API schema of
 * every version it claims (tests/k8s_validate.py, kubernetes-validate
 * from PyPI in BUILD/pyenv), and hvdrun with tests/local_rsh.sh standing
 * in for ssh, also under a bash that refuses wait -p as 4.4 and 5.0 do
 * (a BASH_ENV shim), with its CPU time counted, and with dash remotely.
 * What it does not do: build or run an image (no container runtime here:
 * the Dockerfiles are checked statically), talk to a cluster (none here)
 * or run a real bash older than 5.1 (none here; BASH_VERSINFO cannot be
 * faked, so the X.Y refusal is checked in hvdrun's text only).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_env.h"
#include "env_launch.h"
#include "runner.h"
#include "core/settings.h"

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
	CHECK_INT(settings_describe(envp, 0, described, sizeof(described)), hvd);
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
	if (env_launch_data() || test_run("unshare --mount --propagation private true", 10, &p) || p.exit_code)
		goto out;
	test_proc_free(&p);
	snprintf(line, sizeof(line), "cd '%s' && mkdir -p data && mv shards data/", test_tmpdir());
	test_run(line, 30, &p);
	test_proc_free(&p);
	snprintf(coord, sizeof(coord), "chexnet-0.chexnet:%d", env_launch_port());
	snprintf(line, sizeof(line), "unshare --mount --propagation private sh -c 'mount --bind %s "
		 "/etc/hosts && exec sh %s \"$@\"' pod --size 32 --threads 1 --loader-threads 1 "
		 "--progress-every 1", hosts, path);
	char first[4096];
	snprintf(first, sizeof(first), "%s EL_SIGNAL=TERM EL_TARGET=2 EL_WAIT_FOR='step 2/'", env);
	if (env_launch_run(first, 4, coord, line, 240, &p))
		goto out;
	CHECK_MSG(strstr(p.out, "rc3="), "launch: %.600s %.600s", p.out, p.err);
	for (int k = 0; k < 4; k++) {
		char *err = env_launch_output("err", k);
		CHECK_MSG(env_launch_status(&p, k, NULL) == 75, "pod %d after SIGTERM to pod 2: %.900s", k, err);
		free(err);
	}
	test_proc_free(&p);
	char *err0 = env_launch_output("err", 0);
	CHECK_CONTAINS(err0, "exit 75");
	free(err0);
	if (env_launch_run(env, 4, coord, line, 240, &p))
		goto out;
	for (int k = 0; k < 4; k++) {
		char *err = env_launch_output("err", k);
		CHECK_MSG(env_launch_status(&p, k, NULL) == 0, "pod %d of the next Job: %.900s", k, err);
		free(err);
	}
	test_proc_free(&p);
	err0 = env_launch_output("err", 0);
	CHECK_CONTAINS(err0, "resum");
	free(err0);
out:
	free(script);
	free(path);
	free(hosts);
}

/* ---- contrib/k8s images and schema (static: no container runtime here) ---- */

/* tests/docker_libs.py on K8S_DIR: its exit status, output in p. */
static int docker_libs(const char *k8s_dir, struct test_proc *p)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/docker_libs.py' '%s' '%s'", test_src_dir(),
		 test_build_dir(), k8s_dir);
	return test_run(cmd, 60, p) ? -1 : p->exit_code;
}

/* contrib/k8s copied into tmpdir/k8s with SED applied to FILE. */
static char *mutated_k8s(const char *file, const char *sed)
{
	char cmd[2048];
	struct test_proc p;
	char *dir = test_path(test_tmpdir(), "k8s");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s/contrib/k8s' '%s' && sed -i '%s' '%s/%s'",
		 dir, test_src_dir(), dir, sed, dir, file);
	CHECK(test_run(cmd, 30, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	return dir;
}

/* Each library of `ldd build/chexnet` is installed by the image's runtime
 * stage (Debian packages by dpkg -S; $CUDA_HOME's by the GPU image's
 * table); a Dockerfile without libcairo2 (as it once was) or a GPU table
 * without NCCL fails, naming the library. */
static void test_docker_images_carry_every_library(void)
{
#ifdef __SANITIZE_ADDRESS__
	SKIP("a SAN build's chexnet links the sanitizer runtimes, which no image ships");
#endif
	struct test_proc p;
	char *src = test_path(test_src_dir(), "contrib/k8s");
	int rc = docker_libs(src, &p);
	free(src);
	if (rc < 0)
		return;
	CHECK_MSG(rc == 0, "docker_libs.py: %.1500s", p.err);
	CHECK_CONTAINS(p.out, "libcairo2");
	CHECK_CONTAINS(p.out, "libdnnl2");
	int cuda = strstr(p.out, "CUDA_HOME /") != NULL;
	test_proc_free(&p);
	char *dir = mutated_k8s("Dockerfile", "s/ libcairo2 / /");
	CHECK_INT(docker_libs(dir, &p), 1);
	CHECK_CONTAINS(p.err, "Dockerfile: the runtime stage does not install libcairo2 (libcairo.so.2");
	test_proc_free(&p);
	free(dir);
	if (!cuda) {
		printf("  note: this build has no CUDA: the GPU image's CUDA table was not checked\n");
		return;
	}
	dir = mutated_k8s("Dockerfile.gpu", "/cuda-lib: libnccl/d");
	CHECK_INT(docker_libs(dir, &p), 1);
	CHECK_CONTAINS(p.err, "no '# cuda-lib: libnccl.so.2 PACKAGE' row");
	test_proc_free(&p);
	free(dir);
}

/* The Job manifest passes `kubernetes-validate --strict` (PyPI, in
 * BUILD/pyenv) for every version from the minimum it and the README state
 * up to the newest the checker knows; without podFailurePolicy's
 * onPodConditions status (as it once was) 1.29 fails. */
static void test_job_manifest_valid_for_every_claimed_version(void)
{
	struct test_proc p;
	char cmd[2048], *dir = test_path(test_tmpdir(), "src");
	snprintf(cmd, sizeof(cmd), "'%s/tests/pyenv.sh' '%s'", test_src_dir(), test_build_dir());
	if (test_run(cmd, 300, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "tests/pyenv.sh: %.900s", p.err);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/pyenv/bin/python' '%s/tests/k8s_validate.py' '%s'",
		 test_build_dir(), test_src_dir(), test_src_dir());
	if (test_run(cmd, 120, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "k8s_validate.py: %.1500s", p.err);
	CHECK_CONTAINS(p.out, "k8s 1.29: ok");
	CHECK_CONTAINS(p.out, "k8s 1.37: ok");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/contrib/k8s' && cp '%s/README.md' '%s' && "
		 "sed '/status: \"True\"/d' '%s/contrib/k8s/chexnet-job.yaml' > "
		 "'%s/contrib/k8s/chexnet-job.yaml' && '%s/pyenv/bin/python' '%s/tests/k8s_validate.py' '%s'",
		 dir, test_src_dir(), dir, test_src_dir(), dir, test_build_dir(), test_src_dir(), dir);
	if (test_run(cmd, 120, &p) == 0) {
		CHECK_INT(p.exit_code, 1);
		CHECK_CONTAINS(p.err, "Kubernetes 1.29: ");
		CHECK_CONTAINS(p.err, "'status' is a required property");
		test_proc_free(&p);
	}
	free(dir);
}

/* ---- contrib/hvdrun (ssh replaced by tests/local_rsh.sh) ---- */

static int hvdrun(const char *env, const char *cmd, int timeout_s, struct test_proc *p)
{
	char line[2048];
	snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n# second rank\\n127.0.0.1\\n' > "
		 "hosts && %s HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -p %d -s secret "
		 "hosts -- %s", test_tmpdir(), env, test_src_dir(), test_src_dir(), env_launch_port(), cmd);
	if (env_launch_secret("secret"))
		return -1;
	return test_run(line, timeout_s, p);
}

static void test_hvdrun_two_ranks_by_hand(void)
{
	struct test_proc p;
	char *cmd = env_launch_rt_test("exact 65536");
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
		 test_src_dir(), test_src_dir(), env_launch_port(), test_tmpdir(), test_tmpdir());
	if (env_launch_secret("secret") || test_run(line, 60, &p))
		return;
	CHECK_CONTAINS(p.out, "left=0");
	char *loop = test_path(test_tmpdir(), "loop.out"), *text = test_read_file(loop, NULL);
	CHECK_MSG(text && strstr(text, "rank 1"), "the ranks never started: %s", text ? text : "");
	free(text);
	free(loop);
	test_proc_free(&p);
}

/* Runs ENV hvdrun FLAGS (SIGINT not ignored, as in a terminal) with two
 * local ranks of CMD (each first prints "pid N rank R"), then ACTION (shell;
 * $h: hvdrun, $r1: rank 1's pid), and waits up to limit_s for hvdrun to
 * end. Prints rc= (or rc=running), ms= (ACTION to the end) and left= (the
 * programs copied into the case's dir still running; any left is then
 * killed). Every program a rank runs is a copy in the case's dir. */
static int hvdrun_then(const char *env, const char *flags, const char *cmd, const char *action, int limit_s,
		       struct test_proc *p)
{
	const char *t = test_tmpdir();
	char line[4096];
	snprintf(line, sizeof(line), "cp '%s/hvd-rt-test' '%s/rtloop' && cp \"$(command -v sleep)\" '%s/rsleep'",
		 test_build_dir(), t, t);
	if (test_run(line, 10, p))
		return -1;
	test_proc_free(p);
	snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n127.0.0.1\\n' > hosts && "
		 "(env --default-signal=INT %s HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' %s -p %d "
		 "-s secret hosts -- %s > run.out 2> run.err & h=$!; for i in $(seq 400); "
		 "do [ \"$(grep -sc '^pid' run.out)\" = 2 ] && break; sleep 0.05; done; "
		 "r1=$(awk '/^pid .* rank 1/ { print $2 }' run.out); t0=$(date +%%s%%N); %s; "
		 "for i in $(seq %d); do kill -0 $h 2> /dev/null || break; sleep 0.05; done; t1=$(date +%%s%%N); "
		 "if kill -0 $h 2> /dev/null; then echo rc=running; kill -KILL $h; else wait $h; echo rc=$?; fi; "
		 "echo ms=$(((t1 - t0) / 1000000)); sleep 1; echo left=$(pgrep -f '^%s/r' | wc -l); "
		 "pkill -KILL -f '^%s/r'; cat run.err >&2)",
		 t, env, test_src_dir(), test_src_dir(), flags, env_launch_port(), cmd, action, limit_s * 20, t, t);
	if (env_launch_secret("secret"))
		return -1;
	return test_run(line, limit_s + 30, p);
}

static long field_of(const char *out, const char *key)
{
	const char *s = strstr(out, key);
	return s ? strtol(s + strlen(key), NULL, 10) : -1;
}

/* A stopped rank: the others fail after HVD_TIMEOUT_S (4 s here), and
 * hvdrun then ends it (SIGTERM and SIGCONT): it used to wait forever. */
static void test_hvdrun_stopped_rank_ends_within_the_stall_limit(void)
{
	struct test_proc p;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "'%s/rtloop' loop", test_tmpdir());
	if (hvdrun_then("HVD_TIMEOUT_S=4", "", cmd, "kill -STOP $r1", 20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=1\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	long ms = field_of(p.out, "ms=");
	CHECK_MSG(ms >= 3500 && ms < 7000, "hvdrun ended %ld ms after SIGSTOP of rank 1 (HVD_TIMEOUT_S=4)", ms);
	CHECK_CONTAINS(p.err, "hvd: rank 1 (host ");
	CHECK_CONTAINS(p.err, "no heartbeat within HVD_TIMEOUT_S");
	CHECK_CONTAINS(p.err, "hvdrun: a rank exited with status 1: ending every rank");
	CHECK_CONTAINS(p.out, "left=0\n");
	printf("  measured: hvdrun ended %ld ms after SIGSTOP of rank 1 (HVD_TIMEOUT_S=4)\n", ms);
	test_proc_free(&p);
}

/* Ctrl-C (SIGINT to hvdrun) while a rank is stopped: every rank ends at
 * once, the stopped one included (HVD_TIMEOUT_S=60 never comes), and
 * hvdrun exits 130 (128 + SIGINT), whatever the ranks' own statuses. */
static void test_hvdrun_ctrl_c_ends_a_stopped_rank(void)
{
	struct test_proc p;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "'%s/rtloop' loop", test_tmpdir());
	if (hvdrun_then("HVD_TIMEOUT_S=60", "", cmd, "kill -STOP $r1; sleep 0.5; kill -INT $h", 20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=130\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	CHECK_MSG(field_of(p.out, "ms=") < 5000, "hvdrun ended %ld ms after SIGSTOP and Ctrl-C", field_of(p.out, "ms="));
	CHECK_CONTAINS(p.err, "hvdrun: SIGINT: ending every rank");
	CHECK_CONTAINS(p.out, "left=0\n");
	test_proc_free(&p);
}

/* Ctrl-C while rank 1 is stopped, with the ranks' exits ordered on
 * purpose: rank 1 (the stopped one, exiting 143) ends STOPPED_DELAY s
 * after the agreed stop and rank 0 (exiting 1, as a rank whose control
 * connection closed) OTHER_DELAY s after it. hvdrun's status is 130 in
 * both orders: the signal it got, never whichever rank came first. */
static void hvdrun_ctrl_c_in_order(const char *stopped_delay, const char *other_delay)
{
	struct test_proc p;
	char cmd[PATH_MAX * 2 + 300];
	const char *t = test_tmpdir();
	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$ rank $HVD_RANK; if [ $HVD_RANK = 1 ]; then d=%s; c=143; "
		 "else d=%s; c=1; fi; trap \"kill \\$s; %s/rsleep $d; exit $c\" TERM; %s/rsleep 300 & s=$!; wait'",
		 stopped_delay, other_delay, t, t);
	if (hvdrun_then("HVD_TIMEOUT_S=60", "", cmd, "kill -STOP $r1; sleep 0.5; kill -INT $h", 20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=130\n"), "rank 1 after %s s, rank 0 after %s s: hvdrun: %s\n%s", stopped_delay,
		  other_delay, p.out, test_tail(p.err, 900));
	CHECK_MSG(field_of(p.out, "ms=") < 5000, "hvdrun ended %ld ms after SIGSTOP and Ctrl-C", field_of(p.out, "ms="));
	CHECK_CONTAINS(p.err, "hvdrun: SIGINT: ending every rank");
	CHECK_CONTAINS(p.out, "left=0\n");
	test_proc_free(&p);
}

static void test_hvdrun_ctrl_c_exits_130_in_either_order(void)
{
	hvdrun_ctrl_c_in_order("0", "1"); /* the stopped rank first */
	hvdrun_ctrl_c_in_order("1", "0"); /* the stopped rank last */
}

/* Hosts are taken literally: a '*' line is one host named '*' (not one
 * rank per file in the folder), and a host beginning with '-' is refused
 * in one line before anything starts (ssh would read it as an option). */
static void test_hvdrun_takes_hosts_literally(void)
{
	struct test_proc p;
	char line[2048];
	const char *t = test_tmpdir();
	if (env_launch_secret("secret"))
		return;
	snprintf(line, sizeof(line), "cd '%s' && : > a && : > b && printf '127.0.0.1\\n*\\n' > globhosts && "
		 "HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -g 1 -p %d -s secret globhosts -- "
		 "sh -c 'echo started $HVD_RANK of $HVD_SIZE'", t, test_src_dir(), test_src_dir(), env_launch_port());
	if (test_run(line, 30, &p))
		return;
	CHECK_MSG(p.exit_code == 255, "hvdrun: exit %d: %s", p.exit_code, test_tail(p.err, 900));
	CHECK_CONTAINS(p.err, "local_rsh: '*': only loopback here");
	CHECK_MSG(!strstr(p.err, "local_rsh: 'a'") && !strstr(p.err, "local_rsh: 'globhosts'"),
		  "a '*' host was globbed: %s", test_tail(p.err, 900));
	CHECK_MSG(!strstr(p.out, "of 3") && !strstr(p.out, "of 4"), "more ranks than lines: %s", p.out);
	test_proc_free(&p);

	snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n  -oProxyCommand=touch_pwned # x\\n' > "
		 "dashhosts && HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -p %d -s secret dashhosts -- "
		 "sh -c 'echo started $HVD_RANK'", t, test_src_dir(), test_src_dir(), env_launch_port());
	if (test_run(line, 30, &p))
		return;
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "hvdrun: HOSTFILE: 'dashhosts': line 2: '-oProxyCommand=touch_pwned': a host name "
		  "cannot begin with '-'\n");
	CHECK_MSG(!strstr(p.out, "started"), "a rank started: %s", p.out);
	test_proc_free(&p);
}

/* A rank that exits non-zero ends the others; one that ignores SIGTERM
 * gets SIGKILL after -g seconds. hvdrun exits with the failed status. */
static void test_hvdrun_failed_rank_ends_the_others(void)
{
	struct test_proc p;
	char cmd[PATH_MAX + 200];
	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$ rank $HVD_RANK; trap \"\" TERM; "
		 "if [ $HVD_RANK = 1 ]; then sleep 0.5; exit 3; fi; exec %s/rsleep 300'", test_tmpdir());
	if (hvdrun_then("", "-g 1", cmd, ":", 20, &p))
		return;
	CHECK_MSG(strstr(p.out, "rc=3\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
	CHECK_MSG(field_of(p.out, "ms=") < 5000, "hvdrun ended %ld ms after the start (-g 1)", field_of(p.out, "ms="));
	CHECK_CONTAINS(p.err, "hvdrun: a rank exited with status 3: ending every rank (SIGTERM; SIGKILL after 1 s");
	CHECK_CONTAINS(p.out, "left=0\n");
	test_proc_free(&p);
}

/* ---- hvdrun on an older bash, without busy waiting, with dash remotely ---- */

/* A bash that rejects `wait -p` as bash 4.4 and 5.0 do ("invalid option",
 * status 2): BASH_ENV runs this file before the script, and a function
 * named wait takes precedence over the builtin. Writes it into the case's
 * dir, checks that it does refuse -p and passes plain wait -n on, and
 * returns its path (NULL when that failed). */
static const char *old_bash_env(void)
{
	static char path[PATH_MAX];
	static const char shim[] =
		"wait() {\n"
		"	local a\n"
		"	for a in \"$@\"; do\n"
		"		case $a in\n"
		"		--) break ;;\n"
		"		-*p*) echo 'wait: -p: invalid option' >&2\n"
		"			echo 'wait: usage: wait [-n] [id ...]' >&2\n"
		"			return 2 ;;\n"
		"		-*) ;;\n"
		"		*) break ;;\n"
		"		esac\n"
		"	done\n"
		"	builtin wait \"$@\"\n"
		"}\n";
	struct test_proc p;
	char line[PATH_MAX + 200];
	snprintf(path, sizeof(path), "%s/old_bash.env", test_tmpdir());
	if (test_put("old_bash.env", shim))
		return NULL;
	snprintf(line, sizeof(line), "BASH_ENV='%s' bash -c 'sleep 0.1 & wait -n -p x; echo rc=$?; "
		 "(exit 7) & wait -n; echo rc=$?'", path);
	if (test_run(line, 10, &p))
		return NULL;
	int ok = strcmp(p.out, "rc=2\nrc=7\n") == 0 && strstr(p.err, "wait: -p: invalid option");
	CHECK_MSG(ok, "the old-bash shim: %s%s", p.out, p.err);
	test_proc_free(&p);
	return ok ? path : NULL;
}

/* Under the old-bash shim: two ranks by hand finish with 0 and print no
 * wait error; a rank exiting 3 ends the other at once (exit 3); SIGTERM to
 * hvdrun ends every rank within a few seconds, and hvdrun exits 143 (ranks
 * that exit 0 on SIGTERM: 128 + the signal). */
static void test_hvdrun_on_an_older_bash(void)
{
	const char *shim = old_bash_env();
	if (!shim)
		return;
	char env[PATH_MAX + 64], cmd[PATH_MAX + 200];
	struct test_proc p;
	snprintf(env, sizeof(env), "BASH_ENV='%s' HVD_TIMEOUT_S=20", shim);
	char *rt = env_launch_rt_test("exact 65536");
	if (hvdrun(env, rt, 60, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "hvdrun: exit %d: %.900s", p.exit_code, test_tail(p.err, 900));
		CHECK_CONTAINS(p.out, "ok exact");
		CHECK_MSG(!strstr(p.err, "invalid option"), "hvdrun used wait -p: %s", test_tail(p.err, 900));
		test_proc_free(&p);
	}
	free(rt);

	snprintf(env, sizeof(env), "BASH_ENV='%s'", shim);
	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$ rank $HVD_RANK; "
		 "if [ $HVD_RANK = 1 ]; then sleep 0.5; exit 3; fi; exec %s/rsleep 300'", test_tmpdir());
	if (hvdrun_then(env, "-g 1", cmd, ":", 20, &p) == 0) {
		CHECK_MSG(strstr(p.out, "rc=3\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
		CHECK_MSG(field_of(p.out, "ms=") < 5000, "hvdrun ended %ld ms after the start", field_of(p.out, "ms="));
		CHECK_CONTAINS(p.err, "hvdrun: a rank exited with status 3: ending every rank");
		CHECK_CONTAINS(p.out, "left=0\n");
		CHECK_MSG(!strstr(p.err, "invalid option"), "hvdrun used wait -p: %s", test_tail(p.err, 900));
		test_proc_free(&p);
	}

	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$ rank $HVD_RANK; trap \"kill \\$s; exit 0\" TERM; "
		 "%s/rsleep 300 & s=$!; wait'", test_tmpdir());
	if (hvdrun_then(env, "", cmd, "sleep 0.5; kill -TERM $h", 20, &p) == 0) {
		CHECK_MSG(strstr(p.out, "rc=143\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
		long ms = field_of(p.out, "ms=");
		CHECK_MSG(ms < 5000, "hvdrun ended %ld ms after sleep 0.5 and SIGTERM", ms);
		CHECK_CONTAINS(p.err, "hvdrun: SIGTERM: ending every rank");
		CHECK_CONTAINS(p.out, "left=0\n");
		printf("  measured: under the old-bash shim, hvdrun ended %ld ms after sleep 0.5 + SIGTERM\n", ms);
		test_proc_free(&p);
	}
}

/* While two ranks sleep 3 s, hvdrun sleeps too: its CPU time and its
 * children's (bash's `times` after it; the ranks are `sleep`, the rsh is
 * tests/local_rsh.sh) stay under 0.5 s, with bash as it is here and under
 * the old-bash shim (the loop that spun on wait -p's error used ~90% of a
 * core in ps, and never ended). */
static void test_hvdrun_never_busy_waits(void)
{
	const char *shim = old_bash_env();
	if (!shim || env_launch_secret("secret"))
		return;
	for (int old = 0; old < 2; old++) {
		char line[3 * PATH_MAX + 400];
		struct test_proc p;
		snprintf(line, sizeof(line), "cd '%s' && printf '127.0.0.1\\n127.0.0.1\\n' > hosts && rm -f times.txt && "
			 "bash -c '\"$0\" \"$@\"; r=$?; times > times.txt; exit $r' env %s%s%s "
			 "HVDRUN_RSH='%s/tests/local_rsh.sh' '%s/contrib/hvdrun' -p %d -s secret hosts -- sleep 3",
			 test_tmpdir(), old ? "BASH_ENV='" : "", old ? shim : "", old ? "'" : "", test_src_dir(),
			 test_src_dir(), env_launch_port());
		if (test_run(line, 30, &p))
			return;
		const char *which = old ? "the old-bash shim" : "this bash";
		CHECK_MSG(p.exit_code == 0, "%s: hvdrun: exit %d: %s", which, p.exit_code, test_tail(p.err, 900));
		CHECK_MSG(p.seconds >= 2.9, "%s: hvdrun ended after %.2f s: the ranks sleep 3 s", which, p.seconds);
		char *f = test_path(test_tmpdir(), "times.txt"), *t = test_read_file(f, NULL);
		const char *kids = t ? strchr(t, '\n') : NULL;
		long um = -1, sm = -1;
		double us = 0, ss = 0;
		int n = kids ? sscanf(kids + 1, "%ldm%lfs %ldm%lfs", &um, &us, &sm, &ss) : 0;
		CHECK_MSG(n == 4, "%s: bash's times printed '%s'", which, t ? t : "(nothing)");
		double cpu = 60.0 * (double)(um + sm) + us + ss;
		if (n == 4) {
			CHECK_MSG(cpu < 0.5, "%s: hvdrun used %.2f s CPU while its ranks slept 3 s", which, cpu);
			printf("  measured: %s: hvdrun and its children used %.3f s CPU (user %.3f, sys %.3f) "
			       "while two ranks slept 3 s\n", which, cpu, 60.0 * (double)um + us, 60.0 * (double)sm + ss);
		}
		free(t);
		free(f);
		test_proc_free(&p);
	}
}

/* The remote script runs under dash (Debian's /bin/sh; this machine's too
 * when `readlink -f /bin/sh` says so, but a folder first in PATH whose sh
 * is dash makes it so wherever dash is): ranks end cleanly, and a failed
 * rank's watcher ends the other (SIGTERM ignored: SIGKILL after -g 1). */
static void test_hvdrun_remote_script_under_dash(void)
{
	struct test_proc p;
	char line[PATH_MAX + 200], env[PATH_MAX + 64], cmd[PATH_MAX + 300];
	snprintf(line, sizeof(line), "d=$(command -v dash) && mkdir -p '%s/dashbin' && ln -sf \"$d\" '%s/dashbin/sh'",
		 test_tmpdir(), test_tmpdir());
	if (test_run(line, 10, &p))
		return;
	int have = p.exit_code == 0;
	test_proc_free(&p);
	if (!have)
		SKIP("no dash here");
	snprintf(env, sizeof(env), "PATH='%s/dashbin':\"$PATH\" HVD_TIMEOUT_S=20", test_tmpdir());
	char *rt = env_launch_rt_test("exact 65536");
	snprintf(cmd, sizeof(cmd), "sh -c 'echo remote=$(readlink -f /proc/$PPID/exe); exec \"$0\" \"$@\"' %s", rt);
	free(rt);
	if (hvdrun(env, cmd, 60, &p) == 0) {
		CHECK_MSG(p.exit_code == 0, "hvdrun: exit %d: %.900s", p.exit_code, test_tail(p.err, 900));
		CHECK_CONTAINS(p.out, "ok exact");
		CHECK_MSG(strstr(p.out, "remote=") && strstr(p.out, "/dash\n") && !strstr(p.out, "bash\n"),
			  "the remote script ran under: %s", p.out);
		test_proc_free(&p);
	}
	snprintf(env, sizeof(env), "PATH='%s/dashbin':\"$PATH\"", test_tmpdir());
	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$ rank $HVD_RANK; echo remote=$(readlink -f /proc/$PPID/exe); "
		 "trap \"\" TERM; if [ $HVD_RANK = 1 ]; then sleep 0.5; exit 3; fi; exec %s/rsleep 300'", test_tmpdir());
	if (hvdrun_then(env, "-g 1", cmd, ":", 20, &p) == 0) {
		CHECK_MSG(strstr(p.out, "rc=3\n"), "hvdrun: %s\n%s", p.out, test_tail(p.err, 900));
		CHECK_MSG(field_of(p.out, "ms=") < 5000, "hvdrun ended %ld ms after the start (-g 1)", field_of(p.out, "ms="));
		CHECK_CONTAINS(p.out, "left=0\n");
		char *f = test_path(test_tmpdir(), "run.out"), *t = test_read_file(f, NULL);
		CHECK_MSG(t && strstr(t, "remote=") && strstr(t, "/dash\n"), "the remote script ran under: %s", t ? t : "");
		free(t);
		free(f);
		test_proc_free(&p);
	}
}

/* hvdrun refuses, in one line, a shell too old or not bash. Only "not
 * bash" can be run here (sh: dash, or bash as sh, which passes the check):
 * BASH_VERSINFO is read-only, so an old bash cannot be faked and the X.Y
 * refusal is checked in the script's text only. */
static void test_hvdrun_refuses_an_old_shell(void)
{
	struct test_proc p;
	char line[PATH_MAX + 64];
	snprintf(line, sizeof(line), "dash '%s/contrib/hvdrun' -h", test_src_dir());
	if (test_run(line, 10, &p) == 0) {
		if (strstr(p.err, "not found"))
			printf("  no dash: the not-bash refusal is not run\n");
		else {
			CHECK_INT(p.exit_code, 2);
			CHECK_STR(p.err, "hvdrun: not bash: needs bash 4.4 or newer\n");
			CHECK_STR(p.out, "");
		}
		test_proc_free(&p);
	}
	char *f = test_path(test_src_dir(), "contrib/hvdrun"), *t = test_read_file(f, NULL);
	CHECK_CONTAINS(t, "((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 404))");
	CHECK_CONTAINS(t, "\"hvdrun: bash ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}: needs bash 4.4 or newer\"");
	free(t);
	free(f);
}

/* contrib/chexnet-elastic's relaunch with srun and scontrol faked (a job
 * of n1,n2 x 2 tasks): the first step's survivors write a summary that
 * asks for a relaunch (n2 lost) and exit 76; the driver relaunches the
 * user's command line unchanged with --relaunch --allow-changes on the 2
 * ranks left and says what the relaunched session's record says chexnet
 * decided. A record of 3 ranks (not the 2 launched) is refused in one
 * line: exit 2, the relaunched step ended. The real relaunch runs in
 * slurm-multinode-elastic. */
static void elastic_relaunch(const char *record, int sleep_s, int *rc, char **err, char **second)
{
	char cmd[8192];
	struct test_proc p;
	const char *t = test_tmpdir();
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && rm -rf bin o calls && mkdir -p bin o/.generations && "
		 "printf '%%s\\n' '#!/bin/sh' 'case \"$1 $2\" in' "
		 "'\"show hostnames\") echo n1; echo n2 ;;' '\"show node\") echo \"NodeName=$4\" ;; esac' "
		 "'exit 0' > bin/scontrol && "
		 "printf '%%s\\n' '#!/bin/sh' 'echo \"$*\" >> calls' 'g=o/.generations' "
		 "'if [ ! -e $g/1 ]; then echo \"session ranks=4 accumulate=1 micro_batches_kept=4 host=n1\" > $g/1; "
		 "echo \"time=1 hosts=n2 epoch=0 step=3 writer=0 next=relaunch members=0,1 member_hosts=n1,n1 "
		 "who=ranks 2,3 (host n2)\" > $g/2.saved; exit 76; fi' "
		 "'echo \"%s\" > $g/3; trap \"kill \\$s; exit 143\" TERM' "
		 "'sleep %d > /dev/null 2>&1 & s=$!; wait $s; echo ended >> calls' > bin/srun && chmod +x bin/* && "
		 "PATH=$PWD/bin:$PATH SLURM_JOB_ID=7 SLURM_JOB_NODELIST='n[1-2]' SLURM_NTASKS_PER_NODE=2 "
		 "timeout 15 '%s/contrib/chexnet-elastic' --assume-no-kill -- chexnet train --data d "
		 "--init w --accumulate 1 --out o; echo rc=$?; sleep 0.5; sed -n 2p calls; grep -c ended calls",
		 t, record, sleep_s, test_src_dir());
	if (test_run(cmd, 30, &p) != 0) {
		test_fail_at(__FILE__, __LINE__, "could not run: %s", cmd);
		return;
	}
	const char *r = strstr(p.out, "rc=");
	*rc = r ? atoi(r + 3) : -1;
	*err = strdup(p.err);
	*second = strdup(r ? strchr(r, '\n') + 1 : "");
	test_proc_free(&p);
}

static void test_elastic_driver_says_chexnets_decision_and_refuses_another(void)
{
	int rc;
	char *err, *second;
	elastic_relaunch("session ranks=2 accumulate=2 micro_batches_kept=4 host=n1", 1, &rc, &err,
			 &second);
	CHECK_MSG(rc == 0, "rc %d: %s", rc, err);
	CHECK_CONTAINS(second, "-N 1 -n 2 -w n1 --ntasks-per-node=2 --overlap chexnet train --data d "
		       "--init w --accumulate 1 --out o --shrink --relaunch --allow-changes\n");
	CHECK_CONTAINS(err, "chexnet-elastic: relaunching on 2 ranks (was 4): --accumulate 2 keeps "
		       "the global batch (4 micro-batches)\n");
	free(err);
	free(second);
	elastic_relaunch("session ranks=3 accumulate=1 micro_batches_kept=4 host=n1", 20, &rc, &err,
			 &second);
	CHECK_MSG(rc == 2, "rc %d: %s", rc, err);
	CHECK_CONTAINS(err, "chexnet-elastic: 'o/.generations/3': 'session ranks=3 accumulate=1 "
		       "micro_batches_kept=4 host=n1': not the record of the 2 ranks relaunched: stopping\n");
	CHECK_MSG(!strstr(err, "relaunching on"), "%s", err);
	CHECK_MSG(strstr(second, "\n0\n") != NULL, "the relaunched step was not ended: %s", second);
	free(err);
	free(second);
}

const struct test_case env_contrib_tests[] = {
	{ "manifests_match_the_runtime", test_manifests_match_the_runtime },
	{ "hvdrun_two_ranks_by_hand", test_hvdrun_two_ranks_by_hand },
	{ "hvdrun_stopped_takes_every_rank_down", test_hvdrun_stopped_takes_every_rank_down },
	{ "hvdrun_stopped_rank_ends_within_the_stall_limit", test_hvdrun_stopped_rank_ends_within_the_stall_limit },
	{ "hvdrun_ctrl_c_ends_a_stopped_rank", test_hvdrun_ctrl_c_ends_a_stopped_rank },
	{ "hvdrun_ctrl_c_exits_130_in_either_order", test_hvdrun_ctrl_c_exits_130_in_either_order },
	{ "hvdrun_takes_hosts_literally", test_hvdrun_takes_hosts_literally },
	{ "hvdrun_failed_rank_ends_the_others", test_hvdrun_failed_rank_ends_the_others },
	{ "hvdrun_on_an_older_bash", test_hvdrun_on_an_older_bash },
	{ "hvdrun_never_busy_waits", test_hvdrun_never_busy_waits },
	{ "hvdrun_remote_script_under_dash", test_hvdrun_remote_script_under_dash },
	{ "hvdrun_refuses_an_old_shell", test_hvdrun_refuses_an_old_shell },
	{ "pod_command_preempted_then_resumed", test_pod_command_preempted_then_resumed },
	{ "docker_images_carry_every_library", test_docker_images_carry_every_library },
	{ "job_manifest_valid_for_every_claimed_version", test_job_manifest_valid_for_every_claimed_version },
	{ "elastic_driver_says_chexnets_decision_and_refuses_another",
	  test_elastic_driver_says_chexnets_decision_and_refuses_another },
	{ 0 }
};
