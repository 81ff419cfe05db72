/* out_dir.c - creates an output directory and proves it writable
 * (out_dir.h). A mode check is not enough: root passes it everywhere.
 * What it does not do: remove anything it did not create for the probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/out_dir.h"

int out_dir_writable(const char *flag, const char *dir)
{
	char probe[4200];
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "chexnet: %s: '%s': %s\n", flag, dir, strerror(errno));
		return -1;
	}
	snprintf(probe, sizeof(probe), "%s/.chexnet-write-test-%d", dir, (int)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "chexnet: %s: '%s': not writable: %s\n", flag, dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}
