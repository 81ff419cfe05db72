/* test_cpu_onednn3.c - the cpu backend on oneDNN 3.x: the tree built
 * again against the real oneDNN 3.2 from PyPI into BUILD/onednn3-build
 * (without GPU, runtime and DICOM parts) as a user would: make deps
 * ONEDNN=3 puts it in the build's own prefix, make ONEDNN=3 uses it; that
 * build's own cpu groups run there: ISA
 * dispatch and refusals, every layer's values and gradients against ref
 * (native and capped to AVX2 and SSE4.1), the models against ref; and
 * make deb ONEDNN=3 bundles that oneDNN into chexnet's package. The
 * system's oneDNN 2.x runs the same groups in the main build. What it does
 * not run on 3.x: cpu-learning, whose one-seed bf16 criterion the
 * backend's README shows failing by seed on either major.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* What the cpu groups do not use, left out of the second build (a
 * third of its compile time); without libyaml, its chexnet shows
 * --config refused in one line. */
#define WITHOUT_UNUSED "WITH_CUDA=0 WITH_CUDNN=0 WITH_CUBLAS=0 WITH_NCCL=0 WITH_PMIX=0 " \
	"WITH_MPI=0 WITH_GDCM=0 WITH_CAIRO=0 WITH_FUZZER=0 WITH_YAML=0"

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
	/* built without libyaml (WITH_YAML=0): --config refused in one line */
	snprintf(cmd, sizeof(cmd), "cd '%s' && echo 'batch: 4' > r.yaml && '%s/chexnet' train "
		 "--synthetic --config r.yaml", t, b);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "chexnet: --config: 'r.yaml': this chexnet was built without recipe files "
		  "(feature WITH_YAML: install libyaml-dev and nettle-dev and rebuild)\n");
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

/* make deb ONEDNN=3 on the prefix make deps ONEDNN=3 made for this
 * build (packed with xz -1: the 53 MiB library takes 19 s at dpkg's
 * default level 6, 3 s at 1): chexnet's package ships that libdnnl.so.3
 * in its own folder and nothing of Debian's oneDNN; unpacked anywhere,
 * its chexnet loads that
 * library (ldd, and oneDNN's own verbose line naming 3.2.0) and trains a
 * step; lintian finds no error. */
static void test_deb_bundles_onednn_3_2(void)
{
	if (system("command -v dpkg-deb > /dev/null && command -v dpkg-shlibdeps > /dev/null") != 0) {
		test_skip("dpkg-deb or dpkg-shlibdeps missing (not Debian, or no dpkg-dev: make test-deps)");
		return;
	}
	char cmd[4 * PATH_MAX], want[1024];
	const char *b = build3(), *t = test_tmpdir();
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
		 "deb ONEDNN=3 B='%s' DEB_B='%s-deb' DEB_XZ_LEVEL=1 > '%s/make.log' 2>&1 || { tail -30 '%s/make.log' >&2; exit 1; }",
		 test_src_dir(), b, b, t, t);
	free(test_output_of(cmd, 300));
	char *ma = test_output_of("dpkg-architecture -qDEB_HOST_MULTIARCH", 10);
	snprintf(cmd, sizeof(cmd), "dpkg-deb -c '%s-deb/deb/'chexnet_*.deb | "
		 "awk '{print $1, $6}'", b);
	char *list = test_output_of(cmd, 30);
	snprintf(want, sizeof(want), "drwxr-xr-x ./usr/lib/%s/chexnet/\n"
		 "-rw-r--r-- ./usr/lib/%s/chexnet/libdnnl.so.3\n", ma, ma);
	CHECK_CONTAINS(list, want);
	CHECK_CONTAINS(list, "-rw-r--r-- ./usr/share/doc/chexnet/onednn-THIRD-PARTY-PROGRAMS.gz\n");
	CHECK_CONTAINS(list, "-rwxr-xr-x ./usr/bin/chexnet\n");
	free(list);
	snprintf(cmd, sizeof(cmd), "dpkg-deb -f '%s-deb/deb/'chexnet_*.deb Depends Description; "
		 "dpkg-deb --ctrl-tarfile '%s-deb/deb/'chexnet_*.deb | tar -t | sort | tr '\\n' ' '",
		 b, b);
	char *ctl = test_output_of(cmd, 30), *desc = strstr(ctl, "\nDescription: ");
	CHECK(desc != NULL);
	size_t depends = desc ? (size_t)(desc - ctl) : strlen(ctl);
	CHECK_MSG(memmem(ctl, depends, "libgomp1", 8) != NULL, "no libgomp1 (oneDNN's OpenMP): %s", ctl);
	CHECK_MSG(memmem(ctl, depends, "libdnnl", 7) == NULL, "a dependency on Debian's oneDNN: %s", ctl);
	snprintf(want, sizeof(want), " This package bundles oneDNN 3.2.0 (PyPI's onednn-cpu-gomp 2023.2.0,\n"
		 " Apache-2.0) as /usr/lib/%s/chexnet/libdnnl.so.3,\n", ma);
	CHECK_CONTAINS(ctl, want);
	/* a private library: no shlibs file, no ldconfig trigger */
	CHECK_CONTAINS(ctl, "./ ./control ./md5sums ");
	free(ctl);
	snprintf(cmd, sizeof(cmd), "dpkg-deb -x '%s-deb/deb/'chexnet_*.deb '%s/root' && "
		 "grep -A3 '^Files: ' '%s/root/usr/share/doc/chexnet/copyright'", b, t, t);
	char *copyright = test_output_of(cmd, 30);
	snprintf(want, sizeof(want), "Files: /usr/lib/%s/chexnet/libdnnl.so.3\noneDNN 3.2.0 (PyPI onednn-cpu-gomp "
		 "2023.2.0), Copyright Intel Corporation,\nunder the Apache License 2.0: on Debian systems its text is in\n"
		 "/usr/share/common-licenses/Apache-2.0.", ma);
	CHECK_CONTAINS(copyright, want);
	free(copyright);
	snprintf(cmd, sizeof(cmd), "ldd '%s/root/usr/bin/chexnet' | grep -F libdnnl", t);
	char *ldd = test_output_of(cmd, 30);
	snprintf(want, sizeof(want), "libdnnl.so.3 => %s/root/usr/bin/../lib/%s/chexnet/libdnnl.so.3 (", t, ma);
	CHECK_CONTAINS(ldd, want);
	free(ldd);
	snprintf(cmd, sizeof(cmd), "ONEDNN_VERBOSE=1 '%s/root/usr/bin/chexnet' bench --backend cpu --batch 2 "
		 "--size 64 --steps 1 2>&1 | grep -v -e ',exec,' -e ',create:'", t);
	char *bench = test_output_of(cmd, 120);
	CHECK_CONTAINS(bench, "onednn_verbose,info,oneDNN v3.2.0 (");
	CHECK_CONTAINS(bench, "bench: densenet121 cpu fp32 (");
	free(bench);
	if (system("command -v lintian > /dev/null") == 0) {
		snprintf(cmd, sizeof(cmd), "lintian '%s-deb/deb/'chexnet_*.deb 2> /dev/null", b);
		free(test_output_of(cmd, 120));
	}
	free(ma);
}

/* pkg/deb.sh refuses to bundle a prefix without oneDNN's licence (an
 * older make deps ONEDNN=3 kept none) and refuses a chexnet with the
 * bundle's run path when no oneDNN is bundled: nothing written. */
static void test_deb_refuses_a_bundle_it_cannot_stand_behind(void)
{
	char cmd[4 * PATH_MAX];
	struct test_proc p;
	const char *b = build3(), *t = test_tmpdir();
	char stage[PATH_MAX];
	snprintf(stage, sizeof(stage), "%s-deb/stage", b);
	if (access(stage, F_OK) != 0) {
		test_skip("'%s': no staged install (deb_bundles_onednn_3_2 did not build it)", stage);
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/p' && cp -a '%s/onednn-3.2/include' '%s/onednn-3.2/lib' "
		 "'%s/onednn-3.2/.done' '%s/p/' && '%s/pkg/deb.sh' '%s' '%s/out' 1.0 22.05.8 'A B <a@b.c>' '%s/p'",
		 t, b, b, b, t, test_src_dir(), stage, t, t);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK(p.exit_code != 0);
	char want[2 * PATH_MAX];
	snprintf(want, sizeof(want), "hvd: deb: '%s/p': no lib/libdnnl.so.3 or "
		 "share/doc/onednn/{LICENSE,THIRD-PARTY-PROGRAMS} (make deps ONEDNN=3)\n", t);
	CHECK_STR(p.err, want);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/pkg/deb.sh' '%s' '%s/out2' 1.0 22.05.8 'A B <a@b.c>'",
		 test_src_dir(), stage, t);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: deb: 'usr/bin/chexnet': run path '$ORIGIN/../lib/");
	CHECK_CONTAINS(p.err, "/chexnet': a package's programs have none (RPATH=0)\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "find '%s/out' '%s/out2' -name '*.deb' | wc -l", t, t);
	char *n = test_output_of(cmd, 10);
	CHECK_STR(n, "0");
	free(n);
}

#define ROW(name) { #name, test_##name }
const struct test_case cpu_onednn3_tests[] = {
	ROW(tree_builds_on_3_2),
	ROW(cpu_isa_on_3_2), ROW(cpu_layers_on_3_2), ROW(cpu_layers_avx2_on_3_2),
	ROW(cpu_layers_sse41_on_3_2), ROW(cpu_models_on_3_2), ROW(cpu_models_sse41_on_3_2),
	ROW(deb_bundles_onednn_3_2), ROW(deb_refuses_a_bundle_it_cannot_stand_behind),
	{ NULL, NULL },
};
