/* base/own_dir.c - a command's own output folder: made, found empty, or
 * marked (own_dir.h).
 * What it does not do: write anything but the marker.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/own_dir.h"

/* 1: the marker, byte for byte; 0: none; -1: something else by its name. */
static int marked(int dir, const struct own_dir_marker *m)
{
	size_t want = strlen(m->text);
	char buf[1024];
	struct stat sb;

	int fd = openat(dir, m->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	ssize_t n = -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    want < sizeof(buf))
		n = read(fd, buf, want + 1);   /* one more: a longer file is not the marker */
	close(fd);
	return n == (ssize_t)want && memcmp(buf, m->text, want) == 0 ? 1 : -1;
}

/* 1 when dir holds nothing; else 0 and the first entry's name in first. */
static int empty(int dir, char *first, size_t len)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	first[0] = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!first[0] && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(first, len, "%s", e->d_name);
	closedir(d);
	return !first[0];
}

static int write_marker(int dir, const struct own_dir_marker *m)
{
	size_t len = strlen(m->text);
	int fd = openat(dir, m->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int ok = write(fd, m->text, len) == (ssize_t)len && fsync(fd) == 0;
	int saved = errno;
	close(fd);
	if (!ok) {
		unlinkat(dir, m->name, 0);
		errno = saved ? saved : EIO;
	}
	return ok ? 0 : -1;
}

int own_dir_claim(const struct own_dir_marker *m, const char *dir, char *err, size_t err_bytes)
{
	char first[256];
	int made = mkdir(dir, 0755) == 0;

	if (!made && errno != EEXIST)
		return snprintf(err, err_bytes, "chexnet: %s: %s '%s': %s", m->command, m->flag, dir,
				strerror(errno)), -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return snprintf(err, err_bytes, "chexnet: %s: %s '%s': %s", m->command, m->flag, dir,
				errno == ENOTDIR ? "not a directory" : strerror(errno)), -1;
	int rc = marked(fd, m);
	if (rc < 0)
		snprintf(err, err_bytes, "chexnet: %s: %s '%s': its '%s' is not the marker chexnet "
			 "%s writes: left alone; choose a new or empty folder", m->command, m->flag,
			 dir, m->name, m->command);
	else if (rc == 0 && !made && !empty(fd, first, sizeof(first)))
		snprintf(err, err_bytes, "chexnet: %s: %s '%s': holds entries chexnet %s did not "
			 "make (e.g. '%s'; no '%s' in it): left alone; choose a new or empty folder",
			 m->command, m->flag, dir, m->command, first, m->name), rc = -1;
	else if (rc == 0 && write_marker(fd, m) != 0)
		snprintf(err, err_bytes, "chexnet: %s: %s '%s': '%s': %s", m->command, m->flag, dir,
			 m->name, strerror(errno)), rc = -1;
	close(fd);
	return rc < 0 ? -1 : 0;
}
