/* base/whole_file.c - see whole_file.h.
 * What it does not do: create the folder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fence.h"
#include "base/whole_file.h"

int whole_file_ours(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) != 0)
		return errno == ENOENT;
	return S_ISREG(sb.st_mode) && sb.st_uid == geteuid();
}

int whole_file_open(const char *path, char *tmp, size_t tmp_len, mode_t mode)
{
	static unsigned serial;
	char host[64] = "", dir[4200];
	const char *slash = strrchr(path, '/');

	if (fence_stale()) {  /* not even a temporary in OUT */
		errno = ESTALE;
		return -1;
	}
	int fenced = fence_writes_dir(path, dir, sizeof(dir));
	if (gethostname(host, sizeof(host) - 1) != 0 || strchr(host, '/'))
		snprintf(host, sizeof(host), "host");
	for (int tries = 0, looked = 0; tries < 100; tries++) {
		if (snprintf(tmp, tmp_len, "%s%s%s.tmp-%s-%ld-%u", fenced ? dir : "", fenced ? "/" : "",
			     fenced && slash ? slash + 1 : path, host, (long)getpid(),
			     __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED)) >= (int)tmp_len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno == ENOENT && fenced && !looked++ && !fence_stale())
			continue;   /* an NFS client's cached "no such folder": looked again */
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 || !fenced || errno != ENOENT ? fd : (errno = ESTALE, -1);
	}
	return -1;
}

void whole_file_abandon(int fd, const char *tmp)
{
	int saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
}

int whole_file_commit(int fd, const char *tmp, const char *path)
{
	if (fsync(fd) != 0) {
		whole_file_abandon(fd, tmp);
		return -1;
	}
	if (close(fd) != 0) {
		whole_file_abandon(-1, tmp);
		return -1;
	}
	if (!whole_file_ours(path)) {
		whole_file_abandon(-1, tmp);
		errno = EEXIST;
		return -1;
	}
	if (fence_stale()) {
		whole_file_abandon(-1, tmp);
		errno = ESTALE;
		return -1;
	}
	if (rename(tmp, path) == 0)
		return 0;
	if (errno == ENOENT && fence_held() > 0 && access(tmp, F_OK) != 0)
		errno = ESTALE;   /* its writes folder removed by a newer claimant */
	whole_file_abandon(-1, tmp);
	return -1;
}

FILE *whole_file_stream(const char *path, char *tmp, size_t tmp_len)
{
	int fd = whole_file_open(path, tmp, tmp_len, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (fd >= 0 && !f)
		whole_file_abandon(fd, tmp);
	return f;
}

int whole_file_stream_commit(FILE *f, const char *tmp, const char *path)
{
	if (fflush(f) != 0 || ferror(f)) {
		int saved = errno ? errno : EIO;
		fclose(f);
		whole_file_abandon(-1, tmp);
		errno = saved;
		return -1;
	}
	int fd = dup(fileno(f));
	fclose(f);
	return fd < 0 ? (whole_file_abandon(-1, tmp), -1) : whole_file_commit(fd, tmp, path);
}

const char *whole_file_why(int err)
{
	if (err == ESTALE)
		return "a newer generation of the run went on without this process: left alone";
	return err == EEXIST ? "there, and not a regular file of this user's: left alone"
			     : strerror(err);
}

/* All of data to fd; 0 or -1 with errno set. */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* data, then tail (may be ""), as PATH. */
static int put(const char *path, const void *data, size_t len, const char *tail, mode_t mode)
{
	char tmp[4608];
	int fd = whole_file_open(path, tmp, sizeof(tmp), mode);

	if (fd < 0)
		return -1;
	if (write_all(fd, data, len) || write_all(fd, tail, strlen(tail))) {
		whole_file_abandon(fd, tmp);
		return -1;
	}
	return whole_file_commit(fd, tmp, path);
}

int whole_file_put_bytes(const char *path, const void *data, size_t len, mode_t mode)
{
	return put(path, data, len, "", mode);
}

int whole_file_put(const char *path, const char *text, mode_t mode)
{
	return put(path, text, strlen(text), "", mode);
}

int whole_file_put_line(const char *path, const char *text, mode_t mode)
{
	return put(path, text, strlen(text), "\n", mode);
}
