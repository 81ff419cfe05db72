/* hvd_attack.c - the attacker of tests/slurm/attack.sh: run as another
 * user (nobody) against rank 0's control port on loopback during
 * start-up. Each mode connects, does its one thing, prints `sent` (the
 * harness then lets the job go on) and waits for the server to drop it;
 * the last line is `refused: ...` (exit 0) or `not refused: ...` (exit 1).
 *   silent IP PORT         connect, say nothing
 *   claim IP PORT          a well-formed HELLO as rank 1, a made-up PROOF
 *   error IP PORT          the old protocol: HELLO rank 1, then an ERROR
 *                          frame whose text carries terminal escapes
 *   replay IP PORT FILE    bytes a real rank 1 sent in its handshake
 *   flood IP PORT          HELLO rank 1, then SUBMIT frames without end
 *   hold IP PORT N         N connections at once
 * Two helpers for the root-side harness:
 *   port PIDFILE           rank 0's listening port on 127.0.0.1 (/proc)
 *   scan HEX DIR...        every readable file under DIRs: does it hold
 *                          these bytes (raw or as hex)? (run as nobody)
 * What it does not do: anything outside 127.0.0.1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/auth.h"
#include "../plan/wire.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int dial(const char *ip, int port, int nonblock)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (strcmp(ip, "127.0.0.1") || inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return -1; /* loopback only */
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void sent(void)
{
	printf("sent\n");
	fflush(stdout);
}

/* Waits up to `limit` s for the server to close fd; 1 when it did. */
static int await_close(int fd, double limit, char *how, size_t len)
{
	double end = now_s() + limit;
	char buf[4096];
	while (now_s() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 200) <= 0)
			continue;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r == 0 || r < 0) {
			snprintf(how, len, "%s", r == 0 ? "connection closed by the server" : strerror(errno));
			return 1;
		}
	}
	snprintf(how, len, "still open after %.0f s", limit);
	return 0;
}

static int finish(int fd, const char *mode)
{
	char how[128];
	int refused = await_close(fd, 90, how, sizeof(how));
	printf("%s: %s %s\n", refused ? "refused" : "not refused", mode, how);
	return refused ? 0 : 1;
}

static int send_frame(int fd, uint32_t type, const void *payload, uint32_t len)
{
	struct msg_header h = { type, len };
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return -1;
	return len && send(fd, payload, len, MSG_NOSIGNAL) != (ssize_t)len ? -1 : 0;
}

static int attack_claim(int fd)
{
	struct auth_hello h;
	struct auth_reply r;
	struct auth_proof p;
	uint8_t nonce[AUTH_NONCE_BYTES] = { 1 };
	auth_hello_make(&h, 1, 2, nonce);
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return finish(fd, "claim");
	sent();
	if (recv(fd, &r, sizeof(r), MSG_WAITALL) == (ssize_t)sizeof(r)) {
		memset(&p, 0x5a, sizeof(p));
		memcpy(p.magic, "HVDp", 4);
		send(fd, &p, sizeof(p), MSG_NOSIGNAL);
		printf("got rank 0's challenge; sent a made-up proof\n");
	}
	return finish(fd, "claim");
}

static int attack_error(int fd)
{
	int32_t rank = 1;
	const char text[] = "\x1b[2J\x1b[31mhvd: rank 1 (host evil): 'pwned': fake failure\nhvd: fake line";
	send_frame(fd, MSG_HELLO, &rank, sizeof(rank));
	send_frame(fd, MSG_ERROR, text, sizeof(text) - 1);
	sent();
	return finish(fd, "error");
}

static int attack_replay(int fd, const char *file)
{
	char buf[4096];
	FILE *f = fopen(file, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	if (!n) {
		printf("not refused: replay: nothing recorded in '%s'\n", file);
		return 1;
	}
	send(fd, buf, n, MSG_NOSIGNAL);
	printf("replayed %zu bytes\n", n);
	sent();
	return finish(fd, "replay");
}

static int attack_flood(int fd)
{
	int32_t rank = 1;
	struct fusion_item it = { .count = 1 };
	snprintf(it.name, sizeof(it.name), "flood");
	send_frame(fd, MSG_HELLO, &rank, sizeof(rank));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	size_t frames = 0;
	int said = 0;
	double end = now_s() + 90;
	while (now_s() < end) {
		struct msg_header h = { MSG_SUBMIT, sizeof(it) };
		char frame[sizeof(h) + sizeof(it)];
		memcpy(frame, &h, sizeof(h));
		memcpy(frame + sizeof(h), &it, sizeof(it));
		ssize_t w = send(fd, frame, sizeof(frame), MSG_NOSIGNAL);
		if (w < 0 && errno == EAGAIN) {
			if (!said++)
				sent(); /* the socket buffers are full */
			struct pollfd p = { fd, POLLOUT, 0 };
			poll(&p, 1, 200);
			continue;
		}
		if (w < 0) {
			if (!said)
				sent();
			printf("refused: flood after %zu frames: %s\n", frames, strerror(errno));
			return 0;
		}
		frames++;
	}
	printf("not refused: flood of %zu frames still accepted after 90 s\n", frames);
	return 1;
}

static int attack_hold(const char *ip, int port, int n)
{
	int *fds = calloc((size_t)n, sizeof(*fds)), open_n = 0;
	for (int i = 0; fds && i < n; i++)
		open_n += (fds[i] = dial(ip, port, 1)) >= 0;
	printf("%d of %d connections started\n", open_n, n);
	sent();
	int closed = 0;
	double end = now_s() + 90;
	char buf[256];
	while (fds && closed < open_n && now_s() < end) {
		for (int i = 0; i < n; i++) {
			if (fds[i] < 0)
				continue;
			ssize_t r = recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != ENOTCONN)) {
				close(fds[i]);
				fds[i] = -1;
				closed++;
			}
		}
		usleep(50000);
	}
	printf("%s: hold %d of %d connections closed by the server\n",
	       closed == open_n && open_n ? "refused" : "not refused", closed, open_n);
	free(fds);
	return closed == open_n && open_n ? 0 : 1;
}

/* rank 0's LISTEN socket on 127.0.0.1: its inode among the pid's fds. */
static int find_port(const char *pidfile)
{
	for (int tries = 0; tries < 300; tries++, usleep(100000)) {
		FILE *f = fopen(pidfile, "r");
		int pid = 0;
		if (!f || fscanf(f, "%d", &pid) != 1 || pid <= 0) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		char path[64], line[512];
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		DIR *d = opendir(path);
		FILE *tcp = fopen("/proc/net/tcp", "r");
		unsigned long inodes[256];
		int ni = 0;
		struct dirent *e;
		while (d && (e = readdir(d)) && ni < 256) {
			char fdpath[600], target[64];
			snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
			ssize_t l = readlink(fdpath, target, sizeof(target) - 1);
			if (l > 0) {
				target[l] = '\0';
				if (sscanf(target, "socket:[%lu]", &inodes[ni]) == 1)
					ni++;
			}
		}
		while (tcp && fgets(line, sizeof(line), tcp)) {
			unsigned addr, port, st;
			unsigned long inode;
			if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
				   &addr, &port, &st, &inode) == 4 && st == 0x0A && addr == 0x0100007F)
				for (int i = 0; i < ni; i++)
					if (inodes[i] == inode) {
						printf("%u\n", port);
						return 0;
					}
		}
		if (d)
			closedir(d);
		if (tcp)
			fclose(tcp);
	}
	fprintf(stderr, "hvd-attack: port: '%s': no listener of that process on 127.0.0.1\n", pidfile);
	return 1;
}

static int scan_file(const char *path, const char *hex, const uint8_t *raw, size_t rawlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	static char buf[16 << 20];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	return memmem(buf, (size_t)n, raw, rawlen) || memmem(buf, (size_t)n, hex, strlen(hex)) ? 1 : 0;
}

static void scan_dir(const char *dir, const char *hex, const uint8_t *raw, size_t rawlen,
		     int *files, int *denied, int *found)
{
	DIR *d = opendir(dir);
	if (!d) {
		(*denied)++;
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			scan_dir(path, hex, raw, rawlen, files, denied, found);
		} else if (S_ISREG(st.st_mode)) {
			int r = scan_file(path, hex, raw, rawlen);
			*denied += r < 0;
			*files += r >= 0;
			if (r > 0) {
				printf("found in %s\n", path);
				(*found)++;
			}
		}
	}
	closedir(d);
}

static int scan(int argc, char **argv)
{
	const char *hex = argv[2];
	uint8_t raw[64];
	size_t rawlen = strlen(hex) / 2;
	if (rawlen < 16 || rawlen > sizeof(raw))
		return 2;
	for (size_t i = 0; i < rawlen; i++)
		sscanf(hex + 2 * i, "%2hhx", &raw[i]);
	int files = 0, denied = 0, found = 0;
	for (int i = 3; i < argc; i++)
		scan_dir(argv[i], hex, raw, rawlen, &files, &denied, &found);
	printf("scan: %d files read, %d unreadable, secret found %d times\n", files, denied, found);
	return found ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "port"))
		return find_port(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "scan"))
		return scan(argc, argv);
	if (argc < 4) {
		fprintf(stderr, "usage: hvd-attack silent|claim|error|replay|flood|hold IP PORT [ARG]\n");
		return 2;
	}
	const char *mode = argv[1], *ip = argv[2];
	int port = atoi(argv[3]);
	if (!strcmp(mode, "hold"))
		return attack_hold(ip, port, argc > 4 ? atoi(argv[4]) : 300);
	int fd = dial(ip, port, 0);
	if (fd < 0) {
		printf("not refused: %s: cannot connect to %s:%d: %s\n", mode, ip, port, strerror(errno));
		return 1;
	}
	printf("connected\n");
	if (!strcmp(mode, "silent")) {
		sent();
		return finish(fd, mode);
	}
	if (!strcmp(mode, "claim"))
		return attack_claim(fd);
	if (!strcmp(mode, "error"))
		return attack_error(fd);
	if (!strcmp(mode, "replay") && argc > 4)
		return attack_replay(fd, argv[4]);
	if (!strcmp(mode, "flood"))
		return attack_flood(fd);
	fprintf(stderr, "hvd-attack: '%s': unknown mode\n", mode);
	return 2;
}
