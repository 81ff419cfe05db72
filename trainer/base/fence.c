/* base/fence.c - a run folder's generations (fence.h): claims by link(2)
 * of a whole temporary, the newest by listing, the held one checked by a
 * look at the next number (claims are made in order: newest + 1), the
 * held one's writes folder.
 * What it does not do: print (callers name the folder in their lines),
 * or remove an older generation's writes (fence_writes.c).
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

static struct {
	char out[PATH_MAX];
	long g;
} held;

static void path_of(char *buf, size_t len, const char *out, const char *name)
{
	snprintf(buf, len, "%s/" FENCE_DIR "%s%s", out, name ? "/" : "", name ? name : "");
}

/* text, fsynced, in a fresh temporary of dir (its name into tmp). */
static int put_temporary(const char *dir, const char *text, char *tmp, size_t len)
{
	char host[64] = "host";

	gethostname(host, sizeof(host) - 1);
	snprintf(tmp, len, "%s/.claim-%s-%ld", dir, host, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int ok = write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
	int saved = errno;
	close(fd);
	if (!ok) {
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

int fence_claim(const char *out, long g, const char *text)
{
	char name[32];

	snprintf(name, sizeof(name), "%ld", g);
	if (g <= 0 || fence_prepare(out, g))
		return -1;
	return fence_claim_name(out, name, text);
}

int fence_claim_name(const char *out, const char *claim, const char *text)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 96], name[PATH_MAX + 320];
	struct stat sb;

	path_of(dir, sizeof(dir), out, NULL);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	if (put_temporary(dir, text, tmp, sizeof(tmp)))
		return -1;
	snprintf(name, sizeof(name), "%s/%s", dir, claim);
	int rc = link(tmp, name), saved = errno;
	/* NFS: a retransmitted link may say EEXIST for its own success */
	int mine = rc == 0 || (stat(tmp, &sb) == 0 && sb.st_nlink == 2);
	unlink(tmp);
	if (mine)
		return 0;
	errno = saved;
	return saved == EEXIST ? 1 : -1;
}

long fence_claim_next(const char *out, const char *text)
{
	for (long g = fence_newest(out) + 1; g > 0; g++) {   /* fence_newest -1: none tried */
		int rc = fence_claim(out, g, text);
		if (rc <= 0)
			return rc == 0 ? g : -1;
	}
	return -1;
}

long fence_newest(const char *out)
{
	char dir[PATH_MAX];
	long newest = 0;

	path_of(dir, sizeof(dir), out, NULL);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long g = strtol(e->d_name, &end, 10);
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !*end && g > newest)
			newest = g;
	}
	closedir(d);
	return newest;
}

int fence_read(const char *out, long g, char *text, size_t len)
{
	char name[64], path[PATH_MAX + 64];

	snprintf(name, sizeof(name), "%ld", g);
	path_of(path, sizeof(path), out, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, text, len - 1);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	text[n] = '\0';
	return 0;
}

void fence_hold(const char *out, long g)
{
	snprintf(held.out, sizeof(held.out), "%s", g > 0 && out ? out : "");
	held.g = g > 0 && out ? g : 0;
}

long fence_held(void)
{
	return held.g;
}

/* Opening the folder makes an NFS client revalidate its attributes
 * (close-to-open consistency: a GETATTR on open), and with a changed
 * mtime it drops its cached names, a cached "no such file" included;
 * the look for the next generation then goes to the server. A bare
 * stat() may be answered from a negative entry cached up to acdirmax. */
int fence_stale(void)
{
	char dir[PATH_MAX], name[64];
	struct stat sb;

	if (held.g <= 0)
		return 0;
	snprintf(name, sizeof(name), "%ld", held.g + 1);
	path_of(dir, sizeof(dir), held.out, NULL);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int stale = fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
	close(fd);
	return stale;
}

int fence_writes_dir(const char *path, char *dir, size_t len)
{
	size_t n = strlen(held.out);

	if (held.g <= 0 || strncmp(path, held.out, n) != 0 || path[n] != '/')
		return 0;
	snprintf(dir, len, "%s/" FENCE_DIR "/%ld" FENCE_WRITES, held.out, held.g);
	return 1;
}

int fence_replace(const char *tmp, const char *path)
{
	if (fence_stale())
		return errno = ESTALE, -1;
	int rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE);
	if (rc && errno == ENOENT && access(tmp, F_OK) == 0)   /* no path yet */
		rc = rename(tmp, path);
	if (rc == 0)
		return 0;
	if (errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS)
		errno = EINVAL;
	else if (errno == ENOENT && held.g > 0 && access(tmp, F_OK) != 0)
		errno = ESTALE;   /* its writes folder removed by a newer claimant */
	return -1;
}
