/* test_build.c - the build system's promises: dependency detection lines,
 * WITH_<X>=1 with the dependency absent stops with one line naming the
 * package, WITH_<X>=0 turns a feature off, oneDNN 3.x as well as 2.x is
 * found, DNNL_HOME and a CFLAGS on make's command line are honoured. What
 * it does not do: build the whole tree again (make check already did).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "runner.h"

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += (*s == '\n');
	return n;
}

static void test_detect_prints_one_line_per_dependency(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/mk/detect.sh' '%s/b'", test_src_dir(), test_tmpdir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_INT(count_lines(p.out), 18);   /* 17 libraries + libFuzzer */
	const char *names[] = { "CUDA runtime", "cuDNN", "cuBLAS", "NCCL", "PMIx", "nettle", "OpenMPI",
				"hwloc", "oneDNN", "Slurm SPANK", "libspng", "libturbojpeg",
				"cJSON", "cairo", "GDCM", "zlib", "libyaml", "libFuzzer" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_CONTAINS(p.out, names[i]);
	test_proc_free(&p);
	/* cached: the same lines again, and the config file records them */
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(count_lines(p.out), 18);   /* 17 libraries + libFuzzer */
	test_proc_free(&p);
	char *conf = test_path(test_tmpdir(), "b/config.mk");
	char *text = test_read_file(conf, NULL);
	CHECK_CONTAINS(text, "HAVE_PMIX := ");
	CHECK_CONTAINS(text, "HAVE_DNNL := ");
	free(text);
	free(conf);
}

/* "Point detection at an empty prefix": no pkg-config files and no headers
 * in the default path, so PMIx cannot be found. */
static void test_with_pmix_1_missing_is_one_line_error(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/empty' && cd '%s' && PKG_CONFIG_LIBDIR='%s/empty' "
		 "make --no-print-directory B='%s/b' WITH_PMIX=1 all",
		 test_tmpdir(), test_src_dir(), test_tmpdir(), test_tmpdir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: build: 'PMIx (pkg-config pmix)': not found but WITH_PMIX=1: install libpmix-dev");
	CHECK(strstr(p.out, "✗ PMIx (pkg-config pmix): not found (Debian package libpmix-dev)") ||
	      strstr(p.err, "✗ PMIx (pkg-config pmix): not found (Debian package libpmix-dev)"));
	test_proc_free(&p);
}

/* The config.mk that detect.sh wrote into the case's folder DIR has want. */
static void config_has(const char *dir, const char *want)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "%s/config.mk", dir);
	char *conf = test_path(test_tmpdir(), rel);
	char *text = test_read_file(conf, NULL);
	CHECK_CONTAINS(text, want);
	free(text);
	free(conf);
}

static void test_with_x_0_forces_off(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "WITH_CUDA=0 WITH_DNNL=0 '%s/mk/detect.sh' '%s/b'",
		 test_src_dir(), test_tmpdir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "✗ CUDA runtime + nvcc (");
	CHECK_CONTAINS(p.out, "off (WITH_CUDA=0)");
	CHECK_CONTAINS(p.out, "✗ oneDNN (dnnl.h): off (WITH_DNNL=0)");
	test_proc_free(&p);
	config_has("b", "HAVE_CUDA := 0");
	config_has("b", "HAVE_DNNL := 0");
}

/* WITH_FUZZER=0 on make's command line reaches detection (make before
 * 4.4 passes $(shell) no command-line variable it is not given): no
 * libFuzzer probe, no fuzz targets (the emulated build's way). */
static void test_with_fuzzer_0_from_make_forces_off(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && make --no-print-directory B='%s/b' WITH_CUDA=0 "
		 "WITH_FUZZER=0 '%s/b/config.mk'", test_src_dir(), test_tmpdir(), test_tmpdir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.err, "✗ libFuzzer (clang): off (WITH_FUZZER=0)");
	test_proc_free(&p);
	config_has("b", "HAVE_FUZZER := 0");
}

/* oneDNN 3.x (Debian 13 and Ubuntu 24.04 ship only 3.x): the real 3.2
 * from PyPI (mk/onednn3.sh, into the prefix group cpu-onednn3's build
 * uses: one download) as DNNL_HOME is found, named with its version and
 * used; the system's 2.x stays the default. The cpu backend built on it:
 * group cpu-onednn3. */
static void test_onednn_3_is_found_and_used(void)
{
	char cmd[8192], want[PATH_MAX + 64];
	struct test_proc p;
	const char *t = test_tmpdir();
	char *b = test_path(test_build_dir(), "onednn3-build");
	snprintf(cmd, sizeof(cmd), "'%s/mk/onednn3.sh' '%s/onednn-3.2'", test_src_dir(), b);
	CHECK(test_run(cmd, 240, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "oneDNN 3.2 from PyPI: %s", p.err);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "DNNL_HOME='%s/onednn-3.2' '%s/mk/detect.sh' '%s/b'", b,
		 test_src_dir(), t);
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "✓ oneDNN 3.2.0 (dnnl.h)");
	test_proc_free(&p);
	config_has("b", "HAVE_DNNL := 1");
	snprintf(want, sizeof(want), "-I%s/onednn-3.2/include", b);
	config_has("b", want);
	snprintf(cmd, sizeof(cmd), "'%s/mk/detect.sh' '%s/b2'", test_src_dir(), t);
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_CONTAINS(p.out, "✓ oneDNN 2.");   /* the system's, Debian 12's */
	test_proc_free(&p);
	free(b);
}

/* DNNL_HOME naming a 2.x installation (the system's own oneDNN headers
 * and library, linked into the case's folder): used, and named. */
static void test_dnnl_home_with_a_2x_is_used(void)
{
	char cmd[8192];
	struct test_proc p;
	const char *t = test_tmpdir();
	snprintf(cmd, sizeof(cmd),
		 "lib=$(cc -print-file-name=libdnnl.so) && [ -e \"$lib\" ] && "
		 "inc=$(echo '#include <oneapi/dnnl/dnnl.h>' | cc -E -M - | tr ' \\\\' '\\n\\n' | "
		 "grep -m1 'oneapi/dnnl/dnnl.h$') && mkdir -p '%s/d2/include' '%s/d2/lib' && "
		 "ln -s \"$(dirname \"$(dirname \"$inc\")\")\" '%s/d2/include/oneapi' && "
		 "ln -s \"$(readlink -f \"$lib\")\" '%s/d2/lib/libdnnl.so' && "
		 "DNNL_HOME='%s/d2' '%s/mk/detect.sh' '%s/b'",
		 t, t, t, t, t, test_src_dir(), t);
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "detect with DNNL_HOME failed: %s", p.err);
	CHECK_CONTAINS(p.out, "✓ oneDNN 2.");
	test_proc_free(&p);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "DNNL_CFLAGS := -I%s/d2/include", t);
	config_has("b", want);
	snprintf(want, sizeof(want), "DNNL_LIBS := -L%s/d2/lib -Wl,-rpath,%s/d2/lib -ldnnl", t, t);
	config_has("b", want);
}

/* A CFLAGS on make's command line (a site's -march) adds to the module
 * flags, never replaces them: the cpu backend keeps -fopenmp, the registry
 * keeps every backend this build has. */
static void test_cflags_on_the_command_line_keep_module_flags(void)
{
	char cmd[8192], goals[2 * PATH_MAX + 128];
	struct test_proc p;
	const char *t = test_tmpdir();
	int n = snprintf(goals, sizeof(goals), "'%s/b/obj/trainer/backend/registry.o'", t);
#ifdef HAVE_CPU_BACKEND
	snprintf(goals + n, sizeof(goals) - (size_t)n, " '%s/b/obj/trainer/backend/cpu/cpu_move.o'", t);
#endif
	(void)n;
	snprintf(cmd, sizeof(cmd), "cd '%s' && make --no-print-directory B='%s/b' "
		 "CFLAGS=-DHVD_SITE_FLAG %s && nm '%s/b/obj/trainer/backend/registry.o'",
		 test_src_dir(), t, goals, t);
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "make with CFLAGS on its command line failed: %s", p.err);
	CHECK_CONTAINS(p.out, "U backend_ref_ops");
#ifdef HAVE_CPU_BACKEND
	CHECK_CONTAINS(p.out, "U backend_cpu_ops");
#endif
#ifdef HAVE_GPU_BACKEND
	CHECK_CONTAINS(p.out, "U backend_gpu_ops");
#endif
	test_proc_free(&p);
}

/* A build without GDCM (WITH_GDCM=0) still builds the pipeline and
 * refuses a DICOM file in one line naming the feature. Only chexnet-data
 * is built, at -O0, into the case's own folder. */
static void test_without_gdcm_dicom_is_refused_naming_the_feature(void)
{
	char cmd[8192], *dcm = test_path(test_tmpdir(), "d/images/x.dcm");
	struct test_proc p;
	uint8_t dicm[200] = { 0 };
	memcpy(dicm + 128, "DICM", 4);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && make --no-print-directory B='%s/b' WITH_GDCM=0 OPT=-O0 '%s/b/chexnet-data' "
		 "> '%s/make.log' 2>&1 && grep -q '✗ GDCM (DICOM, C++): off (WITH_GDCM=0)' '%s/make.log' && "
		 "mkdir -p '%s/d/images'", test_src_dir(), test_tmpdir(), test_tmpdir(), test_tmpdir(),
		 test_tmpdir(), test_tmpdir());
	CHECK(test_run(cmd, 280, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "the WITH_GDCM=0 build failed (see make.log)");
	test_proc_free(&p);
	test_write_file(dcm, dicm, sizeof(dicm));
	static const char *head = "path,Atelectasis,Cardiomegaly,Effusion,Infiltration,Mass,Nodule,Pneumonia,"
		"Pneumothorax,Consolidation,Edema,Emphysema,Fibrosis,Pleural_Thickening,Hernia\n";
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/d' && printf '%s' > test.csv && { cat test.csv; echo 'images/x.dcm,0,0,0,0,0,0,0,0,0,0,0,0,0,0'; } "
		 "> train.csv && '%s/b/chexnet-data' pack --data . --out ../p --size 16",
		 test_tmpdir(), head, test_tmpdir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "chexnet: image './images/x.dcm': DICOM: this build has no DICOM support "
		       "(feature WITH_GDCM: install libgdcm-dev and rebuild)\n");
	test_proc_free(&p);
	free(dcm);
}

const struct test_case build_tests[] = {
	{ "detect_prints_one_line_per_dependency", test_detect_prints_one_line_per_dependency },
	{ "with_pmix_1_missing_is_one_line_error", test_with_pmix_1_missing_is_one_line_error },
	{ "with_x_0_forces_off", test_with_x_0_forces_off },
	{ "with_fuzzer_0_from_make_forces_off", test_with_fuzzer_0_from_make_forces_off },
	{ "onednn_3_is_found_and_used", test_onednn_3_is_found_and_used },
	{ "dnnl_home_with_a_2x_is_used", test_dnnl_home_with_a_2x_is_used },
	{ "cflags_on_the_command_line_keep_module_flags", test_cflags_on_the_command_line_keep_module_flags },
	{ "without_gdcm_dicom_is_refused_naming_the_feature", test_without_gdcm_dicom_is_refused_naming_the_feature },
	{ 0 }
};
