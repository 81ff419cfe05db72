/* test_fuzz.c - runs build/fuzz-control (tests/fuzz/fuzz_control.c, both
 * sides of the control plane's frame handling under libFuzzer, ASan and
 * UBSan) for FUZZ_S seconds (default 5; FUZZ_S=600 for a long run) and
 * checks it found nothing. Skipped where clang's libFuzzer is missing.
 * What it does not do: keep a corpus between runs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

static void test_control_frames_survive_fuzzing(void)
{
	char bin[4200];
	snprintf(bin, sizeof(bin), "%s/fuzz-control", test_build_dir());
	if (access(bin, X_OK)) {
		SKIP("no build/fuzz-control: clang's libFuzzer not found (make test-deps installs clang)");
		return;
	}
	const char *s = getenv("FUZZ_S");
	int secs = s && atoi(s) > 0 ? atoi(s) : 5;
	char *cmd = NULL;
	CHECK(asprintf(&cmd, "cd '%s' && ASAN_OPTIONS=detect_leaks=1 '%s' -max_total_time=%d "
		       "-rss_limit_mb=2048 -print_final_stats=1", test_tmpdir(), bin, secs) > 0);
	struct test_proc p;
	CHECK(test_run(cmd, secs + 60, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "fuzz-control: exit %d: %.2000s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "Done ");
	free(cmd);
	test_proc_free(&p);
}

const struct test_case fuzz_tests[] = {
	{ "control_frames_survive_fuzzing", test_control_frames_survive_fuzzing },
	{ 0 }
};
