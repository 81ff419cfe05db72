/* test_cpu_onednn3.c - the cpu backend on oneDNN 3.x: the tree built
 * again against the real oneDNN 3.2 from PyPI into BUILD/onednn3-build
 * (without GPU, runtime and DICOM parts) as a user would: make deps
 * ONEDNN=3 puts it in the build's own prefix, make ONEDNN=3 uses it; that
 * build's own cpu groups run there: ISA
 * dispatch and refusals, every layer's values and gradients against ref
 * (native and capped to AVX2 and SSE4.1), the models against ref. The
 * system's oneDNN 2.x runs the same groups in the main build. What it does
 * not run on 3.x: cpu-learning, whose one-seed bf16 criterion the
 * backend's README shows failing by seed on either major.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* What the cpu groups do not use, left out of the second build (a
 * third of its compile time). */
#define WITHOUT_UNUSED "WITH_CUDA=0 WITH_CUDNN=0 WITH_CUBLAS=0 WITH_NCCL=0 WITH_PMIX=0 " \
	"WITH_MPI=0 WITH_GDCM=0 WITH_CAIRO=0 WITH_FUZZER=0"

static const char *build3(void)
{
	static char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/onednn3-build", test_build_dir());
	return dir;
}

/* The build's configuration names oneDNN 3.2's prefix; its test runner
 * and chexnet load oneDNN 3.2's library. */
static void test_tree_builds_on_3_2(void)
{
	char cmd[8192], want[PATH_MAX + 64];
	struct test_proc p;
	const char *b = build3(), *t = test_tmpdir();
	snprintf(cmd, sizeof(cmd), "cd '%s' && make --no-print-directory deps ONEDNN=3 B='%s' && "
		 "make --no-print-directory -j2 B='%s' ONEDNN=3 WITH_DNNL=1 "
		 WITHOUT_UNUSED " '%s/hvdtest' '%s/chexnet' > '%s/make.log' 2>&1; rc=$?; "
		 "[ $rc = 0 ] || tail -40 '%s/make.log'; exit $rc",
		 test_src_dir(), b, b, b, b, t, t);
	CHECK(test_run(cmd, 600, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "building against oneDNN 3.2: %.3000s %.1000s", p.out, p.err);
	CHECK_CONTAINS(p.out, "hvd: deps: oneDNN 3.2 in '");
	test_proc_free(&p);
	char *conf = test_path(b, "config.mk");
	char *text = test_read_file(conf, NULL);
	snprintf(want, sizeof(want), "DNNL_CFLAGS := -I%s/onednn-3.2/include", b);
	CHECK_CONTAINS(text, want);
	free(text);
	free(conf);
	snprintf(cmd, sizeof(cmd), "ldd '%s/hvdtest' '%s/chexnet' | grep -c '%s/onednn-3.2/lib/libdnnl.so.3'",
		 b, b, b);
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_MSG(p.exit_code == 0 && atoi(p.out) == 2, "ldd: %s", p.out);
	test_proc_free(&p);
}

/* One group of the 3.x build's runner: its last line "N passed, 0
 * failed", nothing failed on the way. */
static void run_group(const char *group)
{
	char cmd[PATH_MAX + 128];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -G '%s' 2>&1", build3(), group);
	CHECK(test_run(cmd, 600, &p) == 0);
	CHECK_MSG(p.exit_code == 0 && strstr(p.out, " passed, 0 failed") &&
		  !strstr(p.out, "FAIL"), "%s on oneDNN 3.2: exit %d: %.3000s", group,
		  p.exit_code, p.out);
	const char *last = strstr(p.out, " passed, ");
	while (last && last > p.out && last[-1] != '\n')
		last--;
	printf("  measured: oneDNN 3.2, %s: %.*s\n", group,
	       last ? (int)strcspn(last, "\n") : 0, last ? last : "");
	test_proc_free(&p);
}

static void test_cpu_isa_on_3_2(void) { run_group("cpu-isa"); }
static void test_cpu_layers_on_3_2(void) { run_group("cpu-layers"); }
static void test_cpu_layers_avx2_on_3_2(void) { run_group("cpu-layers@avx2"); }
static void test_cpu_layers_sse41_on_3_2(void) { run_group("cpu-layers@sse41"); }
static void test_cpu_models_on_3_2(void) { run_group("cpu-models"); }
static void test_cpu_models_sse41_on_3_2(void) { run_group("cpu-models@sse41"); }

#define ROW(name) { #name, test_##name }
const struct test_case cpu_onednn3_tests[] = {
	ROW(tree_builds_on_3_2),
	ROW(cpu_isa_on_3_2), ROW(cpu_layers_on_3_2), ROW(cpu_layers_avx2_on_3_2),
	ROW(cpu_layers_sse41_on_3_2), ROW(cpu_models_on_3_2), ROW(cpu_models_sse41_on_3_2),
	{ NULL, NULL },
};
