/* test_packages_slurm.c - group "slurm-packages": the hvd.so of the
 * hvd-slurm-plugin package (stripped, no run path, pkg/deb.sh) loads
 * into the test cluster's real Slurm through the line of its conffile:
 * srun --hvd=help names the version and Slurm release, and with the line
 * made `required` (as spank/USAGE.md tells admins) a job runs, so srun
 * and slurmstepd both loaded it. The package is built by `make deb` in the
 * suite's BUILD/deb (as group packages does) and extracted with dpkg-deb
 * -x into the case's temp dir; the conffile's path is rewritten to that
 * root. What it does not do: install the package on this machine.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#ifndef HVD_SLURM_VERSION
#define HVD_SLURM_VERSION "(no Slurm headers)"
#endif

static void run_ok(const char *cmd, int timeout_s, struct test_proc *p)
{
	CHECK_INT(test_run(cmd, timeout_s, p), 0);
	CHECK_MSG(p->exit_code == 0, "'%.300s': exit %d: %s", cmd, p->exit_code, test_tail(p->err, 800));
}

static void test_packaged_plugin_loads_into_slurm(void)
{
	if (system("command -v dpkg-deb > /dev/null && command -v dpkg-shlibdeps > /dev/null") != 0)
		SKIP("dpkg-deb or dpkg-shlibdeps missing (not Debian, or no dpkg-dev: make test-deps)");
	char *so = test_path(test_build_dir(), "hvd.so");
	int built = access(so, F_OK) == 0;
	free(so);
	if (!built)
		SKIP("this build has no hvd.so (Slurm or hwloc not found)");
	const char *t = test_tmpdir();
	char cmd[4 * PATH_MAX];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory deb "
		 "DEB_B='%s/deb' > /dev/null && dpkg-deb -x '%s/deb/deb/'hvd-slurm-plugin_*.deb '%s/root'",
		 test_src_dir(), test_build_dir(), test_build_dir(), t);
	run_ok(cmd, 280, &p);
	test_proc_free(&p);
	/* the conffile's line, its plugin path moved under the extracted root */
	char conf[PATH_MAX + 32];
	snprintf(conf, sizeof(conf), "%s/plugstack.conf", test_cluster_dir());
	snprintf(cmd, sizeof(cmd), "grep -v '^#' '%s/root/etc/slurm/plugstack.conf.d/hvd.conf' | "
		 "sed 's| /usr/lib/| %s/root/usr/lib/|' > '%s' && cat '%s'", t, t, conf, conf);
	run_ok(cmd, 10, &p);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "optional %s/root/usr/lib/", t);
	CHECK_MSG(!strncmp(p.out, want, strlen(want)), "plugstack line '%s'", p.out);
	test_proc_free(&p);
	CHECK_INT(test_run("srun --hvd=help -n 1 true", 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "srun --hvd=help: exit 0 (it stops after the help)");
	CHECK_CONTAINS(p.err, "hvd: --hvd[=LIST]");
	CHECK_CONTAINS(p.err, "  hvd " HVD_VERSION ", built for Slurm " HVD_SLURM_VERSION "\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "sed -i 's/^optional /required /' '%s'", conf);
	run_ok(cmd, 10, &p);
	test_proc_free(&p);
	CHECK_INT(test_run("srun -n 1 echo ran", 60, &p), 0);
	CHECK_MSG(p.exit_code == 0 && !strcmp(p.out, "ran\n"), "required: exit %d: %s%s", p.exit_code, p.out,
		  test_tail(p.err, 600));
	test_proc_free(&p);
	CHECK_INT(test_cluster_plugstack(""), 0);
}

const struct test_case slurm_packages_tests[] = {
	{ "packaged_plugin_loads_into_slurm", test_packaged_plugin_loads_into_slurm },
	{ 0 },
};
