/* test_stop_wait.c - SIGTERM where a command waits on something else
 * (issue 19): `chexnet predict` over many images ends within 10 s with a
 * non-zero status and a line saying it was interrupted; `chexnet train`
 * whose loader waits for images that never come (every image open stalls
 * forever, through an LD_PRELOAD shim built here: tests/stall_shim.c, as
 * on a hung NFS server) ends within 10 s, non-zero, naming the
 * interrupted wait, and does not wait for the stuck worker threads.
 * What it does not test: stops in validation (test_stop_anywhere.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static void run(const char *cmd_fmt, const char *arg, int timeout_s, struct test_proc *p)
{
	char cmd[8192], inner[4096];
	snprintf(inner, sizeof(inner), cmd_fmt, arg);
	snprintf(cmd, sizeof(cmd), "cd '%s' && B='%s' && S='%s' && %s", test_tmpdir(), test_build_dir(),
		 test_src_dir(), inner);
	CHECK(test_run(cmd, timeout_s, p) == 0);
}

/* Starts `env chexnet args` in the background, sends SIGTERM `after_s`
 * seconds after `mark` shows on its stderr; p->out gets "rc=N secs=S". */
static void term_after(const char *env, const char *args, const char *mark, int after_s,
		       struct test_proc *p)
{
	char inner[4096];
	snprintf(inner, sizeof(inner), "(%s \"$B/chexnet\" %s > out.txt 2> err.txt & c=$!; "
		 "for i in $(seq 1200); do grep -q '%s' err.txt && break; sleep 0.05; done; sleep %d; "
		 "kill -TERM $c; t0=$(date +%%s); wait $c; echo rc=$? secs=$(( $(date +%%s) - t0 )); "
		 "cat err.txt >&2)", env, args, mark, after_s);
	run("%s", inner, 120, p);
}

static int stop_seconds(const struct test_proc *p)
{
	const char *s = strstr(p->out ? p->out : "", "secs=");
	return s ? atoi(s + 5) : 99;
}

static void test_sigterm_ends_predict_within_10s(void)
{
	struct test_proc p;
	run("\"$B/chexnet\" train --synthetic --synthetic-images 16 --batch 16 --size 128 --threads 1 "
	    "--quiet --out ck && \"$B/chexnet\" synth --out d --count 1 --size 128%s", "", 300, &p);
	CHECK_MSG(p.exit_code == 0, "setup: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	char args[512];
	snprintf(args, sizeof(args), "predict --checkpoint ck/last --size 128 --threads 1 "
		 "$(for i in $(seq 2000); do echo d/images/*.png; done)");
	term_after("", args, "parameters", 1, &p);
	CHECK_CONTAINS(p.out, "rc=75");
	CHECK_CONTAINS(p.err, "chexnet: predict: interrupted (SIGTERM) after ");
	CHECK_CONTAINS(p.err, " of 2000 images; exit 75");
	CHECK_MSG(stop_seconds(&p) <= 10, "predict took %d s to stop", stop_seconds(&p));
	test_proc_free(&p);
}

static void test_sigterm_ends_a_loader_wait_within_10s(void)
{
	struct test_proc p;
	run("cc -shared -fPIC -O1 -o shim.so \"$S/tests/stall_shim.c\" -ldl && "
	    "\"$B/chexnet\" synth --out d --count 24 --size 64 --seed 4%s", "", 120, &p);
	CHECK_MSG(p.exit_code == 0, "setup: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	term_after("LD_PRELOAD=$PWD/shim.so ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" "
		   "HVD_STALL_PATH=/images/",
		   "train --data d --batch 4 --size 64 --threads 1 --epochs 1 --out o",
		   "parameters", 3, &p);
	CHECK(strstr(p.out, "rc=") && !strstr(p.out, "rc=0"));
	CHECK_CONTAINS(p.err, "chexnet: loader: interrupted (stop requested) after waiting ");
	CHECK_CONTAINS(p.err, "still blocked in a read; left running");
	CHECK_MSG(stop_seconds(&p) <= 10, "train took %d s to stop", stop_seconds(&p));
	test_proc_free(&p);
}

const struct test_case stop_wait_tests[] = {
	{ "sigterm_ends_predict_within_10s", test_sigterm_ends_predict_within_10s },
	{ "sigterm_ends_a_loader_wait_within_10s", test_sigterm_ends_a_loader_wait_within_10s },
	{ 0 }
};
