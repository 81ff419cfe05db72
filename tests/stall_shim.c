/* stall_shim.c - LD_PRELOAD shim for the stop and recovery tests:
 * opening a path that contains $HVD_STALL_PATH never returns, as a read
 * from a hung NFS server would not; with $HVD_STALL_S one such open of
 * the process returns that many seconds late (a slow one), the others at
 * once: the first, or the one after the first $HVD_STALL_SKIP; it creates
 * the file $HVD_STALL_MARK (if set) as it begins to wait. The tests build
 * it (cc -shared) and preload it.
 * What it does not do: anything to other paths (passed to libc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stall_if_matched(const char *path)
{
	const char *m = getenv("HVD_STALL_PATH");
	const char *late = getenv("HVD_STALL_S");
	if (!m || !*m || !path || !strstr(path, m))
		return;
	static int seen;
	const char *skip = getenv("HVD_STALL_SKIP");
	if (late && *late) {
		if (__atomic_fetch_add(&seen, 1, __ATOMIC_SEQ_CST) != (skip ? atoi(skip) : 0))
			return;
		const char *mark = getenv("HVD_STALL_MARK");
		FILE *f = mark && *mark ? fopen(mark, "w") : NULL;  /* fopen: not through this shim */
		if (f)
			fclose(f);
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
		stall_if_matched(path);                                            \
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
	stall_if_matched(path);
	int (*real)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_NEXT, "__open_2");
	return real(path, flags);
}
