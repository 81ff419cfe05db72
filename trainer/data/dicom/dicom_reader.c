/* dicom_reader.c - dicom_read_memory (dicom_read.h) out of process. GDCM
 * aborts on malformed input, so it never runs in the caller's process;
 * and a child forked from a process with threads may only call
 * async-signal-safe functions (GDCM allocates; a sanitizer's allocator
 * deadlocks there). So the first read starts a reader server: this same
 * program (/proc/self/exe) executed afresh with HVD_DICOM_READER=1 and a
 * socket on fd 3, which a constructor serves before main ever runs. For
 * each file the caller sends the file (a memfd), a memfd for the result
 * and a pipe's write end; the server, one thread, forks a watcher per
 * file, the watcher forks the reader (dicom_gdcm_read_to) and writes the
 * reader's wait status to the pipe. An abort, a crash or a hang (killed
 * after DICOM_READ_SECONDS) becomes a refusal, and reads from several
 * threads run at once. Each reader runs under RLIMIT_DATA: its own data
 * at its start plus dicom_reader_limit_mib (not RLIMIT_AS: a sanitizer
 * reserves terabytes of shadow address space; that reservation is in
 * the data at the start too); its allocation-failure exit code
 * (DICOM_READER_EXIT_NOMEM) is reported as exceeding that limit, and the
 * watcher sends the reader's peak RSS with its status. The server exits when the caller's process closes
 * the socket (at its exit); if it is gone, the next read starts another.
 * What it does not do: parse (dicom_gdcm.cc) or judge (dicom_pixels.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/dicom/dicom_budget.h"
#include "data/dicom/dicom_gdcm.h"

#define READER_ENV "HVD_DICOM_READER"
#define READER_FD 3

extern char **environ;

struct request {
	uint64_t bytes;
	struct dicom_limits limits;
	uint64_t limit_mib;         /* the reader's memory limit above its start */
};

/* What the watcher writes to the pipe. */
struct answer {
	int status;                 /* the reader's wait status */
	long peak_kib;              /* its peak RSS */
};

/* In the reader: RLIMIT_DATA = its data now (VmData) + mib. */
static void limit_data(uint64_t mib)
{
	char line[256];
	unsigned long long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	struct rlimit rl = { (rlim_t)(kib << 10) + ((rlim_t)mib << 20), 0 };
	rl.rlim_max = rl.rlim_cur;
	if (!kib || setrlimit(RLIMIT_DATA, &rl) != 0)
		_exit(5);
}

/* ---- the server: a fresh process with one thread ---- */

/* In a watcher: read the file in a child of its own, send its status. */
static void watch_one(const struct request *rq, const int fds[3])
{
	static const char empty;
	struct answer a = { 0, 0 };
	struct rusage ru;
	signal(SIGCHLD, SIG_DFL);   /* the server's SIG_IGN would hide the child */
	pid_t pid = fork();
	if (pid == 0) {
		const void *data = rq->bytes ? mmap(NULL, rq->bytes, PROT_READ, MAP_PRIVATE, fds[0], 0) : &empty;
		if (data == MAP_FAILED)
			_exit(4);
		limit_data(rq->limit_mib);
		dicom_gdcm_read_to(data, rq->bytes, &rq->limits, fds[1]);
	}
	while (pid > 0 && wait4(pid, &a.status, 0, &ru) < 0)
		if (errno != EINTR)
			_exit(1);
	a.peak_kib = ru.ru_maxrss;
	if (pid > 0 && write(fds[2], &a, sizeof(a)) != (ssize_t)sizeof(a))
		_exit(1);
	_exit(0);   /* no answer (fork failed): the caller reads end of file */
}

/* One request with its three descriptors; -1 at end of file or on
 * anything else (the server then ends). */
static int receive(int sock, struct request *rq, int fds[3])
{
	char control[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { rq, sizeof(*rq) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			    .msg_controllen = sizeof(control) };
	ssize_t n;
	while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = n == (ssize_t)sizeof(*rq) ? CMSG_FIRSTHDR(&m) : NULL;
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(3 * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
	return 0;
}

static void serve(int sock)
{
	struct sigaction reap = { .sa_handler = SIG_IGN, .sa_flags = SA_NOCLDWAIT };
	struct request rq;
	int fds[3];
	sigaction(SIGCHLD, &reap, NULL);   /* the kernel reaps the watchers */
	while (receive(sock, &rq, fds) == 0) {
		if (fork() == 0) {
			close(sock);
			watch_one(&rq, fds);
		}
		for (int i = 0; i < 3; i++)   /* a failed fork: the caller reads end of file */
			close(fds[i]);
	}
	_exit(0);
}

__attribute__((constructor)) static void reader_mode(void)
{
	struct stat st;
	const char *v = getenv(READER_ENV);
	if (v && strcmp(v, "1") == 0 && fstat(READER_FD, &st) == 0 && S_ISSOCK(st.st_mode))
		serve(READER_FD);
}

/* ---- the caller's side ---- */

static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static int server_sock = -1;
static pid_t server_pid = -1;

/* The environment with READER_ENV=1 added (malloc'd array, NULL-ended). */
static char **reader_environment(void)
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = malloc((n + 2) * sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], READER_ENV "=", sizeof(READER_ENV)) != 0)
			env[k++] = environ[i];
	env[k++] = (char *)READER_ENV "=1";
	env[k] = NULL;
	return env;
}

/* Starts the server with its end of a socket pair on READER_FD (stdin
 * and stdout on /dev/null, stderr shared), every
 * signal at its default and none blocked (the reader's alarm must kill
 * it). Caller holds server_lock. */
static int start_server(char *why, size_t why_bytes)
{
	int sv[2], rc;
	char *argv[] = { (char *)"chexnet-dicom-reader", NULL };
	char **env = reader_environment();
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	if (!env || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(why, why_bytes, "cannot start the DICOM reader: %s", strerror(errno));
		free(env);
		return -1;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], READER_FD);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&server_pid, "/proc/self/exe", &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(env);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		snprintf(why, why_bytes, "cannot start the DICOM reader: %s", strerror(rc));
		return -1;
	}
	server_sock = sv[0];
	return 0;
}

static int send_fds(int sock, const struct request *rq, const int fds[3])
{
	char control[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { (void *)rq, sizeof(*rq) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			    .msg_controllen = sizeof(control) };
	memset(control, 0, sizeof(control));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
	ssize_t n;
	while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof(*rq) ? 0 : -1;
}

/* Sends the request to the server, starting it (again, if it is gone). */
static int send_request(const struct request *rq, const int fds[3], char *why, size_t why_bytes)
{
	int rc = -1;
	pthread_mutex_lock(&server_lock);
	for (int attempt = 0; attempt < 2 && rc != 0; attempt++) {
		if (server_sock < 0 && start_server(why, why_bytes) != 0)
			break;
		rc = send_fds(server_sock, rq, fds);
		if (rc != 0) {   /* the server ended: reap it, start another */
			snprintf(why, why_bytes, "the DICOM reader: %s", strerror(errno));
			close(server_sock);
			server_sock = -1;
			waitpid(server_pid, NULL, 0);
		}
	}
	pthread_mutex_unlock(&server_lock);
	return rc;
}

static int write_all(int fd, const void *data, size_t bytes)
{
	const char *p = data;
	while (bytes > 0) {
		ssize_t n = write(fd, p, bytes);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		bytes -= (size_t)n;
	}
	return 0;
}

static long peak_kib;   /* the largest reader's peak RSS so far */

long dicom_reader_peak_kib(void)
{
	return __atomic_load_n(&peak_kib, __ATOMIC_RELAXED);
}

static void note_peak(long kib)
{
	long seen = dicom_reader_peak_kib();
	while (kib > seen && !__atomic_compare_exchange_n(&peak_kib, &seen, kib, 0, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED))
		;
}

/* The reader's wait status, as a reason; 0 when it exited normally.
 * SIGKILL is no verdict on the file: the kernel's OOM killer or an
 * operator sent it. */
static int reader_status(int status, uint64_t limit_mib, char *why, size_t why_bytes)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return snprintf(why, why_bytes, "GDCM took more than %d s on it", DICOM_READ_SECONDS), -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == DICOM_READER_EXIT_NOMEM)
		return snprintf(why, why_bytes, "exceeds the reader's memory limit (%llu MiB)",
				(unsigned long long)limit_mib), -1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return snprintf(why, why_bytes, "the reader was killed (signal 9: the system's OOM killer "
				"or an operator), not a verdict on the file"), -1;
	if (WIFSIGNALED(status))
		return snprintf(why, why_bytes, "GDCM failed on it (signal %d): malformed", WTERMSIG(status)), -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return snprintf(why, why_bytes, "the reader failed (exit %d)", WEXITSTATUS(status)), -1;
	return 0;
}

/* The result the reader left in fd, taken back. */
static int take_result(int fd, struct dicom_raw *out, char *why, size_t why_bytes)
{
	struct stat st;
	void *map = fstat(fd, &st) == 0 && st.st_size > 0 ?
		mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (map == MAP_FAILED)
		return snprintf(why, why_bytes, "the reader's result: %s", strerror(errno)), -1;
	int rc = dicom_gdcm_take_result(map, (size_t)st.st_size, out, why, why_bytes);
	munmap(map, (size_t)st.st_size);
	return rc;
}

int dicom_read_memory(const void *data, size_t bytes, const struct dicom_limits *limits,
		      struct dicom_raw *out, char *why, size_t why_bytes)
{
	struct request rq = { bytes, *limits, 0 };
	struct answer a;
	int fds[3] = { -1, -1, -1 }, reply = -1, rc = -1, pipefd[2];
	memset(out, 0, sizeof(*out));
	long mib = dicom_reader_limit_mib(bytes, why, why_bytes);
	if (mib < 0)
		return -1;
	rq.limit_mib = (uint64_t)mib;
	if ((fds[0] = memfd_create("hvd-dicom-file", MFD_CLOEXEC)) < 0 || write_all(fds[0], data, bytes) != 0 ||
	    (fds[1] = memfd_create("hvd-dicom", MFD_CLOEXEC)) < 0 || pipe2(pipefd, O_CLOEXEC) != 0)
		snprintf(why, why_bytes, "cannot hand the file to the DICOM reader: %s", strerror(errno));
	else {
		reply = pipefd[0];
		fds[2] = pipefd[1];
		if (send_request(&rq, fds, why, why_bytes) == 0) {
			close(fds[2]);
			fds[2] = -1;
			ssize_t n;
			while ((n = read(reply, &a, sizeof(a))) < 0 && errno == EINTR)
				;
			if (n != (ssize_t)sizeof(a))
				snprintf(why, why_bytes, "the DICOM reader ended without an answer");
			else if (note_peak(a.peak_kib), reader_status(a.status, rq.limit_mib, why, why_bytes) == 0)
				rc = take_result(fds[1], out, why, why_bytes);
		}
	}
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (reply >= 0)
		close(reply);
	return rc;
}
