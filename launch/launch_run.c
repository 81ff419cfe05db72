/* launch_run.c - see launch_run.h. One thread: a self-pipe carries the
 * signals into the poll loop that also relays the ranks' output. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch_run.h"

#define LINE_MAX_BYTES 8192

struct stream {
	int fd;                     /* -1 once closed */
	FILE *to;
	size_t len;
	char buf[LINE_MAX_BYTES];
};

struct rank_proc {
	pid_t pid;
	int running;
	struct stream out, err;
};

struct job {
	const struct launch_plan *plan;
	struct rank_proc *ranks;
	int alive;
	int received;               /* the first signal hvdrun got, 0 none */
	int failed_status;          /* the first failed rank's status, 0 none */
	int ending;
	double kill_at;             /* SIGKILL then, while ending */
	double grace_s;
};

static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	if (write(signal_pipe[1], &c, 1) < 0) {
		/* full: a signal of the same burst is already waiting */
	}
	errno = saved;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A loopback port free now (the kernel's choice), or -1. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* A fresh job secret: 64 random bytes in a 0600 file of this user. */
static int make_secret(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	unsigned char key[64];
	snprintf(path, len, "%s/hvdrun-secret-XXXXXX", dir && dir[0] ? dir : "/tmp");
	int fd = mkstemp(path);   /* mode 0600 */
	int ok = fd >= 0 && getrandom(key, sizeof(key), 0) == (ssize_t)sizeof(key) &&
		 write(fd, key, sizeof(key)) == (ssize_t)sizeof(key);
	if (fd >= 0 && (close(fd) || !ok))
		unlink(path);
	if (fd < 0 || !ok)
		fprintf(stderr, "hvdrun: job secret: '%s': %s\n", path, strerror(errno));
	return fd >= 0 && ok ? 0 : -1;
}

static const char *const scheduler_vars[] = {
	"PMIX_NAMESPACE", "PMIX_RANK", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_NTASKS",
	"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "JOB_COMPLETION_INDEX", "HVD_GPU_BUSID",
};

static void set_number(const char *name, long v)
{
	char text[32];
	snprintf(text, sizeof(text), "%ld", v);
	setenv(name, text, 1);
}

/* Rank i's environment, in the child. */
static void rank_environment(const struct launch_plan *p, int i, int port, const char *secret)
{
	const struct launch_rank *r = &p->ranks[i];
	char coordinator[64];
	for (size_t k = 0; k < sizeof(scheduler_vars) / sizeof(scheduler_vars[0]); k++)
		unsetenv(scheduler_vars[k]);
	set_number("HVD_RANK", i);
	set_number("HVD_SIZE", p->count);
	snprintf(coordinator, sizeof(coordinator), "127.0.0.1:%d", port);
	setenv("HVD_COORDINATOR", coordinator, 1);
	setenv("HVD_SECRET_FILE", secret, 1);
	if (p->gpus) {
		setenv("CUDA_VISIBLE_DEVICES", r->visible, 1);
		setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	}
	if (r->busid[0])
		setenv("HVD_GPU_BUSID", r->busid, 1);
	setenv("HVD_CPUS", r->cpus, 1);
	set_number("HVD_NUMA", r->res.numa_node);
	set_number("HVD_SOCKET", r->res.socket);
	setenv("HVD_BIND", options_bind_name(p->bind), 1);
	setenv("HVD_PLUGIN_VERSION", HVD_VERSION, 1);
}

/* In the child: its own process group (hvdrun alone hears the terminal's
 * Ctrl-C and passes it on), output to its pipes, placed, then exec. */
static void start_rank(const struct launch_plan *p, int i, const struct launch_options *o,
		       int port, const char *secret, int out, int err, pid_t hvdrun)
{
	char why[512];
	int null = open("/dev/null", O_RDONLY);
	setpgid(0, 0);
	/* hvdrun killed (SIGKILL: nothing of it runs): its ranks go too */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != hvdrun)
		_exit(127);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	rank_environment(p, i, port, secret);
	if (bind_apply(p->bind, &p->ranks[i].res, why, sizeof(why))) {
		fprintf(stderr, "hvdrun: rank %d: %s\n", i, why);
		_exit(127);
	}
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "hvdrun: rank %d: '%s': %s\n", i, o->cmd[0], strerror(errno));
	_exit(127);
}

static void signal_ranks(struct job *j, int sig)
{
	for (int i = 0; i < j->plan->count; i++)
		if (j->ranks[i].running)
			kill(-j->ranks[i].pid, sig);
}

/* Every rank still running gets SIGTERM and SIGCONT; SIGKILL after the grace. */
static void end_ranks(struct job *j)
{
	if (j->ending)
		return;
	j->ending = 1;
	j->kill_at = now_s() + j->grace_s;
	signal_ranks(j, SIGTERM);
	signal_ranks(j, SIGCONT);
}

static void reap(struct job *j)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int i = 0;
		while (i < j->plan->count && j->ranks[i].pid != pid)
			i++;
		if (i == j->plan->count)
			continue;
		j->ranks[i].running = 0;
		j->alive--;
		int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (!status)
			continue;
		if (!j->failed_status)
			j->failed_status = status;
		if (j->ending)
			continue;
		if (WIFEXITED(st))
			fprintf(stderr, "hvdrun: rank %d (pid %d) exited with status %d: ending every "
				"rank (SIGTERM; SIGKILL after %g s)\n", i, (int)pid, status, j->grace_s);
		else
			fprintf(stderr, "hvdrun: rank %d (pid %d) was killed by SIG%s: ending every rank "
				"(SIGTERM; SIGKILL after %g s)\n", i, (int)pid, sigabbrev_np(WTERMSIG(st)),
				j->grace_s);
		end_ranks(j);
	}
}

static void on_hvdrun_signal(struct job *j, int sig)
{
	if (sig == SIGCHLD) {
		reap(j);
		return;
	}
	if (!j->received) {
		j->received = sig;
		fprintf(stderr, "hvdrun: SIG%s: ending every rank (SIGTERM: chexnet saves a checkpoint; "
			"SIGKILL after %g s; SIG%s again kills them now)\n", sigabbrev_np(sig), j->grace_s,
			sigabbrev_np(sig));
		end_ranks(j);
		return;
	}
	fprintf(stderr, "hvdrun: SIG%s again: killing every rank\n", sigabbrev_np(sig));
	signal_ranks(j, SIGKILL);
}

/* Writes each whole line of s prefixed; at EOF (or a line longer than the
 * buffer) what is left, as a line of its own. */
static void flush_lines(struct stream *s, int rank, int all)
{
	size_t start = 0;
	for (size_t k = 0; k < s->len; k++)
		if (s->buf[k] == '\n') {
			fprintf(s->to, "[rank %d] %.*s\n", rank, (int)(k - start), s->buf + start);
			start = k + 1;
		}
	if (all || (start == 0 && s->len == sizeof(s->buf))) {
		if (start < s->len)
			fprintf(s->to, "[rank %d] %.*s\n", rank, (int)(s->len - start), s->buf + start);
		start = s->len;
	}
	memmove(s->buf, s->buf + start, s->len - start);
	s->len -= start;
	fflush(s->to);
}

static void pump(struct stream *s, int rank)
{
	ssize_t r = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r > 0) {
		s->len += (size_t)r;
		flush_lines(s, rank, 0);
		return;
	}
	flush_lines(s, rank, 1);
	close(s->fd);
	s->fd = -1;
}

static int open_streams(const struct job *j)
{
	int n = 0;
	for (int i = 0; i < j->plan->count; i++)
		n += (j->ranks[i].out.fd >= 0) + (j->ranks[i].err.fd >= 0);
	return n;
}

/* Until every rank has ended and its output is read (a grandchild that
 * keeps a pipe open is waited for at most a second after the last rank). */
static void supervise(struct job *j)
{
	int n = j->plan->count;
	struct pollfd *fds = calloc((size_t)(2 * n + 1), sizeof(*fds));
	double quiet_since = 0;
	while (fds && (j->alive > 0 || open_streams(j) > 0)) {
		double t = now_s();
		if (j->alive == 0 && !quiet_since)
			quiet_since = t;
		if (j->alive == 0 && t - quiet_since > 1.0)
			break;
		if (j->ending && j->alive > 0 && t >= j->kill_at) {
			for (int i = 0; i < n; i++)
				if (j->ranks[i].running)
					fprintf(stderr, "hvdrun: rank %d (pid %d) did not end within %g s: "
						"killed\n", i, (int)j->ranks[i].pid, j->grace_s);
			signal_ranks(j, SIGKILL);
			j->kill_at = t + 3600;
		}
		fds[0] = (struct pollfd){ signal_pipe[0], POLLIN, 0 };
		for (int i = 0; i < n; i++) {
			fds[1 + 2 * i] = (struct pollfd){ j->ranks[i].out.fd, POLLIN, 0 };
			fds[2 + 2 * i] = (struct pollfd){ j->ranks[i].err.fd, POLLIN, 0 };
		}
		int ms = j->alive == 0 ? 200 : j->ending ? (int)((j->kill_at - t) * 1000) + 1 : 1000;
		if (poll(fds, (nfds_t)(2 * n + 1), ms > 0 ? ms : 1) < 0 && errno != EINTR)
			break;
		unsigned char sig;
		if (fds[0].revents)
			while (read(signal_pipe[0], &sig, 1) == 1)
				on_hvdrun_signal(j, sig);
		for (int i = 0; i < n; i++) {
			if (fds[1 + 2 * i].revents)
				pump(&j->ranks[i].out, i);
			if (fds[2 + 2 * i].revents)
				pump(&j->ranks[i].err, i);
		}
	}
	free(fds);
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK))
		return -1;
	sigemptyset(&sa.sa_mask);
	signal(SIGPIPE, SIG_IGN);
	return sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	       sigaction(SIGHUP, &sa, NULL) || sigaction(SIGCHLD, &sa, NULL) ? -1 : 0;
}

static int spawn(struct job *j, int i, const struct launch_options *o, int port,
		 const char *secret)
{
	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -1;
	pid_t self = getpid(), pid = fork();
	if (pid == 0)
		start_rank(j->plan, i, o, port, secret, out[1], err[1], self);
	close(out[1]);
	close(err[1]);
	if (pid < 0)
		return -1;
	setpgid(pid, pid);   /* as the child does: no signal reaches it in between */
	j->ranks[i] = (struct rank_proc){ .pid = pid, .running = 1,
		.out = { .fd = out[0], .to = stdout }, .err = { .fd = err[0], .to = stderr } };
	j->alive++;
	return 0;
}

int launch_run(const struct launch_plan *plan, const struct launch_options *o)
{
	struct job j = { .plan = plan, .grace_s = o->grace_s };
	char secret[4096];
	int port = o->port ? o->port : free_port();
	if (port <= 0 || install_signals() || make_secret(secret, sizeof(secret))) {
		fprintf(stderr, "hvdrun: start: '%d ranks': no loopback port, signal pipe or secret\n",
			plan->count);
		return 1;
	}
	j.ranks = calloc((size_t)plan->count, sizeof(*j.ranks));
	for (int i = 0; j.ranks && i < plan->count; i++)
		j.ranks[i].out.fd = j.ranks[i].err.fd = -1;
	for (int i = 0; j.ranks && i < plan->count; i++)
		if (spawn(&j, i, o, port, secret)) {
			fprintf(stderr, "hvdrun: rank %d: cannot start: %s\n", i, strerror(errno));
			j.failed_status = j.failed_status ? j.failed_status : 1;
			end_ranks(&j);
			break;
		}
	if (j.ranks)
		supervise(&j);
	unlink(secret);
	free(j.ranks);
	if (!j.ranks)
		return 1;
	return j.received ? 128 + j.received : j.failed_status;
}
