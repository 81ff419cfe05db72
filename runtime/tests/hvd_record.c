/* hvd_record.c - LD_PRELOAD shim for tests/slurm/attack.sh (root side):
 * in the process it is loaded into, appends to $HVD_RECORD_DIR
 *   handshake.PID  every buffer sent that is a control-plane HELLO or
 *                  PROOF (what a replay attacker would have recorded)
 *   random.PID     each 32-byte getrandom result as hex, one a line (rank
 *                  0's first is the job secret: the leak scan looks for it)
 * and, with HVD_RECORD_HOLD=P in a rank other than 0, holds its connect()
 * to the TCP port written in the file P.port until the file P.go exists
 * (at most 100 s): rank 0 is then in its start-up, accepting, and the
 * attacker is the only one knocking.
 * What it does not do: change what the process sends or receives.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
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

/* Up to 100 s for `path` to exist; 1 when it does. */
static int await_file(const char *path)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	for (int i = 0; i < 2000; i++) {
		if (!access(path, F_OK))
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static int tcp_port_of(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	return -1;
}

static void hold_control_connect(const struct sockaddr *addr)
{
	const char *hold = getenv("HVD_RECORD_HOLD"), *procid = getenv("SLURM_PROCID");
	int port = addr ? tcp_port_of(addr) : -1;
	if (!hold || !procid || !strcmp(procid, "0") || port < 0)
		return;
	char path[4096];
	int want = -1;
	snprintf(path, sizeof(path), "%s.port", hold);
	if (!await_file(path))
		return;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &want) != 1)
			want = -1;
		fclose(f);
	}
	if (port != want)
		return;
	snprintf(path, sizeof(path), "%s.go", hold);
	await_file(path);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);
	if (!real)
		real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
	hold_control_connect(addr);
	return real(fd, addr, len);
}
