/* base/fence_writes.c - what a claimant does before it links its claim
 * (fence_writes.h; why it fences: fence.h).
 * What it does not do: claim, print, or remove anything outside
 * OUT/.generations but by renaming a copy over an appended file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fence.h"
#include "base/fence_writes.h"

static const char *const *appended;
static int appended_count;

void fence_appended(const char *const *names, int count)
{
	appended = names;
	appended_count = count;
}

/* K of an entry named "K.writes", else 0. */
static long writes_number(const char *name)
{
	char *end;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	long k = strtol(name, &end, 10);
	return strcmp(end, FENCE_WRITES) ? 0 : k;
}

/* name (in the folder at fd) and all it holds, two levels at most (a
 * checkpoint folder's files): 0, or -1 (errno; ENOTEMPTY while a writer
 * still adds to it). */
static int remove_all(int fd, const char *name, int depth)
{
	struct stat sb;

	if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(sb.st_mode))
		return unlinkat(fd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
	int inner = depth < 2 ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	DIR *d = inner >= 0 ? fdopendir(inner) : NULL;
	if (inner >= 0 && !d)
		close(inner);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_all(dirfd(d), e->d_name, depth + 1);
	if (d)
		closedir(d);
	return unlinkat(fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
}

/* Entries NAME.old-* of the writes folder at fd: a checkpoint folder
 * that a replacement without RENAME_EXCHANGE moved aside and did not put
 * back (its writer died between its two renames); back to OUT/NAME
 * while that is missing. */
static void put_back(int fd, const char *out)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	char path[PATH_MAX + 256];
	struct stat sb;

	if (dup_fd >= 0 && !d)
		close(dup_fd);
	for (struct dirent *e; d && (e = readdir(d));) {
		const char *old = strstr(e->d_name, ".old-");
		if (!old || old == e->d_name)
			continue;
		snprintf(path, sizeof(path), "%s/%.*s", out, (int)(old - e->d_name), e->d_name);
		if (lstat(path, &sb) != 0 && errno == ENOENT)
			renameat(fd, e->d_name, AT_FDCWD, path);
	}
	if (d)
		closedir(d);
}

/* Every writes folder of a generation before g in the folder at fd
 * removed (put_back first). One pass: 0, 1 when one was still being
 * added to (pass again), -1 (errno). */
static int remove_pass(int fd, const char *out, long g)
{
	int dup_fd = dup(fd), again = 0, rc = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		long k = writes_number(e->d_name);
		if (!k || k >= g)
			continue;
		int w = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (w >= 0) {
			put_back(w, out);
			close(w);
		}
		if (remove_all(fd, e->d_name, 0) == 0)
			continue;
		if (errno == ENOTEMPTY || errno == EEXIST)
			again = 1;
		else
			rc = -1;
	}
	closedir(d);
	return rc ? rc : again;
}

/* path, a regular file of this user's, replaced by a copy of itself
 * made in wdir: 0 (nothing to copy counts), or -1 (errno). */
static int copy_afresh(const char *path, const char *wdir)
{
	char tmp[PATH_MAX + 320], buf[1 << 16];
	const char *base = strrchr(path, '/');
	struct stat sb;
	ssize_t n = 0;

	int in = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT || errno == ELOOP ? 0 : -1;
	if (fstat(in, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
		close(in);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s/%s.fresh-%ld", wdir, base ? base + 1 : path, (long)getpid());
	int to = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, sb.st_mode & 0777);
	while (to >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	int saved = errno;
	int ok = to >= 0 && n == 0 && fsync(to) == 0;
	close(in);
	if (to >= 0 && close(to) != 0)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return 0;
	saved = ok ? errno : saved;
	unlink(tmp);
	errno = saved;
	return -1;
}

/* Every appended name of out (a file, or a folder's regular files)
 * copied afresh in wdir. */
static int copy_appended(const char *out, const char *wdir)
{
	char path[PATH_MAX + 256];
	struct stat sb;

	for (int i = 0; i < appended_count; i++) {
		snprintf(path, sizeof(path), "%s/%s", out, appended[i]);
		if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			if (copy_afresh(path, wdir))
				return -1;
			continue;
		}
		DIR *d = opendir(path);
		for (struct dirent *e; d && (e = readdir(d));) {
			char file[PATH_MAX * 2];
			snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
			if (e->d_name[0] != '.' && copy_afresh(file, wdir)) {
				closedir(d);
				return -1;
			}
		}
		if (d)
			closedir(d);
	}
	return 0;
}

int fence_prepare(const char *out, long g)
{
	char dir[PATH_MAX], wdir[PATH_MAX + 64];

	snprintf(dir, sizeof(dir), "%s/" FENCE_DIR, out);
	snprintf(wdir, sizeof(wdir), "%s/%ld" FENCE_WRITES, dir, g);
	if ((mkdir(dir, 0755) != 0 && errno != EEXIST) || (mkdir(wdir, 0755) != 0 && errno != EEXIST))
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 1;
	for (int pass = 0; fd >= 0 && rc == 1 && pass < 1000; pass++)
		rc = remove_pass(fd, out, g);
	if (fd >= 0)
		close(fd);
	if (rc == 1)
		errno = ENOTEMPTY;
	return rc || fd < 0 ? -1 : copy_appended(out, wdir);
}
