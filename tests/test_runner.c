/* test_runner.c - the runner checks itself: a hidden group whose cases
 * pass, fail, skip, crash and hang must give the right lines, counts and
 * exit status. What it does not do: test any product code.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "run_times.h"

/* ---- the hidden "selftest" group (its failures are the point) ---- */
static void selftest_passes(void) { CHECK(1 + 1 == 2); CHECK_NEAR(1.0, 1.0 + 1e-9, 1e-6, 0); }
static void selftest_fails(void) { CHECK_INT(2 + 2, 5); CHECK(0 == 1); }
static void selftest_skips(void) { SKIP("no such thing here"); }
static void selftest_crashes(void) { abort(); }
static void selftest_hangs(void) { for (;;) pause(); }

/* ---- the hidden "selftest-hang" group: a daemon that holds the runner's
 * pipes and files, then a hang that only the group's deadline ends ---- */
static void selftest_daemon_holds_pipes(void)
{
	pid_t pid = fork();
	if (pid == 0) {          /* no exec: every descriptor stays inherited */
		setsid();
		if (fork() == 0) {
			const char *pidfile = getenv("HVD_SELFTEST_PIDFILE");
			FILE *f = pidfile ? fopen(pidfile, "w") : NULL;
			if (f) {
				fprintf(f, "%d\n", (int)getpid());
				fclose(f);
			}
			sleep(600);
		}
		_exit(0);
	}
	CHECK(pid > 0);
	const char *pidfile = getenv("HVD_SELFTEST_PIDFILE");
	for (int i = 0; pidfile && i < 500 && access(pidfile, F_OK) != 0; i++)
		usleep(10000);   /* the daemon is up before the case ends */
}

static void selftest_group_hangs(void)
{
	printf("about to hang\n");
	fflush(stdout);
	for (;;)
		pause();
}

const struct test_case selftest_hang_tests[] = {
	{ "selftest_daemon_holds_pipes", selftest_daemon_holds_pipes },
	{ "selftest_group_hangs", selftest_group_hangs },
	{ 0 }
};

/* ---- the hidden "selftest-cluster-hang" group: a job step that never
 * ends, waited on with no limit of its own ---- */
static void selftest_step_hangs(void)
{
	printf("starting a step that never ends\n");
	fflush(stdout);
	if (system("srun -n 1 sleep 600") != 0)
		printf("srun ended\n");
}

const struct test_case selftest_cluster_hang_tests[] = {
	{ "selftest_step_hangs", selftest_step_hangs },
	{ 0 }
};

/* ---- the hidden "selftest-cluster-beside" group: a lane with a cluster
 * of its own (task/affinity) whose step spans a hung group's end in line
 * (selftest-cluster-hang): the sweep after that group leaves it alone ---- */
static void selftest_lane_step_outlives_a_hung_group(void)
{
	/* from the moment the group in line hangs until its cluster is gone
	 * (the sweep follows at once), and 3 s more */
	int rc = system("srun -n 1 sh -c 'for i in $(seq 900); do grep -qs \"never ends\" "
			"../selftest-cluster-hang.log && break; sleep 0.1; done; for i in $(seq 900); "
			"do [ -d ../cluster ] || exec sleep 3; sleep 0.1; done; exit 3'");
	CHECK_INT(rc, 0);
	CHECK(system("srun -n 1 true") == 0);
	printf("lane cluster: %s\n", test_cluster_dir());
}

const struct test_case selftest_cluster_beside_tests[] = {
	{ "selftest_lane_step_outlives_a_hung_group", selftest_lane_step_outlives_a_hung_group },
	{ 0 }
};

/* ---- the hidden "selftest-cluster-leftjob" group: a case that leaves a
 * job holding the whole node, and one that needs the node ---- */
static void selftest_leaves_a_job(void)
{
	CHECK(system("sbatch -Q --exclusive -J hvd-left --wrap 'sleep 600'") == 0);
}

static void selftest_cluster_is_free(void)
{
	CHECK(system("srun -Q --exclusive --immediate=10 -n 1 true") == 0);
}

const struct test_case selftest_cluster_leftjob_tests[] = {
	{ "selftest_leaves_a_job", selftest_leaves_a_job },
	{ "selftest_cluster_is_free", selftest_cluster_is_free },
	{ 0 }
};

const struct test_case selftest_next_tests[] = {
	{ "selftest_next_group_runs", selftest_passes },
	{ 0 }
};

/* ---- the hidden "selftest-beside" group: runs beside the next ---- */
static void selftest_beside_sleeps(void) { sleep(2); CHECK(1); }

const struct test_case selftest_beside_tests[] = {
	{ "selftest_beside_sleeps", selftest_beside_sleeps },
	{ "selftest_beside_fails", selftest_fails },
	{ 0 }
};

/* ---- "selftest-beside-too": the lane's second group, after the first ---- */
static void selftest_beside_too_sleeps(void) { sleep(1); CHECK(1); }

const struct test_case selftest_beside_too_tests[] = {
	{ "selftest_beside_too_sleeps", selftest_beside_too_sleeps },
	{ 0 }
};

/* ---- the hidden "selftest-stress" group: passes only under stress ---- */
static int busy_children_of(pid_t pid)
{
	char path[96], *list;
	int busy = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	list = test_read_file(path, NULL);
	for (char *tok = list ? strtok(list, " \n") : NULL; tok; tok = strtok(NULL, " \n")) {
		char stat_path[64], *st;
		snprintf(stat_path, sizeof(stat_path), "/proc/%s/stat", tok);
		st = test_read_file(stat_path, NULL);
		const char *state = st ? strrchr(st, ')') : NULL;
		busy += state && state[2] == 'R';
		free(st);
	}
	free(list);
	return busy;
}

static void selftest_runs_under_stress(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(6006),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK_MSG(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "nothing listens on port 6006");
	close(fd);
	int busy = 0;
	for (int i = 0; i < 20 && busy < 2; i++, usleep(50000))
		busy = busy_children_of(getppid());
	CHECK_MSG(busy >= 2, "%d busy loops beside the case, want 2", busy);
}

/* Matches stress_matching's last alternative. */
static void selftest_busy_loops_beside(void)
{
	selftest_runs_under_stress();
}

/* Times nothing: left out of the stress re-run (stress_matching). */
static void selftest_times_nothing(void)
{
}

const struct test_case selftest_stress_tests[] = {
	{ "selftest_runs_under_stress", selftest_runs_under_stress },
	{ "selftest_times_nothing", selftest_times_nothing },
	{ "selftest_busy_loops_beside", selftest_busy_loops_beside },
	{ 0 }
};

const struct test_case selftest_tests[] = {
	{ "selftest_passes", selftest_passes },
	{ "selftest_fails", selftest_fails },
	{ "selftest_skips", selftest_skips },
	{ "selftest_crashes", selftest_crashes },
	{ "selftest_hangs", selftest_hangs },
	{ 0 }
};

/* ---- real runner tests ---- */
static const char *last_line(const char *s)
{
	const char *end = s + strlen(s);
	while (end > s && end[-1] == '\n')
		end--;
	const char *p = end;
	while (p > s && p[-1] != '\n')
		p--;
	static char line[256];
	snprintf(line, sizeof(line), "%.*s", (int)(end - p), p);
	return line;
}

static void test_runner_reports_failures(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "ok selftest_passes\n");
	CHECK_CONTAINS(p.out, "FAIL selftest_fails test_runner.c:");
	CHECK_CONTAINS(p.out, "2 + 2 == 5 (4 != 5)");
	CHECK_CONTAINS(p.out, "skip selftest_skips: no such thing here\n");
	CHECK_CONTAINS(p.out, "FAIL selftest_crashes: killed by signal 6");
	CHECK_CONTAINS(p.out, "FAIL selftest_hangs: timed out after 3 s");
	CHECK_CONTAINS(p.out, "-- group selftest:");
	CHECK_STR(last_line(p.out), "1 passed, 3 failed, 1 skipped");
	test_proc_free(&p);
}

static void test_runner_filter_and_all_pass(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest selftest_passes", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(last_line(p.out), "1 passed, 0 failed");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' --bogus", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "unknown option: '--bogus'");
	test_proc_free(&p);
}

/* hvdtest ARGS: its exit status and stdout/stderr in p. */
static void hvdtest(const char *args, struct test_proc *p)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' %s", test_build_dir(), args);
	CHECK(test_run(cmd, 60, p) == 0);
}

/* -l lists what a selection runs: -g by prefix (trainer-checkpoint and
 * trainer-checkpoint-nfs), -G one group; a selection of no case is an
 * error, listed or run (a script's stale case name must not pass). */
static void test_runner_lists_selection_and_refuses_empty(void)
{
	struct test_proc p;
	hvdtest("-l -g trainer-checkpoint", &p);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "\ntrainer-checkpoint-nfs ");
	test_proc_free(&p);
	hvdtest("-l -G trainer-checkpoint", &p);
	CHECK_INT(p.exit_code, 0);
	CHECK(strstr(p.out, "trainer-checkpoint ") == p.out);
	CHECK_MSG(!strstr(p.out, "trainer-checkpoint-nfs"), "-G selected more than its group: %s", p.out);
	test_proc_free(&p);
	hvdtest("-l -g selftest selftest_passes", &p);
	CHECK_STR(p.out, "selftest selftest_passes\n");
	test_proc_free(&p);
	hvdtest("-l", &p);
	CHECK_MSG(!strstr(p.out, "selftest"), "-l lists a hidden group");
	test_proc_free(&p);
	hvdtest("-G trainer-checkpoin", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "hvdtest: -G 'trainer-checkpoin': no such group");
	test_proc_free(&p);
	hvdtest("-l -g trainer-checkpoint no_such_case", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "hvdtest: the selection matches no case");
	test_proc_free(&p);
	hvdtest("-g selftest no_such_case", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "hvdtest: the selection matches no case");
	CHECK_MSG(!strstr(p.out, "passed"), "an empty selection ran: %s", p.out);
	test_proc_free(&p);
}

static void test_run_captures_and_times_out(void)
{
	struct test_proc p;
	CHECK(test_run("echo out; echo err >&2; exit 3", 10, &p) == 0);
	CHECK_STR(p.out, "out\n");
	CHECK_STR(p.err, "err\n");
	CHECK_INT(p.exit_code, 3);
	CHECK(!p.timed_out);
	test_proc_free(&p);
	CHECK(test_run("sleep 30 & sleep 30; echo never", 1, &p) == 0);
	CHECK(p.timed_out);
	CHECK(p.seconds < 5);
	CHECK_STR(p.out, "");
	test_proc_free(&p);
}

static int process_gone(pid_t pid)
{
	char path[64], *stat;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = test_read_file(path, NULL);
	const char *state = stat ? strrchr(stat, ')') : NULL;
	int gone = !state || strncmp(state, ") Z", 3) == 0;   /* a zombie is gone */
	free(stat);
	return gone;
}

/* A case that leaves a daemon holding the runner's descriptors, then a
 * group that hangs: the group fails at its deadline, naming the case and
 * showing its log's last lines, the daemon dies with it, the next group
 * runs, and the runner ends. */
static void test_runner_ends_a_hung_group(void)
{
	char cmd[4096], *pidfile = test_path(test_tmpdir(), "daemon.pid");
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "HVD_SELFTEST_PIDFILE='%s' '%s/hvdtest' -g selftest-hang -g selftest-next",
		 pidfile, test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK(!p.timed_out);
	CHECK_MSG(p.seconds < 20, "the runner took %.1f s for a 3 s group deadline", p.seconds);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "ok selftest_daemon_holds_pipes\n");
	CHECK_CONTAINS(p.out, "FAIL group selftest-hang: passed its deadline of 3 s in selftest_group_hangs");
	CHECK_CONTAINS(p.out, "last lines of its log:\nabout to hang\n");
	CHECK_CONTAINS(p.out, "ok selftest_next_group_runs\n");
	CHECK_STR(last_line(p.out), "2 passed, 1 failed");
	char *text = test_read_file(pidfile, NULL);
	pid_t daemon = text ? atoi(text) : 0;
	CHECK_MSG(daemon > 0, "the daemon wrote no pid to '%s'", pidfile);
	for (int i = 0; daemon > 0 && i < 50 && !process_gone(daemon); i++)
		usleep(20000);
	CHECK_MSG(daemon <= 0 || process_gone(daemon), "the daemon %d outlived its group", (int)daemon);
	if (daemon > 0)
		kill(daemon, SIGKILL);
	free(text);
	free(pidfile);
	test_proc_free(&p);
}

/* Whether fd is open in process pid without close-on-exec. */
static int inheritable_fd(pid_t pid, int fd)
{
	char path[64], *info;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	info = test_read_file(path, NULL);
	const char *flags = info ? strstr(info, "flags:") : NULL;
	int yes = flags && !(strtol(flags + 6, NULL, 8) & 02000000);
	free(info);
	return yes;
}

/* What a case starts inherits no descriptor the runner made (only what
 * the runner itself inherited), and the cluster scripts' daemons
 * (tests/slurm/detach.sh) nothing but 0-2: a daemon holding a runner's
 * pipe kept `make check` waiting for good. */
static void test_children_inherit_no_runner_descriptor(void)
{
	struct test_proc p;
	CHECK(test_run("ls /proc/$$/fd", 10, &p) == 0);
	for (char *line = p.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		int fd = atoi(line);
		CHECK_MSG(fd <= 2 || inheritable_fd(getppid(), fd),
			  "a command run by a case has fd %d, which the runner did not inherit", fd);
	}
	test_proc_free(&p);
	char cmd[4096], *log = test_path(test_tmpdir(), "daemon.out");
	char *script = test_path(test_tmpdir(), "start.sh");
	snprintf(cmd, sizeof(cmd), "exec 7>/dev/null; . '%s/tests/slurm/detach.sh' && "
		 "detached '%s' sh -c 'ls /proc/$$/fd; readlink /proc/$$/fd/0' | cat\n", test_src_dir(), log);
	CHECK(test_write_file(script, cmd, strlen(cmd)) == 0);
	snprintf(cmd, sizeof(cmd), "bash '%s'", script);
	free(script);
	CHECK(test_run(cmd, 10, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "");
	char *got = test_read_file(log, NULL);
	CHECK_STR(got, "0\n1\n2\n/dev/null\n");   /* no pipeline: sh holds no pipe */
	free(got);
	free(log);
	test_proc_free(&p);
}

/* A group marked stress runs again as NAME@stress beside two busy loops
 * and a listener on port 6006; a plain run of it has neither, and
 * nothing of the stress outlives the runner. */
static void test_runner_reruns_under_stress(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -u HVD_SUITE_BESIDE '%s/hvdtest' -g selftest-stress@stress",
		 test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "hvdtest: stress: two busy loops (pids ");   /* alone: not SCHED_IDLE */
	CHECK_CONTAINS(p.out, "ok selftest_runs_under_stress\nok selftest_busy_loops_beside\n"
		       "-- group selftest-stress@stress:");
	CHECK_STR(last_line(p.out), "2 passed, 0 failed");   /* not selftest_times_nothing */
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -l -g selftest-stress@stress", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_STR(p.out, "selftest-stress@stress selftest_runs_under_stress\n"
		  "selftest-stress@stress selftest_busy_loops_beside\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest-stress", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 1);
	CHECK(strstr(p.out, "@stress") == NULL);
	CHECK_STR(last_line(p.out), "1 passed, 2 failed");
	test_proc_free(&p);
	CHECK_INT(busy_children_of(getpid()), 0);
}

/* A lane re-runs its own groups marked stress at its end, beside busy
 * loops of its own, and the run after the suite does not run them again:
 * the lane's loops end with it. */
static void test_runner_lane_reruns_its_stressed_groups(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest-lane-stress -g selftest-lane-stress@stress "
		 "-G selftest-next", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "-- group selftest-lane-stress@stress: started beside the groups after "
		       "it, after selftest-lane-stress\n");
	const char *plain = strstr(p.out, "ok selftest_times_nothing\n-- group selftest-lane-stress: ");
	const char *loops = plain ? strstr(plain, "hvdtest: stress: two busy loops at SCHED_IDLE "
					   "beside the groups that run now (pids ") : NULL;
	CHECK_MSG(loops && strstr(loops, "ok selftest_runs_under_stress\nok selftest_busy_loops_beside\n"
				  "-- group selftest-lane-stress@stress: "), "%s", p.out);
	CHECK(loops && !strstr(loops + 1, "hvdtest: stress: two busy loops"));
	CHECK_CONTAINS(p.out, "-- group selftest-lane-stress@stress collected: ");
	CHECK_STR(last_line(p.out), "4 passed, 0 failed");
	test_proc_free(&p);
	/* a run nested in a case beside other groups: their loads are the load */
	snprintf(cmd, sizeof(cmd), "HVD_SUITE_BESIDE=1 '%s/hvdtest' -g selftest-stress@stress",
		 test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "hvdtest: stress: two busy loops at SCHED_IDLE beside the groups");
	test_proc_free(&p);
	CHECK_INT(busy_children_of(getpid()), 0);
}

static void test_tmpdir_is_fresh(void)
{
	char *f = test_path(test_tmpdir(), "x");
	CHECK(access(f, F_OK) != 0);
	CHECK(test_write_file(f, "abc", 3) == 0);
	size_t n = 0;
	char *back = test_read_file(f, &n);
	CHECK_INT(n, 3);
	CHECK_STR(back, "abc");
	free(back);
	free(f);
}

/* One shared folder per run: it exists, the commands a case starts see it
 * in HVD_TEST_SHARED (nested hvdtests take it from there), and an
 * outermost run removes its own with its root. */
static void test_shared_dir_reaches_what_the_run_starts(void)
{
	char cmd[4096];
	struct test_proc p;
	struct stat st;
	const char *d = test_shared_dir();
	CHECK(d && stat(d, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_STR(getenv("HVD_TEST_SHARED"), d);
	CHECK(test_run("printf %s \"$HVD_TEST_SHARED\"", 10, &p) == 0);
	CHECK_STR(p.out, d);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u HVD_TEST_SHARED TMPDIR='%s' '%s/hvdtest' "
		 "-G runner tmpdir_is_fresh > /dev/null && ls -A", test_tmpdir(), test_tmpdir(),
		 test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "");
	test_proc_free(&p);
}

/* Where the time goes: each group's line says where the run stands, the
 * last lines before the tally name the slowest groups, and on a terminal
 * a live line is redrawn after every case (and erased before output). */
static void test_runner_says_where_the_time_goes(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -g selftest-next -g selftest", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_CONTAINS(p.out, "-- group selftest: ");
	CHECK_CONTAINS(p.out, " s (group 1/2, 0:0");
	CHECK_CONTAINS(p.out, " s (group 2/2, 0:0");
	CHECK_CONTAINS(p.out, "-- the 2 slowest groups:\n--       3.");   /* selftest: 3 s hang */
	CHECK(!strstr(p.out, "\033[K"));   /* not a terminal: plain lines */
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "script -qec \"'%s/hvdtest' -g selftest\" /dev/null",
		 test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_CONTAINS(p.out, "\r\033[K[group 1/1, 0:0");
	CHECK_CONTAINS(p.out, " left: selftest]\r\033[Kok selftest_passes");
	test_proc_free(&p);
}

/* A group marked beside runs in a child runner while the next groups
 * run; its output comes in one piece when it is collected, its cases
 * count in the tally, and the run takes the longer of the two, not the sum. */
static void test_runner_runs_a_group_beside(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -G selftest-beside -G selftest-next",
		 test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 1);
	const char *started = strstr(p.out, "-- group selftest-beside: started beside");
	/* a case's seconds on its ok line from 2 s on, none below */
	const char *other = strstr(p.out, "ok selftest_next_group_runs\n");
	const char *slept = strstr(p.out, "ok selftest_beside_sleeps (2.");
	const char *collected = strstr(p.out, "-- group selftest-beside collected: ");
	CHECK_MSG(started && other && slept && collected && started < other && other < slept &&
		  slept < collected, "order: %s", p.out);
	CHECK_CONTAINS(p.out, "FAIL selftest_beside_fails test_runner.c:");
	CHECK_CONTAINS(p.out, "(beside the groups after it)");
	CHECK_CONTAINS(p.out, "selftest-beside (beside the others)\n");
	CHECK_STR(last_line(p.out), "2 passed, 1 failed");
	test_proc_free(&p);
}

/* A group marked BESIDE_IN_QUICK goes to the lane under -q (make
 * check-quick) and runs in line in a whole run. */
static void test_runner_quick_lane_only_under_q(void)
{
	char cmd[4096];
	struct test_proc p;
	for (int q = 1; q >= 0; q--) {
		snprintf(cmd, sizeof(cmd), "'%s/hvdtest' %s -G selftest-quick-beside -G selftest-next",
			 test_build_dir(), q ? "-q" : "");
		CHECK(test_run(cmd, 60, &p) == 0);
		CHECK_INT(p.exit_code, 0);
		const char *lane = strstr(p.out, "-- group selftest-quick-beside: started beside");
		CHECK_MSG(q ? lane != NULL : lane == NULL, "%s: %s", cmd, p.out);
		const char *line = strstr(p.out, "-- group selftest-quick-beside: ");
		const char *end = line ? strchr(line, '\n') : NULL;
		const char *place = line ? strstr(line, " s (group 1/2, ") : NULL;
		CHECK_MSG(q || (place && end && place < end), "in line: %s", p.out);
		CHECK_STR(last_line(p.out), "2 passed, 0 failed");
		test_proc_free(&p);
	}
}

/* Two groups marked beside run one after the other in one lane beside
 * the groups after the first (the line's group ends before the lane's
 * output comes), their output in order, each collected with its own
 * seconds, the tallies summed. */
static void test_runner_runs_two_groups_in_one_lane(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -G selftest-beside -G selftest-beside-too "
		 "-G selftest-next", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 1);
	const char *first = strstr(p.out, "ok selftest_beside_sleeps (2.");
	const char *second = strstr(p.out, "ok selftest_beside_too_sleeps\n");
	const char *other = strstr(p.out, "-- group selftest-next: ");
	CHECK_MSG(first && second && other && other < first && first < second, "order: %s", p.out);
	CHECK_CONTAINS(p.out, "-- group selftest-beside-too: started beside the groups after it, "
		       "after selftest-beside\n");
	CHECK_CONTAINS(p.out, "-- group selftest-beside collected: it took ");
	CHECK_CONTAINS(p.out, "-- group selftest-beside-too collected: it took 1.");
	CHECK_STR(last_line(p.out), "3 passed, 1 failed");
	test_proc_free(&p);
}

/* -q (make check-quick): the unit groups not marked slow, no cluster
 * group, no stress re-run; with -g it narrows that selection. */
static void test_quick_keeps_the_fast_unit_groups(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -q -l", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "\ntrainer-record resume_refuses_changes_of_meaning\n");
	CHECK_CONTAINS(p.out, "\nrunner tmpdir_is_fresh\n");
	CHECK(!strstr(p.out, "\ngpu-emulated "));    /* slow */
	CHECK(!strstr(p.out, "\npackages "));        /* slow */
	CHECK(!strstr(p.out, "\nslurm-"));           /* a cluster */
	CHECK(!strstr(p.out, "@stress "));
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/hvdtest' -q -l -g gpu-emulated", test_build_dir());
	CHECK(test_run(cmd, 60, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "the selection matches no case");
	test_proc_free(&p);
}

/* The estimate of what is left starts from the last whole run's times
 * (BUILD/check-times), a group it does not know at the mean so far; a
 * whole run writes the file, a selection does not. */
static void test_run_times_estimate_from_the_last_run(void)
{
	static const char *const names[] = { "a", "b", "c" };
	char where[200], *file = test_path(test_tmpdir(), "check-times");
	CHECK(test_put("check-times", "100.0 a\n50.0 b\nnot a line\n7 gone\n") == 0);
	run_times_begin(test_tmpdir(), names, 3);
	run_times_group_done("a", 10.0, where, sizeof(where));
	CHECK_CONTAINS(where, "(group 1/3, 0:00 elapsed, about 1:00 left)");   /* 50 + 10 (c: mean) */
	run_times_group_done("b", 20.0, where, sizeof(where));
	CHECK_CONTAINS(where, "(group 2/3, 0:00 elapsed, about 0:15 left)");   /* c: mean of 10, 20 */
	run_times_finish(0);
	char *text = test_read_file(file, NULL);
	CHECK_STR(text, "100.0 a\n50.0 b\nnot a line\n7 gone\n");   /* a selection: kept */
	free(text);
	run_times_group_done("c", 5.0, where, sizeof(where));
	run_times_finish(1);
	text = test_read_file(file, NULL);
	CHECK_STR(text, "10.0 a\n20.0 b\n5.0 c\n");
	free(text);
	free(file);
}

const struct test_case runner_tests[] = {
	{ "runner_says_where_the_time_goes", test_runner_says_where_the_time_goes },
	{ "run_times_estimate_from_the_last_run", test_run_times_estimate_from_the_last_run },
	{ "quick_keeps_the_fast_unit_groups", test_quick_keeps_the_fast_unit_groups },
	{ "runner_runs_a_group_beside", test_runner_runs_a_group_beside },
	{ "runner_runs_two_groups_in_one_lane", test_runner_runs_two_groups_in_one_lane },
	{ "runner_quick_lane_only_under_q", test_runner_quick_lane_only_under_q },
	{ "runner_reports_failures", test_runner_reports_failures },
	{ "runner_filter_and_all_pass", test_runner_filter_and_all_pass },
	{ "runner_lists_selection_and_refuses_empty", test_runner_lists_selection_and_refuses_empty },
	{ "run_captures_and_times_out", test_run_captures_and_times_out },
	{ "runner_ends_a_hung_group", test_runner_ends_a_hung_group },
	{ "children_inherit_no_runner_descriptor", test_children_inherit_no_runner_descriptor },
	{ "runner_reruns_under_stress", test_runner_reruns_under_stress },
	{ "runner_lane_reruns_its_stressed_groups", test_runner_lane_reruns_its_stressed_groups },
	{ "tmpdir_is_fresh", test_tmpdir_is_fresh },
	{ "shared_dir_reaches_what_the_run_starts", test_shared_dir_reaches_what_the_run_starts },
	{ 0 }
};
