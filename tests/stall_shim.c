/* stall_shim.c - LD_PRELOAD shim for the stop and recovery tests:
 * opening a path that contains $HVD_STALL_PATH never returns, as a read
 * from a hung NFS server would not; with $HVD_STALL_S one such open of
 * the process returns that many seconds late (a slow one), the others at
 * once: the first, or the one after the first $HVD_STALL_SKIP; it creates
 * the file $HVD_STALL_MARK (if set) as it begins to wait, and with
 * $HVD_STALL_UNTIL set it waits until that file exists instead (a test
 * forcing an order, not hoping for one; 60 s at most). A rename
 * (rename, renameat2) to a path that ends with $HVD_STALL_RENAME stalls
 * the same way before it renames: a writer frozen between its last check
 * and its rename. With $HVD_STALL_NO_EXCHANGE set, renameat2 with a flag
 * fails with EINVAL at once, as on NFS (the rename after it stalls). The tests build it
 * (cc -shared) and preload it.
 * What it does not do: anything to other paths (passed to libc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether path matches the pattern in the environment variable which:
 * contains it (HVD_STALL_PATH), ends with it (HVD_STALL_RENAME). */
static int matched(const char *which, const char *path)
{
	const char *m = getenv(which);
	if (!m || !*m || !path)
		return 0;
	size_t n = strlen(m), len = strlen(path);
	return strcmp(which, "HVD_STALL_RENAME") ? strstr(path, m) != NULL
						 : len >= n && !strcmp(path + len - n, m);
}

static void stall_if(const char *which, const char *path)
{
	const char *late = getenv("HVD_STALL_S");
	if (!matched(which, path))
		return;
	static int seen;
	const char *skip = getenv("HVD_STALL_SKIP");
	if (late && *late) {
		if (__atomic_fetch_add(&seen, 1, __ATOMIC_SEQ_CST) != (skip ? atoi(skip) : 0))
			return;
		const char *mark = getenv("HVD_STALL_MARK"), *until = getenv("HVD_STALL_UNTIL");
		FILE *f = mark && *mark ? fopen(mark, "w") : NULL;  /* fopen: not through this shim */
		if (f)
			fclose(f);
		for (int i = 0; until && *until && access(until, F_OK) != 0 && i < 6000; i++)
			usleep(10000);   /* at most 60 s: the test's deadline is the bound */
		if (!until || !*until)
			sleep((unsigned)atoi(late));
	} else
		for (;;)
			pause();
}

#define SHIM_OPEN(name, ...)                                                         \
	int name(__VA_ARGS__, int flags, ...)                                      \
	{                                                                          \
		va_list ap;                                                        \
		va_start(ap, flags);                                               \
		mode_t mode = (mode_t)va_arg(ap, int);                             \
		va_end(ap);                                                        \
		stall_if("HVD_STALL_PATH", path);                                  \
		int (*real)() = (int (*)())dlsym(RTLD_NEXT, #name);                \
		return real(SHIM_ARGS, flags, mode);                               \
	}

#define SHIM_ARGS path
SHIM_OPEN(open, const char *path)
SHIM_OPEN(open64, const char *path)
#undef SHIM_ARGS
#define SHIM_ARGS dirfd, path
SHIM_OPEN(openat, int dirfd, const char *path)
SHIM_OPEN(openat64, int dirfd, const char *path)
#undef SHIM_ARGS

int __open_2(const char *path, int flags)
{
	stall_if("HVD_STALL_PATH", path);
	int (*real)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_NEXT, "__open_2");
	return real(path, flags);
}

int rename(const char *from, const char *to)
{
	stall_if("HVD_STALL_RENAME", to);
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	return real(from, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
	if (flags && getenv("HVD_STALL_NO_EXCHANGE")) {
		errno = EINVAL;
		return -1;
	}
	stall_if("HVD_STALL_RENAME", to);
	int (*real)(int, const char *, int, const char *, unsigned) =
		(int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
	return real(fromfd, from, tofd, to, flags);
}
