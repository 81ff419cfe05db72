/* runner.c - the one main of the test suite.
 *
 * Runs the groups of tests/groups.h in order (unit groups first), each case
 * in a forked child with a deadline and a fresh temp dir, and prints
 * `ok name`, `skip name: reason` or `FAIL name file:line: expr`, the time each
 * group took, and last `N passed, N failed[, N skipped]`. Starts the
 * tests/slurm cluster before the first group that needs it and always tears
 * it down. Exits non-zero iff a case failed.
 *
 * Usage: hvdtest [-l] [-q] [-g GROUP | -G GROUP]... [SUBSTRING]...
 * -g selects the groups whose name starts with GROUP (its ISA-capped
 * variants too), -G that group alone; -q keeps the unit groups not
 * marked slow (make check-quick); -l lists the selected cases instead
 * of running them. A selection that matches no case is an error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "groups.h"
#include "run_times.h"

#define DEFAULT_TIMEOUT_S 120
#define SKIP_EXIT 77

static struct {
	char root[PATH_MAX];       /* run's temp root */
	char shared[PATH_MAX];     /* shared by this run's hvdtests, nested ones too */
	char case_dir[PATH_MAX];   /* current case's temp dir */
	char src[PATH_MAX];
	char build[PATH_MAX];
	char data[PATH_MAX];
	char host[256];
	char cluster[PATH_MAX];    /* non-empty while the cluster is up */
	const char *case_name;
	int failures;              /* in the child: checks failed */
	int skip_fd;               /* in the child: where the skip reason goes */
} R;

/* ---------------------------------------------------------------- checks */

void test_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	const char *base = strrchr(file, '/');
	printf("FAIL %s %s:%d: ", R.case_name, base ? base + 1 : file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	R.failures++;
}

void test_skip(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (R.skip_fd >= 0 && write(R.skip_fd, msg, strlen(msg)) < 0)
		perror("hvdtest: skip reason");
	fflush(stdout);
	fflush(stderr);
	_exit(R.failures ? 1 : SKIP_EXIT);
}

int test_near(double a, double b, double atol, double rtol)
{
	if (isnan(a) || isnan(b))
		return 0;
	return fabs(a - b) <= atol + rtol * fabs(b);
}

size_t test_check_arrays_at(const char *file, int line, const char *what,
			    const float *a, const float *ref, size_t count,
			    double atol, double rtol)
{
	size_t bad = 0;
	for (size_t i = 0; i < count; i++) {
		if (test_near(a[i], ref[i], atol, rtol))
			continue;
		if (bad < 5)
			printf("  %s[%zu]: %.9g vs ref %.9g\n", what, i,
			       (double)a[i], (double)ref[i]);
		bad++;
	}
	if (bad)
		test_fail_at(file, line, "%s: %zu of %zu elements off (atol %g rtol %g)",
			     what, bad, count, atol, rtol);
	return bad;
}

/* -------------------------------------------------------------- fixtures */

const char *test_tmpdir(void) { return R.case_dir; }
const char *test_src_dir(void) { return R.src; }
const char *test_build_dir(void) { return R.build; }
const char *test_shared_dir(void) { return R.shared; }
const char *test_data_dir(void) { return R.data[0] ? R.data : NULL; }
const char *test_cluster_dir(void) { return R.cluster[0] ? R.cluster : NULL; }
const char *test_hostname(void) { return R.host; }

char *test_path(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

const char *test_tail(const char *s, size_t n)
{
	size_t len = strlen(s);
	return len > n ? s + len - n : s;
}

char *test_output_of(const char *cmd, int timeout_s)
{
	struct test_proc p;
	if (test_run(cmd, timeout_s, &p) != 0)
		test_fail_at(__FILE__, __LINE__, "'%.300s': could not run", cmd);
	else if (p.exit_code != 0)
		test_fail_at(__FILE__, __LINE__, "'%.300s': exit %d: %s", cmd, p.exit_code,
			     test_tail(p.err, 800));
	char *out = strdup(p.out ? p.out : "");
	test_proc_free(&p);
	size_t n = out ? strlen(out) : 0;
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	return out;
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap ? cap * 2 : 8192);
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int test_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t put = fwrite(data, 1, len, f);
	return (fclose(f) == 0 && put == len) ? 0 : -1;
}

/* ------------------------------------------------------------ processes */

int test_put(const char *rel, const char *text)
{
	char path[PATH_MAX + 256];
	snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), rel);
	for (char *s = path + strlen(test_tmpdir()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	int rc = test_write_file(path, text, strlen(text));
	if (rc)
		test_fail_at(__FILE__, __LINE__, "cannot write '%s'", path);
	return rc;
}

int test_same_file(const char *a, const char *b)
{
	size_t na = 0, nb = 0;
	char *da = test_read_file(a, &na), *db = test_read_file(b, &nb);
	int same = da && db && na == nb && memcmp(da, db, na) == 0;
	if (!same)
		test_fail_at(__FILE__, __LINE__, "'%s' (%zu bytes%s) and '%s' (%zu bytes%s) differ",
			     a, na, da ? "" : ", unreadable", b, nb, db ? "" : ", unreadable");
	free(da);
	free(db);
	return same;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct sink { char *buf; size_t len, cap; };

static void sink_add(struct sink *s, const char *data, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (!nb)
			return;
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = 0;
}

static int status_to_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Read both pipes until EOF or the deadline; kill the group at the deadline. */
static void drain_pipes(int fds[2], struct sink sinks[2], pid_t pid, double deadline,
			int *timed_out)
{
	int open_count = 2;
	while (open_count > 0) {
		struct pollfd pf[2];
		for (int i = 0; i < 2; i++)
			pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		double left = deadline - now_s();
		if (left <= 0) {
			kill(-pid, SIGKILL);
			*timed_out = 1;
			break;
		}
		int r = poll(pf, 2, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[8192];
			ssize_t got = read(fds[i], buf, sizeof(buf));
			if (got > 0) {
				sink_add(&sinks[i], buf, (size_t)got);
			} else {
				close(fds[i]);
				fds[i] = -1;
				open_count--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int test_run(const char *cmd, int timeout_s, struct test_proc *p)
{
	int out[2], err[2];
	memset(p, 0, sizeof(*p));
	p->exit_code = -1;
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -1;
	double t0 = now_s();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]); close(out[1]); close(err[0]); close(err[1]);
		int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull >= 0)
			dup2(devnull, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	struct sink sinks[2] = { { 0 }, { 0 } };
	sink_add(&sinks[0], "", 0);
	sink_add(&sinks[1], "", 0);
	int fds[2] = { out[0], err[0] };
	drain_pipes(fds, sinks, pid, t0 + timeout_s, &p->timed_out);
	int st = 0;
	if (p->timed_out)
		kill(-pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (p->timed_out)   /* leave nothing of the group behind */
		kill(-pid, SIGKILL);
	p->exit_code = status_to_code(st);
	p->seconds = now_s() - t0;
	p->out = sinks[0].buf ? sinks[0].buf : strdup("");
	p->err = sinks[1].buf ? sinks[1].buf : strdup("");
	return 0;
}

struct run_arg {
	const char *cmd;
	int timeout_s, rc;
	struct test_proc *p;
};

static void *run_thread(void *arg)
{
	struct run_arg *a = arg;
	a->rc = test_run(a->cmd, a->timeout_s, a->p);
	return NULL;
}

int test_run_together(const char *const *cmds, int n, int timeout_s, struct test_proc *ps)
{
	struct run_arg *args = calloc((size_t)n, sizeof(*args));
	pthread_t *threads = calloc((size_t)n, sizeof(*threads));
	int rc = args && threads ? 0 : -1, started = 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		args[i] = (struct run_arg){ cmds[i], timeout_s, -1, &ps[i] };
		if (pthread_create(&threads[i], NULL, run_thread, &args[i]) != 0)
			rc = -1;
		else
			started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(threads[i], NULL);
		if (args[i].rc != 0)
			rc = -1;
	}
	for (int i = started; i < n; i++)   /* never started: empty, freeable */
		ps[i] = (struct test_proc){ .exit_code = -1, .out = strdup(""), .err = strdup("") };
	free(args);
	free(threads);
	return rc;
}

void test_proc_free(struct test_proc *p)
{
	free(p->out);
	free(p->err);
	p->out = p->err = NULL;
}

/* --------------------------------------------------------------- cluster */

int test_cluster_plugstack(const char *args)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	if (!R.cluster[0])
		return -1;
	snprintf(path, sizeof(path), "%s/plugstack.conf", R.cluster);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "required %s/hvd.so %s\n", R.build, args ? args : "");
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* The cluster kinds: the one-node harness (with Slurm's cgroup task
 * plugins, task/affinity alone, or task/none) and the multi-node (netns)
 * one. */
static const char *cluster_script(enum test_needs kind)
{
	return kind == TEST_NEEDS_MULTINODE ? "multinode.sh" : "cluster.sh";
}

static const char *cluster_subdir(enum test_needs kind)
{
	return kind == TEST_NEEDS_MULTINODE ? "multinode"
	       : kind == TEST_NEEDS_CLUSTER_CGROUP ? "cluster-cgroup"
	       : kind == TEST_NEEDS_CLUSTER_AFFINITY ? "cluster-affinity" : "cluster";
}

static int cluster_cmd(enum test_needs kind, const char *verb)
{
	char cmd[3 * PATH_MAX + 64];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "HVD_CLUSTER_CGROUP=%d '%s/tests/slurm/%s' %s '%s/%s' '%s'",
		 kind == TEST_NEEDS_CLUSTER_CGROUP ? 1 : kind == TEST_NEEDS_CLUSTER_AFFINITY ? 2 : 0,
		 R.src, cluster_script(kind), verb, R.root,
		 cluster_subdir(kind),
		 strcmp(verb, "up") == 0 ? R.build : "");
	if (test_run(cmd, 180, &p) != 0)
		return -1;
	int rc = p.exit_code;
	if (rc != 0)
		printf("hvdtest: %s %s failed (exit %d):\n%s%s", cluster_script(kind), verb, rc,
		       p.out, p.err);
	test_proc_free(&p);
	return rc;
}

static const char *cluster_unavailable(void)
{
	if (geteuid() != 0)
		return "the Slurm test cluster needs root";
	if (system("command -v slurmctld >/dev/null && command -v slurmd >/dev/null "
		   "&& command -v munged >/dev/null && command -v srun >/dev/null") != 0)
		return "slurmctld/slurmd/munged/srun not installed (run make test-deps)";
	return NULL;
}

static enum test_needs cluster_kind;   /* kind of the cluster that is up */
static int cluster_used;               /* a cluster was up during this run */
static void remember_net_id(const char *dir);

static void cluster_down(void)
{
	if (!R.cluster[0])
		return;
	if (cluster_kind == TEST_NEEDS_MULTINODE)
		remember_net_id(R.cluster);
	cluster_cmd(cluster_kind, "down");
	setenv("HVD_TEST_CLUSTER", "", 1);
	unsetenv("SLURM_CONF");
	R.cluster[0] = 0;
}

/* After tear-down nothing the cluster started may survive: no process whose
 * command line or working directory lies under the run's temp root. */
static int proc_mentions(const char *pid, const char *needle)
{
	char path[64], buf[8192], cwd[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n > 0 ? n : 0] = 0;
	if (strstr(buf, needle)) {
		printf("left behind: pid %s: %s\n", pid, buf);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%s/cwd", pid);
	n = readlink(path, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = 0;
	if (strstr(cwd, needle)) {
		printf("left behind: pid %s (cwd %s): %s\n", pid, cwd, buf);
		return 1;
	}
	return 0;
}

/* The multi-node harness names its namespaces hvd-ID-nK and its links
 * hvbID / hvvIDnK (ID in DIR/net.env); none of this run's may outlive it.
 * Other runs' clusters on the same machine are none of our business. */
static char net_ids[256];

static void remember_net_id(const char *dir)
{
	char path[PATH_MAX + 16], *text;
	snprintf(path, sizeof(path), "%s/net.env", dir);
	text = test_read_file(path, NULL);
	const char *id = text ? strstr(text, "id=") : NULL;
	if (id && strlen(net_ids) + 8 < sizeof(net_ids)) {
		size_t n = strcspn(id + 3, "\n");
		strncat(net_ids, " ", sizeof(net_ids) - strlen(net_ids) - 1);
		strncat(net_ids, id + 3, n < 6 ? n : 6);
	}
	free(text);
}

static int count_net_leftovers(void)
{
	struct test_proc p;
	char cmd[1024];
	int n = 0;
	if (!net_ids[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "for id in %s; do ip netns list 2>/dev/null | grep \"^hvd-$id-\"; "
		 "ip -br link 2>/dev/null | grep -E \"^hv[bv]$id\"; done", net_ids);
	if (test_run(cmd, 30, &p) != 0)
		return 0;
	for (const char *c = p.out; *c; c++)
		n += (*c == '\n');
	if (n)
		printf("left behind (network):\n%s", p.out);
	test_proc_free(&p);
	return n;
}

/* Whose processes a sweep ends: the run's (its temp root), or in a
 * runner beside the others only its group's (ROOT/GROUP.). */
static char sweep_root[PATH_MAX + 200];

/* Processes of this run still alive (see proc_mentions); with kill_them,
 * each is sent SIGKILL as it is found. */
static int sweep_processes(int kill_them)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		pid_t pid = atoi(e->d_name);
		if (pid <= 0 || pid == getpid() ||
		    !proc_mentions(e->d_name, sweep_root[0] ? sweep_root : R.root))
			continue;
		n++;
		if (kill_them)
			kill(pid, SIGKILL);
	}
	closedir(d);
	return n;
}

static int count_leftovers(void)
{
	return sweep_processes(0) + count_net_leftovers();
}

/* A busy machine: two busy loops (one per core of the CI machines) and a
 * listener on TensorBoard's port 6006 that accepts and never answers, the
 * way a user's machine looks (HACKING.md, "Tests"). Beside other groups
 * (a lane's re-runs, or a run nested in a case that runs beside others:
 * HVD_SUITE_BESIDE) the loops are SCHED_IDLE: those groups are the load,
 * and the loops take every cycle they leave idle, never one they want. */
static struct { pid_t loops[2]; int listener, idle; } stress = { { 0, 0 }, -1, 0 };
static void stress_start(void);
static void stress_stop(void);

/* The groups marked beside, one after another in a child runner (a
 * lane beside the others), whose output goes to a file of the run's
 * root and whose tally comes back through a pipe. Two lanes at most run
 * at once: lanes[0] of groups that need no cluster, lanes[1] of one
 * cluster's groups. */
#define BESIDE_MAX 24
/* A lane's groups, then (from stressed_from on) the stress re-runs of
 * those marked stress, as NAME@stress: the lane runs them at its end,
 * beside busy loops of its own (under: their rows, renamed). */
struct lane { pid_t pid; int tally_fd; double t0; int count, stressed_from;
	      const struct test_group *g[BESIDE_MAX];
	      struct test_group under[BESIDE_MAX];
	      char under_name[BESIDE_MAX][140];
	      char out[PATH_MAX + 300]; };
static struct lane lanes[2] = { { .pid = 0, .tally_fd = -1 }, { .pid = 0, .tally_fd = -1 } };
static int beside_child;   /* this process runs one group beside the others */
/* Groups whose stress re-run a lane ran (indexed as test_groups). */
static unsigned char stressed_in_lane[512];

static struct lane *lane_for(enum test_needs needs)
{
	return &lanes[needs != TEST_NEEDS_NOTHING];
}

static int lanes_running(void)
{
	return lanes[0].pid > 0 || lanes[1].pid > 0;
}

/* The lanes' runners end with this one. */
static void on_signal(int sig)
{
	for (int i = 0; i < 2; i++)
		if (lanes[i].pid > 0)
			kill(lanes[i].pid, sig);
	stress_stop();
	cluster_down();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Returns NULL when up, else the reason every case of the group skips or
 * fails; *fatal says which. */
static const char *cluster_up(enum test_needs kind, int *fatal)
{
	static char why[256];
	const char *no = cluster_unavailable();
	*fatal = 0;
	if (no)
		return no;
	if (R.cluster[0] && cluster_kind == kind)
		return NULL;
	cluster_down();
	if (cluster_cmd(kind, "up") != 0) {
		cluster_cmd(kind, "down");
		*fatal = 1;
		snprintf(why, sizeof(why), "%s did not start", cluster_script(kind));
		return why;
	}
	cluster_kind = kind;
	cluster_used = 1;
	snprintf(R.cluster, sizeof(R.cluster), "%s/%s", R.root, cluster_subdir(kind));
	char conf[PATH_MAX + 16];
	snprintf(conf, sizeof(conf), "%s/slurm.conf", R.cluster);
	setenv("SLURM_CONF", conf, 1);
	setenv("HVD_TEST_CLUSTER", R.cluster, 1);
	return NULL;
}

/* ------------------------------------------------------------------ run */

struct tally { int passed, failed, skipped; };

static void make_case_dir(const char *group, int index)
{
	snprintf(R.case_dir, sizeof(R.case_dir), "%s/%s.%d", R.root, group, index);
	if (mkdir(R.case_dir, 0755) != 0 && errno != EEXIST)
		fprintf(stderr, "hvdtest: mkdir '%s': %s\n", R.case_dir, strerror(errno));
	chmod(R.case_dir, 0777);   /* tests may run programs as nobody */
}

/* What one group's run knows: its log (every case's stdout and stderr go
 * to a file, relayed to ours as they come, so a daemon a case starts holds
 * a file, never a pipe of ours) and its deadline. */
struct group_run {
	const struct test_group *g;
	int log_w, log_r;          /* the log, for the cases and for relaying */
	off_t relayed;
	double deadline;
	int expired;               /* the deadline passed during a case */
};

static void relay_log(struct group_run *gr)
{
	char buf[8192];
	ssize_t got;
	int any = 0;
	while ((got = pread(gr->log_r, buf, sizeof(buf), gr->relayed)) > 0) {
		if (!any++)
			run_times_erase();
		fwrite(buf, 1, (size_t)got, stdout);
		gr->relayed += got;
	}
	fflush(stdout);
	if (any)
		run_times_draw();
}

/* Wait for the case, relaying its output, until it ends or a deadline. */
static int wait_case(struct group_run *gr, pid_t pid, double deadline, int *st)
{
	for (;;) {
		relay_log(gr);
		if (waitpid(pid, st, WNOHANG) == pid)
			return 0;
		if (now_s() > deadline || now_s() > gr->deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, st, 0);
			gr->expired = gr->deadline < deadline;   /* the group's, not the case's */
			return -1;
		}
		usleep(20000);
	}
}

/* A case's `ok` line names its seconds where they are worth a look. */
#define CASE_SECONDS_SHOWN 2.0

static void report_case(const struct test_case *c, int timed_out, int timeout, int st,
			const char *reason, double seconds, struct tally *t)
{
	run_times_erase();
	if (timed_out) {
		printf("FAIL %s: timed out after %d s\n", c->name, timeout);
		t->failed++;
	} else if (WIFSIGNALED(st)) {
		printf("FAIL %s: killed by signal %d (%s)\n", c->name, WTERMSIG(st),
		       strsignal(WTERMSIG(st)));
		t->failed++;
	} else if (WEXITSTATUS(st) == SKIP_EXIT) {
		printf("skip %s: %s\n", c->name, reason);
		t->skipped++;
	} else if (WEXITSTATUS(st) == 0) {
		if (seconds >= CASE_SECONDS_SHOWN)
			printf("ok %s (%.1f s)\n", c->name, seconds);
		else
			printf("ok %s\n", c->name);
		t->passed++;
	} else {
		if (WEXITSTATUS(st) != 1)
			printf("FAIL %s: exit status %d\n", c->name, WEXITSTATUS(st));
		t->failed++;
	}
	fflush(stdout);
	run_times_draw();
}

/* A case leaves the test cluster as it found it: no job of its own still
 * queued or running (a killed srun leaves its allocation behind for good,
 * and every later case would queue behind it). Jobs still pending or
 * running 5 s after the case are cancelled (completing ones end on their
 * own) and waited for; their ids are written to `ids`. Returns how many
 * there were. */
static int cancel_left_jobs(char *ids, size_t len)
{
	struct test_proc p;
	int n = 0;
	ids[0] = 0;
	if (!R.cluster[0])
		return 0;
	const char *cmd = "left() { squeue -h -t PD,CF,R,S -o %i 2>/dev/null | tr '\\n' ' '; }; "
		"for i in $(seq 50); do [ -z \"$(left)\" ] && exit 0; sleep 0.1; done; "
		"j=$(left); scancel $j; for i in $(seq 300); do [ -z \"$(squeue -h -o %i)\" ] && "
		"break; sleep 0.2; done; echo $j";
	if (test_run(cmd, 120, &p) != 0)
		return 0;
	snprintf(ids, len, "%.*s", (int)strcspn(p.out, "\n"), p.out);
	for (const char *c = ids; *c; c++)
		n += (*c != ' ' && (c[1] == ' ' || c[1] == 0));
	test_proc_free(&p);
	return n;
}

static void run_case(struct group_run *gr, const struct test_case *c, int index,
		     struct tally *t)
{
	const struct test_group *g = gr->g;
	int skip_pipe[2];
	make_case_dir(g->name, index);
	R.case_name = c->name;
	/* close-on-exec, and never a blocking read: whoever inherits the
	 * write end cannot hold the runner */
	if (pipe2(skip_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		perror("hvdtest: pipe");
		t->failed++;
		return;
	}
	fflush(stdout);
	/* before the fork: the child may run its case before the parent runs on */
	double started = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		close(skip_pipe[0]);
		setpgid(0, 0);
		dup2(gr->log_w, 1);
		dup2(gr->log_w, 2);
		R.skip_fd = skip_pipe[1];
		R.failures = 0;
		if (chdir(R.case_dir) != 0)
			_exit(1);
		if (beside_child || lanes_running())   /* a run it nests is beside others */
			setenv("HVD_SUITE_BESIDE", "1", 1);
		if (g->env && putenv((char *)g->env) != 0)
			_exit(1);
		c->fn();
		fflush(stdout);
		fflush(stderr);
		_exit(R.failures ? 1 : 0);
	}
	close(skip_pipe[1]);
	setpgid(pid, pid);
	int timeout = g->timeout_s ? g->timeout_s : DEFAULT_TIMEOUT_S;
	int st = 0;
	int timed_out = wait_case(gr, pid, started + timeout, &st) != 0;
	relay_log(gr);
	char reason[512] = "";
	ssize_t got = read(skip_pipe[0], reason, sizeof(reason) - 1);
	reason[got > 0 ? got : 0] = 0;
	close(skip_pipe[0]);
	if (gr->expired)
		return;
	report_case(c, timed_out, timeout, st, reason, now_s() - started, t);
	char ids[256];
	if (g->needs != TEST_NEEDS_NOTHING && cancel_left_jobs(ids, sizeof(ids)) > 0) {
		printf("FAIL %s: left job(s) %s on the test cluster: cancelled\n", c->name, ids);
		t->failed++;
	}
}

static int wanted(const char *name, int argc, char **argv, int first)
{
	if (first >= argc)
		return 1;
	for (int i = first; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

/* -g NAME selects the groups whose name starts with NAME; hidden groups
 * only by their exact name. -G NAME is kept as "=NAME": that group alone. */
static int quick;   /* -q: the unit groups not marked slow */

static int group_selected(const struct test_group *g, const char **groups, int ngroups)
{
	if (quick && (g->needs != TEST_NEEDS_NOTHING || g->slow))
		return 0;
	if (ngroups == 0)
		return !g->hidden;
	for (int i = 0; i < ngroups; i++) {
		if (groups[i][0] == '=') {
			if (strcmp(g->name, groups[i] + 1) == 0)
				return 1;
			continue;
		}
		if (strcmp(g->name, groups[i]) == 0)
			return 1;
		if (!g->hidden && strncmp(g->name, groups[i], strlen(groups[i])) == 0)
			return 1;
	}
	return 0;
}

static int group_named(const char *name)
{
	for (int gi = 0; test_groups[gi].name; gi++)
		if (strcmp(test_groups[gi].name, name) == 0)
			return 1;
	return 0;
}

static int case_selected(const struct test_group *g, int i, int argc, char **argv, int first);

/* How many cases the selection runs; with print, list them. */
static int stress_rerun_selected(const struct test_group *g, const char **groups, int ngroups);

/* The cases the selection runs (printed with print), stress re-runs as
 * NAME@stress included. */
static int selected_cases(const char **groups, int ngroups, int argc, char **argv, int first,
			  int print)
{
	int n = 0;
	for (int gi = 0; test_groups[gi].name; gi++) {
		const struct test_group *g = &test_groups[gi];
		int plain = group_selected(g, groups, ngroups);
		int stressed = stress_rerun_selected(g, groups, ngroups);
		struct test_group under = *g;
		char name[140];
		snprintf(name, sizeof(name), "%s@stress", g->name);
		under.name = name;
		under.matching = g->stress_matching ? g->stress_matching : g->matching;
		for (int i = 0; (plain || stressed) && g->cases[i].name; i++) {
			int p = plain && case_selected(g, i, argc, argv, first);
			int s = stressed && case_selected(&under, i, argc, argv, first);
			n += p + s;
			if (print && p)
				printf("%s %s\n", g->name, g->cases[i].name);
			if (print && s)
				printf("%s@stress %s\n", g->name, g->cases[i].name);
		}
	}
	return n;
}

static int last_cluster_group(const char **groups, int ngroups)
{
	int last = -1;
	for (int i = 0; test_groups[i].name; i++)
		if (test_groups[i].needs != TEST_NEEDS_NOTHING &&
		    group_selected(&test_groups[i], groups, ngroups))
			last = i;
	return last;
}

/* 1 when name contains one of the '|'-separated alternatives. */
static int name_matches(const char *name, const char *alternatives)
{
	for (const char *a = alternatives; *a; a += strcspn(a, "|") + (a[strcspn(a, "|")] != '\0')) {
		size_t len = strcspn(a, "|");
		for (const char *p = name; len && (p = strchr(p, *a)); p++)
			if (!strncmp(p, a, len))
				return 1;
	}
	return 0;
}

/* A run that re-runs a group under stress after the suite (a whole run:
 * not -g NAME, -q or HVD_STRESS=1) leaves the cases of that re-run to it:
 * the same checks under load, which only makes them harder. Set by main. */
static const char **stress_groups;
static int stress_ngroups, stress_reruns_follow;

static int left_to_stress(const struct test_group *g, int i)
{
	return stress_reruns_follow && !strstr(g->name, "@stress") &&
	       stress_rerun_selected(g, stress_groups, stress_ngroups) &&
	       (!g->stress_matching || name_matches(g->cases[i].name, g->stress_matching));
}

static int case_selected(const struct test_group *g, int i, int argc, char **argv, int first)
{
	return wanted(g->cases[i].name, argc, argv, first) &&
	       (!g->matching || name_matches(g->cases[i].name, g->matching)) &&
	       !left_to_stress(g, i);
}

/* A group's deadline: its own, else the sum of its selected cases' ones. */
static int group_deadline_s(const struct test_group *g, int argc, char **argv, int first)
{
	int sum = 0;
	if (g->deadline_s)
		return g->deadline_s;
	for (int i = 0; g->cases[i].name; i++)
		if (case_selected(g, i, argc, argv, first))
			sum += g->timeout_s ? g->timeout_s : DEFAULT_TIMEOUT_S;
	return sum;
}

static void print_log_tail(const char *path, int lines)
{
	char *text = test_read_file(path, NULL);
	if (!text)
		return;
	const char *p = text + strlen(text);
	while (p > text && p[-1] == '\n')
		p--;
	for (int n = 0; p > text; p--)
		if (p[-1] == '\n' && ++n == lines)
			break;
	printf("%s%s", p, p[0] && p[strlen(p) - 1] != '\n' ? "\n" : "");
	free(text);
}

/* The group ran out of time: it fails as a whole, and nothing it started
 * survives it: its case's process group is gone already, its cluster goes
 * down, and every process still working under the run's root (while a
 * lane runs beside: under the group's case folders) is killed. */
static void end_expired_group(const struct group_run *gr, const char *log, int deadline_s)
{
	printf("FAIL group %s: passed its deadline of %d s in %s; the last lines of its log:\n",
	       gr->g->name, deadline_s, R.case_name);
	print_log_tail(log, 20);
	if (gr->g->needs != TEST_NEEDS_NOTHING)
		cluster_down();
	int beside = lanes_running();   /* the lanes' processes are the lanes' */
	if (beside)
		snprintf(sweep_root, sizeof(sweep_root), "%s/%s.", R.root, gr->g->name);
	sweep_processes(1);
	if (beside)
		sweep_root[0] = 0;
}

static void run_cases(struct group_run *gr, int argc, char **argv, int first,
		      const char *why, int fatal, struct tally *t)
{
	const struct test_group *g = gr->g;
	for (int i = 0; g->cases[i].name && !gr->expired; i++) {
		if (!case_selected(g, i, argc, argv, first))
			continue;
		if (!why) {
			run_case(gr, &g->cases[i], i, t);
			continue;
		}
		run_times_erase();
		printf("%s %s: %s\n", fatal ? "FAIL" : "skip", g->cases[i].name, why);
		if (fatal)
			t->failed++;
		else
			t->skipped++;
	}
}

static void run_group(const struct test_group *g, int argc, char **argv, int first,
		      struct tally *t)
{
	struct group_run gr = { .g = g };
	const char *why = NULL;
	int fatal = 0;
	double t0 = now_s();
	run_times_group_start(g->name);
	const char *same = g->redundant ? g->redundant(g->env) : NULL;
	char where[200];
	if (same) {
		run_times_erase();
		printf("skip %s: %s\n", g->name, same);
		t->skipped++;
		run_times_group_done(g->name, now_s() - t0, where, sizeof(where));
		return;
	}
	char log[PATH_MAX + 300];
	snprintf(log, sizeof(log), "%s/%s.log", R.root, g->name);
	gr.log_w = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	gr.log_r = open(log, O_RDONLY | O_CLOEXEC);
	if (gr.log_w < 0 || gr.log_r < 0) {
		run_times_erase();
		printf("FAIL group %s: cannot open its log '%s': %s\n", g->name, log,
		       strerror(errno));
		t->failed++;
		return;
	}
	if (g->needs != TEST_NEEDS_NOTHING)
		why = cluster_up(g->needs, &fatal);
	int deadline_s = group_deadline_s(g, argc, argv, first);
	gr.deadline = now_s() + deadline_s;
	run_times_draw();
	run_cases(&gr, argc, argv, first, why, fatal, t);
	if (gr.expired) {
		run_times_erase();
		end_expired_group(&gr, log, deadline_s);
		t->failed++;
	}
	close(gr.log_w);
	close(gr.log_r);
	run_times_group_done(g->name, now_s() - t0, where, sizeof(where));
	if (beside_child)
		snprintf(where, sizeof(where), " (beside the groups after it)");
	run_times_erase();
	printf("-- group %s: %.1f s%s\n", g->name, now_s() - t0, where);
	fflush(stdout);
	run_times_draw();
}

/* ------------------------------------------------------------ beside */


/* What the runner beside sends back: its tally, each group's seconds (it
 * may be collected long after it ended), and whether it ran a cluster
 * (down by then) and its network ids: the run's last check counts what
 * that cluster left behind too. */
struct beside_result { struct tally t; double seconds[BESIDE_MAX]; int cluster_used;
		       char net_ids[sizeof(net_ids)]; };

/* Whether g goes to the lane beside the others in this run. */
static int beside_now(const struct test_group *g)
{
	return g->beside == 1 || (g->beside == BESIDE_IN_QUICK && quick);
}

/* The lane's groups: the selected ones marked beside from gi on - for
 * the unit lane every later one that needs no cluster, for a cluster's
 * lane up to the first group that needs another cluster (or none) -
 * then the stress re-runs of those marked stress (a run that re-runs
 * them: stress_reruns_follow), which the run after the suite leaves to
 * the lane. */
static void beside_lane(struct lane *L, int gi, const char **groups, int ngroups)
{
	enum test_needs needs = test_groups[gi].needs;
	L->count = 0;
	for (; test_groups[gi].name && L->count < BESIDE_MAX; gi++) {
		const struct test_group *g = &test_groups[gi];
		if (g->needs != needs && needs != TEST_NEEDS_NOTHING)
			break;
		if (g->needs == needs && beside_now(g) && group_selected(g, groups, ngroups))
			L->g[L->count++] = g;
	}
	L->stressed_from = L->count;
	for (int i = 0; i < L->stressed_from && L->count < BESIDE_MAX; i++) {
		const struct test_group *g = L->g[i];
		if (!stress_reruns_follow || !stress_rerun_selected(g, groups, ngroups))
			continue;
		struct test_group *u = &L->under[L->count];
		*u = *g;
		snprintf(L->under_name[L->count], sizeof(L->under_name[0]), "%s@stress", g->name);
		u->name = L->under_name[L->count];
		u->matching = g->stress_matching ? g->stress_matching : g->matching;
		L->g[L->count++] = u;
		stressed_in_lane[g - test_groups] = 1;
	}
}

/* The lane in the child: each group in turn, its processes its own. */
static void beside_run(const struct lane *L, int argc, char **argv, int first, int tally_fd)
{
	struct beside_result r = { { 0, 0, 0 }, { 0 }, 0, "" };

	beside_child = 1;
	lanes[0].pid = lanes[1].pid = 0;   /* the other lane is the parent's */
	run_times_erase();
	for (int i = 0; i < L->count; i++) {
		double t0 = now_s();
		snprintf(sweep_root, sizeof(sweep_root), "%s/%s.", R.root, L->g[i]->name);
		if (i >= L->stressed_from) {
			stress.idle = 1;   /* beside the groups in line */
			stress_start();
		}
		run_group(L->g[i], argc, argv, first, &r.t);
		r.seconds[i] = now_s() - t0;
	}
	if (L->stressed_from < L->count)   /* else the loops are the parent's (HVD_STRESS=1) */
		stress_stop();
	cluster_down();
	r.cluster_used = cluster_used;
	snprintf(r.net_ids, sizeof(r.net_ids), "%s", net_ids);
	fflush(stdout);
	_exit(write(tally_fd, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

static void beside_start(int gi, const char **groups, int ngroups, int argc, char **argv,
			 int first, struct tally *in_line)
{
	int fds[2];
	struct lane *L = lane_for(test_groups[gi].needs);
	beside_lane(L, gi, groups, ngroups);
	snprintf(L->out, sizeof(L->out), "%s/%s.beside", R.root, L->g[0]->name);
	int out = open(L->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	fflush(stdout);
	pid_t pid = out < 0 || pipe2(fds, O_CLOEXEC) != 0 ? -1 : fork();
	if (pid < 0) {   /* in line, then; the lane's others in their turn */
		if (out >= 0)
			close(out);
		L->count = 0;
		run_group(&test_groups[gi], argc, argv, first, in_line);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		dup2(out, 1);
		beside_run(L, argc, argv, first, fds[1]);
	}
	close(out);
	close(fds[1]);
	L->pid = pid, L->tally_fd = fds[0], L->t0 = now_s();
	for (int i = 0; i < L->count; i++) {
		run_times_beside(L->g[i]->name);
		printf("-- group %s: started beside the groups after it%s%s\n", L->g[i]->name,
		       i ? ", after " : "", i ? L->g[i - 1]->name : "");
	}
	run_times_erase();
	fflush(stdout);
}

/* Whether g runs in a lane beside the others now. */
static int in_lane(const struct test_group *g)
{
	for (int l = 0; l < 2; l++)
		for (int i = 0; lanes[l].pid && i < lanes[l].count; i++)
			if (lanes[l].g[i] == g)
				return 1;
	return 0;
}

/* Whether the cluster's lane must end before g runs: g is not in it and
 * needs its cluster. The unit lane runs on beside the cluster groups
 * (their own lane's too) until the end. */
static int lane_ends_before(const struct test_group *g)
{
	const struct lane *L = &lanes[1];
	return L->pid && !in_lane(g) && g->needs == L->g[0]->needs;
}

/* Wait for a lane's groups, print their output, count their cases. */
static void beside_collect(struct lane *L, struct tally *t)
{
	struct beside_result r = { { 0, 0, 0 }, { 0 }, 0, "" };
	char where[200], buf[8192];
	int st = 0;
	if (!L->pid)
		return;
	double waited = now_s();
	waitpid(L->pid, &st, 0);
	waited = now_s() - waited;
	int got = (int)read(L->tally_fd, &r, sizeof(r));
	close(L->tally_fd);
	run_times_erase();
	int in = open(L->out, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	if (in >= 0)
		close(in);
	if (got != (int)sizeof(r)) {
		printf("FAIL group %s: its runner beside the others ended without a tally "
		       "(status %d)\n", L->g[0]->name, st);
		r.t.failed++;
		r.seconds[0] = now_s() - L->t0;
	}
	t->passed += r.t.passed, t->failed += r.t.failed, t->skipped += r.t.skipped;
	cluster_used |= r.cluster_used;
	if (r.net_ids[0] && strlen(net_ids) + strlen(r.net_ids) < sizeof(net_ids))
		strcat(net_ids, r.net_ids);
	for (int i = 0; i < L->count; i++) {
		run_times_group_done(L->g[i]->name, r.seconds[i], where, sizeof(where));
		printf("-- group %s collected: it took %.1f s, the run waited %.1f s for it%s\n",
		       L->g[i]->name, r.seconds[i], i == L->count - 1 ? waited : 0.0, where);
	}
	fflush(stdout);
	L->pid = 0;
	run_times_draw();
}

/* ------------------------------------------------------------ stress */


static int stress_listen(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64))) {
		printf("hvdtest: stress: port %d: %s (something listens there already: "
		       "the same hazard)\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void stress_start(void)
{
	if (stress.loops[0])
		return;
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			struct sched_param none = { 0 };
			setpgid(0, 0);
			prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the runner */
			if (stress.idle && sched_setscheduler(0, SCHED_IDLE, &none) != 0)
				_exit(1);
			for (volatile unsigned long n = 0;; n++)
				;
		}
		stress.loops[i] = pid > 0 ? pid : 0;
	}
	stress.listener = stress_listen(6006);
	printf("hvdtest: stress: two busy loops%s (pids %d %d) and a listener on port 6006\n",
	       stress.idle ? " at SCHED_IDLE beside the groups that run now" : "",
	       (int)stress.loops[0], (int)stress.loops[1]);
}

static void stress_stop(void)
{
	for (int i = 0; i < 2; i++)
		if (stress.loops[i] > 0) {
			kill(stress.loops[i], SIGKILL);
			waitpid(stress.loops[i], NULL, 0);
			stress.loops[i] = 0;
		}
	if (stress.listener >= 0)
		close(stress.listener);
	stress.listener = -1;
}

/* Groups marked `stress` run again under stress after the suite (as
 * NAME@stress): in a whole run, or when -g names NAME@stress. */
static int stress_rerun_selected(const struct test_group *g, const char **groups, int ngroups)
{
	char name[128];
	if (!g->stress || quick)
		return 0;
	if (ngroups == 0)
		return !g->hidden;
	snprintf(name, sizeof(name), "%s@stress", g->name);
	for (int i = 0; i < ngroups; i++) {
		const char *sel = groups[i] + (groups[i][0] == '=');   /* -G: exact */
		if (strstr(sel, "@stress") && (groups[i][0] == '=' ? strcmp(name, sel) == 0
					       : strncmp(name, sel, strlen(sel)) == 0))
			return 1;
	}
	return 0;
}

static void run_stress_reruns(const char **groups, int ngroups, int argc, char **argv,
			      int first, struct tally *t)
{
	for (int gi = 0; test_groups[gi].name; gi++) {
		struct test_group g = test_groups[gi];
		char name[128];
		if (!stress_rerun_selected(&g, groups, ngroups) || stressed_in_lane[gi])
			continue;
		snprintf(name, sizeof(name), "%s@stress", g.name);
		g.name = name;
		g.matching = g.stress_matching ? g.stress_matching : g.matching;
		stress_start();
		run_group(&g, argc, argv, first, t);
	}
	stress_stop();
}

/* The groups this run will run, in order, for the estimate of what is left. */
static void plan_times(const char **groups, int ngroups)
{
	static const char *names[256];
	static char stressed[64][140];
	int n = 0, k = 0;
	for (int gi = 0; test_groups[gi].name && n < 256; gi++)
		if (group_selected(&test_groups[gi], groups, ngroups))
			names[n++] = test_groups[gi].name;
	const char *all_stressed = getenv("HVD_STRESS");
	int reruns = !(all_stressed && strcmp(all_stressed, "1") == 0);
	for (int gi = 0; reruns && test_groups[gi].name && n < 256 && k < 64; gi++)
		if (stress_rerun_selected(&test_groups[gi], groups, ngroups)) {
			snprintf(stressed[k], sizeof(stressed[k]), "%s@stress", test_groups[gi].name);
			names[n++] = stressed[k++];
		}
	run_times_begin(R.build, names, n);
}

static void find_places(const char *argv0)
{
	const char *src = getenv("HVD_SRC"), *build = getenv("HVD_BUILD");
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(R.build, sizeof(R.build), "%s", build ? build : self);
	if (src) {
		snprintf(R.src, sizeof(R.src), "%s", src);
	} else if (!realpath(".", R.src)) {
		snprintf(R.src, sizeof(R.src), ".");
	}
	const char *data = getenv("HVD_TEST_DATA");
	if (!data || !data[0] || !realpath(data, R.data))
		R.data[0] = 0;
	if (gethostname(R.host, sizeof(R.host)) != 0)
		snprintf(R.host, sizeof(R.host), "localhost");
	char *dot = strchr(R.host, '.');
	if (dot)
		*dot = 0;
	(void)argv0;
}

static int make_root(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(R.root, sizeof(R.root), "%s/hvdtest.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(R.root)) {
		fprintf(stderr, "hvdtest: mkdtemp '%s': %s\n", R.root, strerror(errno));
		return -1;
	}
	chmod(R.root, 0755);
	/* The outermost hvdtest makes the shared folder in its root (removed
	 * with it); the hvdtests it runs, through check.sh too, inherit it. */
	const char *shared = getenv("HVD_TEST_SHARED");
	if (shared && *shared) {
		snprintf(R.shared, sizeof(R.shared), "%s", shared);
		return 0;
	}
	snprintf(R.shared, sizeof(R.shared), "%s/shared", R.root);
	if (mkdir(R.shared, 0755) != 0) {
		fprintf(stderr, "hvdtest: mkdir '%s': %s\n", R.shared, strerror(errno));
		return -1;
	}
	setenv("HVD_TEST_SHARED", R.shared, 1);
	/* per-user caches (the gpu backend's timed algorithms) stay in the run */
	char cache[PATH_MAX + 16];
	snprintf(cache, sizeof(cache), "%s/xdg-cache", R.shared);
	setenv("XDG_CACHE_HOME", cache, 1);
	return 0;
}

static void remove_root(void)
{
	const char *keep = getenv("HVD_TEST_KEEP");
	if (keep && strcmp(keep, "1") == 0) {
		printf("hvdtest: kept %s\n", R.root);
		return;
	}
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", R.root);
	if (system(cmd) != 0)
		fprintf(stderr, "hvdtest: could not remove %s\n", R.root);
}

int main(int argc, char **argv)
{
	const char *groups[64];
	char exact[64][128];
	int ngroups = 0, list = 0, first = 1;
	for (; first < argc; first++) {
		if (strcmp(argv[first], "-l") == 0) {
			list = 1;
		} else if (strcmp(argv[first], "-q") == 0) {
			quick = 1;
		} else if (strcmp(argv[first], "-g") == 0 && first + 1 < argc && ngroups < 64) {
			groups[ngroups++] = argv[++first];
		} else if (strcmp(argv[first], "-G") == 0 && first + 1 < argc && ngroups < 64) {
			if (!group_named(argv[++first])) {
				fprintf(stderr, "hvdtest: -G '%s': no such group (hvdtest -l)\n", argv[first]);
				return 2;
			}
			snprintf(exact[ngroups], sizeof(exact[ngroups]), "=%s", argv[first]);
			groups[ngroups] = exact[ngroups];
			ngroups++;
		} else if (argv[first][0] == '-') {
			fprintf(stderr, "hvdtest: unknown option: '%s': usage: hvdtest [-l] [-q] [-g GROUP | "
				"-G GROUP]... [SUBSTRING]...\n", argv[first]);
			return 2;
		} else {
			break;
		}
	}
	const char *all_stressed = getenv("HVD_STRESS"), *nested = getenv("HVD_SUITE_BESIDE");
	stress.idle = nested && strcmp(nested, "1") == 0;
	stress_groups = groups, stress_ngroups = ngroups;
	stress_reruns_follow = !(all_stressed && strcmp(all_stressed, "1") == 0);
	if (selected_cases(groups, ngroups, argc, argv, first, list) == 0) {
		fprintf(stderr, "hvdtest: the selection matches no case (hvdtest -l lists them)\n");
		return 2;
	}
	if (list)
		return 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	find_places(argv[0]);
	if (make_root() != 0)
		return 2;
	R.skip_fd = -1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	struct tally t = { 0, 0, 0 };
	int last_cluster = last_cluster_group(groups, ngroups);
	plan_times(groups, ngroups);
	double t0 = now_s();
	if (all_stressed && strcmp(all_stressed, "1") == 0)
		stress_start();
	for (int gi = 0; test_groups[gi].name; gi++) {
		const struct test_group *g = &test_groups[gi];
		if (!group_selected(g, groups, ngroups))
			continue;
		if (lane_ends_before(g))
			beside_collect(&lanes[1], &t);
		if (beside_now(g) && !lane_for(g->needs)->pid)
			beside_start(gi, groups, ngroups, argc, argv, first, &t);
		else if (!in_lane(g))
			run_group(g, argc, argv, first, &t);
		if (gi == last_cluster)
			cluster_down();
	}
	beside_collect(&lanes[1], &t);
	beside_collect(&lanes[0], &t);
	if (!stress.loops[0])
		run_stress_reruns(groups, ngroups, argc, argv, first, &t);
	stress_stop();
	cluster_down();
	if (cluster_used) {
		if (count_leftovers() == 0) {
			printf("ok cluster_teardown_leaves_nothing\n");
			t.passed++;
		} else {
			printf("FAIL cluster_teardown_leaves_nothing: processes survive tear-down\n");
			t.failed++;
		}
	}
	remove_root();
	run_times_finish(ngroups == 0 && first >= argc && !quick);
	printf("-- all groups: %.1f s\n", now_s() - t0);
	if (t.skipped)
		printf("%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped);
	else
		printf("%d passed, %d failed\n", t.passed, t.failed);
	return t.failed ? 1 : 0;
}
