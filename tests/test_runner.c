/* test_runner.c - the runner checks itself: a hidden group whose cases
 * pass, fail, skip, crash and hang must give the right lines, counts and
 * exit status. What it does not do: test any product code.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* ---- the hidden "selftest" group (its failures are the point) ---- */
static void selftest_passes(void) { CHECK(1 + 1 == 2); CHECK_NEAR(1.0, 1.0 + 1e-9, 1e-6, 0); }
static void selftest_fails(void) { CHECK_INT(2 + 2, 5); CHECK(0 == 1); }
static void selftest_skips(void) { SKIP("no such thing here"); }
static void selftest_crashes(void) { abort(); }
static void selftest_hangs(void) { for (;;) pause(); }

const struct test_case selftest_tests[] = {
	{ "selftest_passes", selftest_passes },
	{ "selftest_fails", selftest_fails },
	{ "selftest_skips", selftest_skips },
	{ "selftest_crashes", selftest_crashes },
	{ "selftest_hangs", selftest_hangs },
	{ 0 }
};

/* ---- real runner tests ---- */
static const char *last_line(const char *s)
{
	const char *end = s + strlen(s);
	while (end > s && end[-1] == '\n')
		end--;
	const char *p = end;
	while (p > s && p[-1] != '\n')
		p--;
	static char line[256];
	snprintf(line, sizeof(line), "%.*s", (int)(end - p), p);
	return line;
}

static void test_runner_reports_failures(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "ok selftest_passes\n");
	CHECK_CONTAINS(p.out, "FAIL selftest_fails test_runner.c:");
	CHECK_CONTAINS(p.out, "2 + 2 == 5 (4 != 5)");
	CHECK_CONTAINS(p.out, "skip selftest_skips: no such thing here\n");
	CHECK_CONTAINS(p.out, "FAIL selftest_crashes: killed by signal 6");
	CHECK_CONTAINS(p.out, "FAIL selftest_hangs: timed out after 3 s");
	CHECK_CONTAINS(p.out, "-- group selftest:");
	CHECK_STR(last_line(p.out), "1 passed, 3 failed, 1 skipped");
	test_proc_free(&p);
}

static void test_runner_filter_and_all_pass(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest selftest_passes", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(last_line(p.out), "1 passed, 0 failed");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' --bogus", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "unknown option: '--bogus'");
	test_proc_free(&p);
}

static void test_run_captures_and_times_out(void)
{
	struct test_proc p;
	CHECK(test_run("echo out; echo err >&2; exit 3", 10, &p) == 0);
	CHECK_STR(p.out, "out\n");
	CHECK_STR(p.err, "err\n");
	CHECK_INT(p.exit_code, 3);
	CHECK(!p.timed_out);
	test_proc_free(&p);
	CHECK(test_run("sleep 30 & sleep 30; echo never", 1, &p) == 0);
	CHECK(p.timed_out);
	CHECK(p.seconds < 5);
	CHECK_STR(p.out, "");
	test_proc_free(&p);
}

static void test_tmpdir_is_fresh(void)
{
	char *f = test_path(test_tmpdir(), "x");
	CHECK(access(f, F_OK) != 0);
	CHECK(test_write_file(f, "abc", 3) == 0);
	size_t n = 0;
	char *back = test_read_file(f, &n);
	CHECK_INT(n, 3);
	CHECK_STR(back, "abc");
	free(back);
	free(f);
}

const struct test_case runner_tests[] = {
	{ "runner_reports_failures", test_runner_reports_failures },
	{ "runner_filter_and_all_pass", test_runner_filter_and_all_pass },
	{ "run_captures_and_times_out", test_run_captures_and_times_out },
	{ "tmpdir_is_fresh", test_tmpdir_is_fresh },
	{ 0 }
};
