/* rename_shim.c - LD_PRELOAD library for test_checkpoint_nfs.c: makes
 * renameat2() with any flag fail with EINVAL, as NFS, FUSE without
 * rename2 and Lustre (RENAME_EXCHANGE) do, and optionally SIGKILLs the
 * process at one point of checkpoint_replace's fallback sequence:
 * SHIM_KILL_AT = before-aside | after-aside | after-place | in-remove,
 * in the SHIM_KILL_SAVE-th fallback replacement (default 1).
 * Built by the test with cc -shared; not part of the trainer.
 * What it does not do: anything to calls without flags or other files.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int asides;        /* DIR -> DIR.old-PID renames so far */
static int removing;      /* unlinks inside DIR.old-PID so far, this save */

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
	      unsigned int flags)
{
	if (flags) {
		errno = EINVAL;
		return -1;
	}
	return renameat(olddirfd, oldpath, newdirfd, newpath);
}

static int kill_here(const char *point)
{
	const char *at = getenv("SHIM_KILL_AT"), *save = getenv("SHIM_KILL_SAVE");
	int n = save ? atoi(save) : 1;

	return at && strcmp(at, point) == 0 && asides == n;
}

int rename(const char *oldpath, const char *newpath)
{
	static int (*real)(const char *, const char *);
	int aside = strstr(newpath, ".old-") != NULL;

	if (!real)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	if (aside) {
		asides++;
		removing = 0;
		if (kill_here("before-aside"))
			raise(SIGKILL);
	}
	int rc = real(oldpath, newpath);
	if (rc == 0 && aside && kill_here("after-aside"))
		raise(SIGKILL);
	if (rc == 0 && strstr(oldpath, ".tmp-") && asides && kill_here("after-place"))
		raise(SIGKILL);
	return rc;
}

int unlink(const char *path)
{
	static int (*real)(const char *);

	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	int rc = real(path);
	if (rc == 0 && strstr(path, ".old-") && ++removing == 1 && kill_here("in-remove"))
		raise(SIGKILL);
	return rc;
}
