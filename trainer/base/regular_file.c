/* regular_file.c - read-only opens that never follow a link or wait on a
 * FIFO (regular_file.h), and a whole file read so. What it does not do:
 * parse it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regular_file.h"

const char *regular_file_kind(mode_t mode)
{
	return S_ISLNK(mode) ? "a symbolic link" : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
	       : S_ISDIR(mode) ? "a directory" : "a regular file";
}

FILE *regular_fopen(const char *path, int follow, char *why, size_t len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		/* ELOOP: the last component is a symbolic link */
		snprintf(why, len, "%s", errno == ELOOP ? "not a regular file (a symbolic link)"
			 : strerror(errno));
		return NULL;
	}
	int bad = fstat(fd, &sb) != 0 ? errno : 0;
	if (bad || !S_ISREG(sb.st_mode)) {
		if (bad)
			snprintf(why, len, "%s", strerror(bad));
		else
			snprintf(why, len, "not a regular file (%s)", regular_file_kind(sb.st_mode));
		close(fd);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		snprintf(why, len, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

char *regular_file_read(const char *path, int follow, size_t max, size_t *n, char *why,
			size_t len)
{
	FILE *f = regular_fopen(path, follow, why, len);
	char *buf = f ? malloc(max + 2) : NULL;

	if (!f)
		return NULL;
	*n = buf ? fread(buf, 1, max + 1, f) : 0;
	int bad = !buf || ferror(f) || *n > max;
	fclose(f);
	if (!bad) {
		buf[*n] = '\0';
		return buf;
	}
	if (buf && *n > max)
		snprintf(why, len, "larger than %zu MiB", max >> 20);
	else
		snprintf(why, len, "%s", buf ? "unreadable" : "out of memory");
	free(buf);
	return NULL;
}
