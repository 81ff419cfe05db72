/* test_hwloc_gl.c - groups hwloc-gl and slurm-hwloc-gl: nothing of hvd
 * waits on hwloc's GL probe. With libhwloc-plugins installed, hwloc's
 * discovery opens X displays :0-:9 and, with no X socket, waits forever
 * on anything listening on ports 6000-6009 (TensorBoard's 6006). Each case
 * listens on a free one of those ports (loopback, never answering), first
 * shows that plain discovery (lstopo) hangs there, then that the plugin's
 * topology load, hvd-check and one-rank MPI jobs (alone, and under srun)
 * end.
 * What it does not do: test loads from XML (they never probe GL).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "topology.h"

#define ENDS_WITHIN_S 2

/* Where Debian (and hwloc's own install) keep its plugins: the GL one is
 * what can hang. */
static int hwloc_gl_installed(void)
{
	struct test_proc p;
	CHECK(test_run("ls /usr/lib/*/hwloc/hwloc_gl.so /usr/lib/hwloc/hwloc_gl.so "
		       "/usr/local/lib/hwloc/hwloc_gl.so 2>/dev/null | grep -q .", 10, &p) == 0);
	int yes = p.exit_code == 0;
	test_proc_free(&p);
	return yes;
}

/* A loopback listener on the first free port 6000-6009 that accepts
 * nothing and answers nothing; its fd, or -1. */
static int listen_on_an_x_port(int *port)
{
	for (*port = 6000; *port < 6010; (*port)++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)*port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 64) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* The hazard, shown: a listener up and plain hwloc discovery hanging on
 * it. Returns the listener's fd; skips the case where there is no hazard
 * to show (no GL component, no lstopo, an X server). */
static int hostile_x_port(int *port)
{
	struct test_proc p;
	if (!hwloc_gl_installed())
		test_skip("hwloc has no GL component here (libhwloc-plugins' hwloc_gl.so): nothing can hang");
	if (system("command -v lstopo-no-graphics >/dev/null") != 0)
		test_skip("lstopo-no-graphics not installed (package hwloc): cannot show the hang");
	int fd = listen_on_an_x_port(port);
	CHECK_MSG(fd >= 0, "no free port in 6000-6009");
	if (fd < 0)
		return -1;
	CHECK(test_run("env -u HWLOC_COMPONENTS -u HWLOC_XMLFILE lstopo-no-graphics --of console",
		       ENDS_WITHIN_S, &p) == 0);
	int hung = p.timed_out;
	test_proc_free(&p);
	if (!hung) {
		close(fd);
		test_skip("lstopo ends beside a listener on port %d (an X server here?): no hang to show",
			  *port);
	}
	return fd;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_plugin_topology_load_ends_beside_a_gl_listener(void)
{
	int port, fd = hostile_x_port(&port);
	unsetenv("HWLOC_COMPONENTS");
	pid_t pid = fork();
	if (pid == 0) {
		struct placement_topo topo;
		char err[512];
		int rc = topology_load(NULL, &topo, err, sizeof(err));
		_exit(rc == 0 && topo.socket_count > 0 ? 0 : 1);
	}
	int st = 0, ended = 0;
	for (double t0 = now_s(); !ended && now_s() - t0 < ENDS_WITHIN_S; usleep(10000))
		ended = waitpid(pid, &st, WNOHANG) == pid;
	if (!ended) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	CHECK_MSG(ended, "the plugin's topology load still runs after %d s beside a listener on "
		  "port %d", ENDS_WITHIN_S, port);
	CHECK(ended && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
}

#ifdef HVD_HAVE_CHECK
static void test_hvd_check_ends_and_names_a_gl_listener(void)
{
	int port, fd = hostile_x_port(&port);
	char cmd[4200], want[300];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "env -i PATH=\"$PATH\" '%s/hvd-check'", test_build_dir());
	CHECK(test_run(cmd, ENDS_WITHIN_S, &p) == 0);
	CHECK_MSG(!p.timed_out, "hvd-check still runs after %d s beside a listener on port %d",
		  ENDS_WITHIN_S, port);
	snprintf(want, sizeof(want), "hvd-check: hwloc GL: '%s:%d': a TCP listener on X display :%d's port",
		 test_hostname(), port, port - 6000);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	close(fd);
}
#endif

#ifdef HVD_HAVE_RUNTIME
/* A one-rank MPI job without Slurm: MPI_Init starts Open MPI's singleton
 * daemon, which discovers the topology; libhvd keeps GL out of it. */
static void test_singleton_mpi_job_ends_beside_a_gl_listener(void)
{
	int port, fd = hostile_x_port(&port);
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u HWLOC_COMPONENTS -u SLURM_JOB_ID -u SLURM_STEP_ID "
		 "HVD_BACKEND=mpi '%s/hvd-rt-test' init", test_tmpdir(), test_build_dir());
	CHECK(test_run(cmd, ENDS_WITHIN_S, &p) == 0);
	CHECK_MSG(!p.timed_out, "a one-rank MPI job still runs after %d s beside a listener on port %d",
		  ENDS_WITHIN_S, port);
	CHECK_CONTAINS(p.out, "rank 0/1 local 0/1 backend mpi");
	test_proc_free(&p);
	close(fd);
}
#endif

const struct test_case hwloc_gl_tests[] = {
	{ "plugin_topology_load_ends_beside_a_gl_listener",
	  test_plugin_topology_load_ends_beside_a_gl_listener },
#ifdef HVD_HAVE_CHECK
	{ "hvd_check_ends_and_names_a_gl_listener", test_hvd_check_ends_and_names_a_gl_listener },
#endif
#ifdef HVD_HAVE_RUNTIME
	{ "singleton_mpi_job_ends_beside_a_gl_listener",
	  test_singleton_mpi_job_ends_beside_a_gl_listener },
#endif
	{ 0 }
};

#ifdef HVD_HAVE_RUNTIME
/* The test cluster's slurmd runs with HWLOC_COMPONENTS=-gl
 * (tests/slurm/detach.sh, as spank/USAGE.md tells admins): Slurm's PMIx
 * server in slurmstepd discovers the topology, and a one-rank MPI job
 * under srun ends. srun's own start is in the limit too, so the limit is
 * 30 s, not 2; without the setting the step never starts. */
static void test_mpi_job_under_srun_ends_beside_a_gl_listener(void)
{
	int port, fd = hostile_x_port(&port);
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u HWLOC_COMPONENTS HVD_BACKEND=mpi "
		 "srun -n 1 '%s/hvd-rt-test' init", test_tmpdir(), test_build_dir());
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_MSG(!p.timed_out, "a one-rank MPI job still runs after 30 s beside a listener on port %d",
		  port);
	CHECK_MSG(p.exit_code == 0, "exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.out, "rank 0/1 local 0/1 backend mpi");
	printf("  one-rank MPI job beside a listener on port %d: %.1f s\n", port, p.seconds);
	test_proc_free(&p);
	close(fd);
}
#endif

const struct test_case hwloc_gl_slurm_tests[] = {
#ifdef HVD_HAVE_RUNTIME
	{ "mpi_job_under_srun_ends_beside_a_gl_listener",
	  test_mpi_job_under_srun_ends_beside_a_gl_listener },
#endif
	{ 0 }
};
