/* base/whole_file.c - see whole_file.h.
 * What it does not do: create the folder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/whole_file.h"

int whole_file_put(const char *path, const char *text, mode_t mode)
{
	char tmp[4608];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	int ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	int saved = errno;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
		saved = ok ? errno : saved;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}
