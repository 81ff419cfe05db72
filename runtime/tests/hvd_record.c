/* hvd_record.c - LD_PRELOAD shim for tests/slurm/attack.sh (root side):
 * in the process it is loaded into, appends to $HVD_RECORD_DIR
 *   handshake.PID  every buffer sent that is a control-plane HELLO or
 *                  PROOF (what a replay attacker would have recorded)
 *   random.PID     each 32-byte getrandom result as hex, one a line (rank
 *                  0's first is the job secret: the leak scan looks for it)
 * What it does not do: change what the process sends or receives.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

static void append(const char *what, const void *data, size_t len, int as_hex)
{
	const char *dir = getenv("HVD_RECORD_DIR");
	if (!dir)
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, (int)getpid());
	FILE *f = fopen(path, "ab");
	if (!f)
		return;
	if (as_hex) {
		for (size_t i = 0; i < len; i++)
			fprintf(f, "%02x", ((const unsigned char *)data)[i]);
		fputc('\n', f);
	} else {
		fwrite(data, 1, len, f);
	}
	fclose(f);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	if ((len == 48 && !memcmp(buf, "HVDh", 4)) || (len == 40 && !memcmp(buf, "HVDp", 4)))
		append("handshake", buf, len, 0);
	return real(fd, buf, len, flags);
}

ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	static ssize_t (*real)(void *, size_t, unsigned);
	if (!real)
		real = (ssize_t (*)(void *, size_t, unsigned))dlsym(RTLD_NEXT, "getrandom");
	ssize_t r = real(buf, len, flags);
	if (r == 32)
		append("random", buf, 32, 1);
	return r;
}
