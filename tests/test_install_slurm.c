/* test_install_slurm.c - group "slurm-install": an hvd.so built with
 * SLURM_HOME pointing at Slurm headers of another version reports that
 * version, and the real Slurm of the test cluster refuses to load it with
 * its own error (the message spank/USAGE.md quotes; the case prints it),
 * and that loaded as `optional` it lets jobs run (the rolling upgrade).
 * What it does not do: run a job with the plugin (group slurm-spank).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* Copies the Slurm headers the suite's build used into DIR/include/slurm
 * and sets their SLURM_VERSION_NUMBER to 24.11.0 (25.05.0 when the build's
 * is 24.x). Prints the new version string on stdout. */
static const char copy_headers_sh[] =
	"set -eu\n"
	"dir=$1 build=$2\n"
	"flags=$(sed -n 's/^SLURM_CFLAGS := //p' \"$build/config.mk\")\n"
	"hdr=$(echo '#include <slurm/spank.h>' | cc $flags -M -xc - | tr ' \\\\' '\\n\\n' |"
	" grep '/slurm/spank.h$')\n"
	"mkdir -p \"$dir/include\"\n"
	"cp -r \"$(dirname \"$hdr\")\" \"$dir/include/slurm\"\n"
	"v=$dir/include/slurm/slurm_version.h\n"
	"new=0x180b00 str=24.11.0\n"
	"grep -q '^#define SLURM_VERSION_NUMBER 0x18' \"$v\" && new=0x190500 str=25.05.0\n"
	"sed -i \"s/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER $new/\" \"$v\"\n"
	"printf %s \"$str\"\n";

static void run_ok(const char *cmd, int timeout_s, struct test_proc *p)
{
	CHECK_INT(test_run(cmd, timeout_s, p), 0);
	CHECK_MSG(p->exit_code == 0, "'%.200s': exit %d: %s", cmd, p->exit_code, test_tail(p->err, 600));
}

/* Builds T/b/hvd.so against the patched copy; returns its Slurm version. */
static char *build_for_other_slurm(void)
{
	const char *t = test_tmpdir();
	char cmd[4 * PATH_MAX];
	struct test_proc p;
	CHECK(test_put("copy.sh", copy_headers_sh) == 0);
	snprintf(cmd, sizeof(cmd), "sh '%s/copy.sh' '%s/slurm' '%s'", t, t, test_build_dir());
	run_ok(cmd, 30, &p);
	char *version = strdup(p.out);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && make --no-print-directory B='%s/b' SLURM_HOME='%s/slurm' '%s/b/hvd.so'",
		 test_src_dir(), t, t, t);
	run_ok(cmd, 240, &p);
	test_proc_free(&p);
	return version;
}

static void test_plugin_for_another_slurm_is_refused_by_slurm(void)
{
	const char *t = test_tmpdir();
	char *version = build_for_other_slurm();
	char cmd[2 * PATH_MAX], want[128];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "strings '%s/b/hvd.so'", t);
	run_ok(cmd, 30, &p);
	snprintf(want, sizeof(want), "built for Slurm %s\n", version);
	CHECK_CONTAINS(p.out, want);
	test_proc_free(&p);
	/* the cluster's plugstack.conf loads it; srun rereads it per job */
	char conf[PATH_MAX + 32], line[PATH_MAX + 32];
	snprintf(conf, sizeof(conf), "%s/plugstack.conf", test_cluster_dir());
	snprintf(line, sizeof(line), "required %s/b/hvd.so\n", t);
	CHECK(test_write_file(conf, line, strlen(line)) == 0);
	CHECK_INT(test_run("srun -n 1 true", 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "srun ran with a plugin built for Slurm %s", version);
	/* Slurm 22.05's words: plugin_load_from_file, then spank's */
	snprintf(want, sizeof(want), "/b/hvd.so version (%s)", version);
	CHECK_CONTAINS(p.err, "plugin_load_from_file: Incompatible Slurm plugin ");
	CHECK_CONTAINS(p.err, want);
	CHECK_CONTAINS(p.err, "hvd.so: Incompatible plugin version");
	printf("  Slurm says: %s", p.err);   /* the message spank/USAGE.md quotes */
	test_proc_free(&p);
	/* `optional` during a rolling upgrade: jobs run without the plugin */
	snprintf(line, sizeof(line), "optional %s/b/hvd.so\n", t);
	CHECK(test_write_file(conf, line, strlen(line)) == 0);
	CHECK_INT(test_run("srun -n 1 true", 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "optional: exit %d: %s", p.exit_code, p.err);
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
	CHECK_INT(test_run("srun -n 1 true", 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "srun with the suite's hvd.so: exit %d: %s", p.exit_code, p.err);
	test_proc_free(&p);
	free(version);
}

const struct test_case slurm_install_tests[] = {
	{ "plugin_for_another_slurm_is_refused_by_slurm",
	  test_plugin_for_another_slurm_is_refused_by_slurm },
	{ 0 },
};
