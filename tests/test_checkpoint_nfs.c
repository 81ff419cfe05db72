/* test_checkpoint_nfs.c - checkpoints on file systems without
 * renameat2(RENAME_EXCHANGE) (NFS, FUSE, Lustre; issue 19): an
 * LD_PRELOAD shim (tests/rename_shim.c, built here) fails renameat2 with
 * flags; a run with several saves must succeed and match a run without
 * the shim, and a SIGKILL at each point of the fallback sequence
 * followed by --resume must end with the same final checkpoint, byte
 * for byte, as an uninterrupted run.
 * Where the kernel allows a loopback NFS mount, the fence's frozen-writer
 * cases run on one; else that case is skipped with its reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* 2 epochs x 2 steps, OUT/last every step: 6 saves, 4 of them replacing. */
#define RUN "train --synthetic --synthetic-images 4 --batch 2 --size 64 --threads 1 " \
	"--optimizer sgd --lr 0.05 --epochs 2 --save-every 1 --quiet"

static int build_shim(void)
{
	char cmd[4096];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o '%s/shim.so' '%s/tests/rename_shim.c' -ldl",
		 test_tmpdir(), test_src_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	int ok = p.exit_code == 0;
	if (!ok)
		test_fail_at(__FILE__, __LINE__, "building the shim: %s", p.err);
	test_proc_free(&p);
	return ok;
}

/* env: extra variables (e.g. SHIM_KILL_AT=...), shim: preload it. */
static void chexnet(const char *env, int shim, const char *args, struct test_proc *p)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && %s %s ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" "
		 "'%s/chexnet' %s", test_tmpdir(), shim ? "LD_PRELOAD=./shim.so" : "", env,
		 test_build_dir(), args);
	CHECK(test_run(cmd, 120, p) == 0);
}

static void test_saves_without_rename_exchange(void)
{
	struct test_proc p;

	if (!build_shim())
		return;
	chexnet("", 0, RUN " --out plain", &p);
	CHECK_MSG(p.exit_code == 0, "without the shim: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	chexnet("", 1, RUN " --out nfs", &p);
	CHECK_MSG(p.exit_code == 0, "with the shim: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	test_same_file("nfs/last/model.safetensors", "plain/last/model.safetensors");
	test_same_file("nfs/last/training.safetensors", "plain/last/training.safetensors");
	test_same_file("nfs/best/model.safetensors", "plain/best/model.safetensors");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "ls -A '%s/nfs'", test_tmpdir());
	CHECK(test_run(cmd, 10, &p) == 0);
	/* no .old-* or .tmp-* left; .generations: the run's generations */
	CHECK_STR(p.out, ".generations\nbest\nlast\nmetrics.csv\nrun.json\ntb\n");
	test_proc_free(&p);
}

static void crash_then_resume(const char *point, const char *save)
{
	struct test_proc p;
	char env[256], out[64], args[512], a[128], b[128];

	snprintf(env, sizeof(env), "SHIM_KILL_AT=%s SHIM_KILL_SAVE=%s", point, save);
	snprintf(out, sizeof(out), "cut-%s-%s", point, save);
	snprintf(args, sizeof(args), RUN " --out %s", out);
	chexnet(env, 1, args, &p);
	CHECK_MSG(p.exit_code == 128 + 9, "%s: killed? exit %d: %.400s", point, p.exit_code, p.err);
	test_proc_free(&p);
	snprintf(args, sizeof(args), RUN " --out %s --resume %s", out, out);
	chexnet("", 1, args, &p);
	CHECK_MSG(p.exit_code == 0, "%s: resume: exit %d: %.600s", point, p.exit_code, p.err);
	if (strcmp(point, "after-aside") == 0)
		CHECK_CONTAINS(p.err, "/last' is missing: using '");
	test_proc_free(&p);
	snprintf(a, sizeof(a), "%s/last/model.safetensors", out);
	snprintf(b, sizeof(b), "whole/last/model.safetensors");
	CHECK_MSG(test_same_file(a, b), "crash %s in save %s", point, save);
	snprintf(a, sizeof(a), "%s/last/training.safetensors", out);
	snprintf(b, sizeof(b), "whole/last/training.safetensors");
	CHECK_MSG(test_same_file(a, b), "crash %s in save %s", point, save);
}

static void test_sigkill_at_each_fallback_step_then_resume(void)
{
	static const char *const points[] = { "before-aside", "after-aside", "after-place",
					       "in-remove" };
	struct test_proc p;

	if (!build_shim())
		return;
	chexnet("", 1, RUN " --out whole", &p);
	CHECK_MSG(p.exit_code == 0, "uninterrupted: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	for (int i = 0; i < 4; i++)
		crash_then_resume(points[i], "2");
	crash_then_resume("after-aside", "1");
}

/* What keeps a loopback NFS mount from being tried here, or NULL. */
static const char *no_loopback_nfs(void)
{
	struct test_proc p;
	static char why[256];

	if (geteuid() != 0)
		return "mounting needs root";
	CHECK(test_run("grep -qw nfs /proc/filesystems && grep -qw nfsd /proc/filesystems", 10, &p) == 0);
	int kernel = p.exit_code == 0;
	test_proc_free(&p);
	if (!kernel)
		return "this kernel has no NFS client or server (nfs, nfsd not in /proc/filesystems)";
	CHECK(test_run("command -v exportfs && command -v rpc.nfsd && command -v rpc.mountd", 10, &p) == 0);
	snprintf(why, sizeof(why), "%s", p.exit_code ? "no NFS server tools (Debian's "
		 "nfs-kernel-server: exportfs, rpc.nfsd, rpc.mountd)" : "");
	test_proc_free(&p);
	return why[0] ? why : NULL;
}

/* The fence's frozen-writer cases (group trainer-survivors) with the run
 * folder on a loopback NFS mount (NFSv3, attribute caching on), where
 * the kernel and the installed tools allow one; else skipped, saying
 * why. A failure to set the mount up is a skip too (its reason is the
 * setup's last line); once mounted, every case must pass. */
static void test_a_frozen_older_writer_on_a_loopback_nfs_mount(void)
{
	const char *why = no_loopback_nfs();
	char cmd[8192];
	struct test_proc p;

	if (why)
		SKIP("%s", why);
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; mkdir -p export mnt; "
		 "(rpcbind || :; rpc.mountd; rpc.nfsd 2) >/dev/null 2>&1; "
		 "exportfs -o rw,sync,no_root_squash,insecure,fsid=7357 \"127.0.0.1:$PWD/export\"; "
		 "mount -t nfs -o vers=3,nolock,actimeo=60 \"127.0.0.1:$PWD/export\" mnt",
		 test_tmpdir());
	CHECK(test_run(cmd, 60, &p) == 0);
	int mounted = p.exit_code == 0;
	char err[512];
	snprintf(err, sizeof(err), "%.500s", p.err);
	test_proc_free(&p);
	if (mounted) {
		snprintf(cmd, sizeof(cmd), "cd '%s' && HVD_FENCE_ROOT=\"$PWD/mnt\" '%s/hvdtest' -G "
			 "trainer-survivors a_frozen_rename_of_an_older_generation_fails", test_tmpdir(),
			 test_build_dir());
		CHECK(test_run(cmd, 300, &p) == 0);
		CHECK_MSG(p.exit_code == 0 && strstr(p.out, "1 passed, 0 failed"),
			  "on NFS: exit %d: %.600s %.600s", p.exit_code, p.out, p.err);
		test_proc_free(&p);
	}
	snprintf(cmd, sizeof(cmd), "cd '%s'; umount mnt; exportfs -u \"127.0.0.1:$PWD/export\"; :",
		 test_tmpdir());
	CHECK(test_run(cmd, 60, &p) == 0);
	test_proc_free(&p);
	if (!mounted)
		SKIP("a loopback NFS mount could not be made: %s", err[0] ? err : "no reason given");
}

const struct test_case checkpoint_nfs_tests[] = {
	{ "saves_without_rename_exchange", test_saves_without_rename_exchange },
	{ "sigkill_at_each_fallback_step_then_resume",
	  test_sigkill_at_each_fallback_step_then_resume },
	{ "a_frozen_older_writer_on_a_loopback_nfs_mount",
	  test_a_frozen_older_writer_on_a_loopback_nfs_mount },
	{ 0 }
};
