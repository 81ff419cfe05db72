/* env_launch.c - helpers of the launch-without-a-scheduler tests
 * (test_env_launch.c, test_env_contrib.c): a free loopback port, a secret
 * file, processes started by tests/env_launch.sh with an Indexed Job's
 * environment and their statuses and outputs, training data and runs.
 * What it does not do: check behaviour (the test files do).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env_launch.h"
#include "runner.h"

/* A loopback port free now (the kernel's next ephemeral one). */
int env_launch_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* tmpdir/NAME: 64 random bytes, mode 0600 (as a mounted Secret). */
int env_launch_secret(const char *name)
{
	char *path = test_path(test_tmpdir(), name), buf[64];
	FILE *r = fopen("/dev/urandom", "rb");
	int ok = r && fread(buf, 1, sizeof(buf), r) == sizeof(buf) &&
		 !test_write_file(path, buf, sizeof(buf)) && !chmod(path, 0600);
	if (r)
		fclose(r);
	free(path);
	CHECK_MSG(ok, "cannot write the secret file %s", name);
	return ok ? 0 : -1;
}

/* `cd tmpdir && ENV env_launch.sh SIZE COORD CMD`; coord NULL = 127.0.0.1:free. */
int env_launch_run(const char *env, int size, const char *coord, const char *cmd, int timeout_s,
		  struct test_proc *p)
{
	char where[300], *line = NULL;
	if (!coord) {
		snprintf(where, sizeof(where), "127.0.0.1:%d", env_launch_port());
		coord = where;
	}
	if (env_launch_secret("secret") ||
	    asprintf(&line, "cd '%s' && %s '%s/tests/env_launch.sh' %d %s %s", test_tmpdir(), env,
		     test_src_dir(), size, coord, cmd) < 0)
		return -1;
	int rc = test_run(line, timeout_s, p);
	if (rc)
		test_fail_at(__FILE__, __LINE__, "could not run: %s", line);
	free(line);
	return rc;
}

/* Exit status and ms of process k from the `rcK=S ms=M` lines; -1 if absent. */
int env_launch_status(const struct test_proc *p, int k, long *ms)
{
	char key[16];
	snprintf(key, sizeof(key), "rc%d=", k);
	const char *at = strstr(p->out, key);
	if (!at)
		return -1;
	int st = atoi(at + strlen(key));
	const char *m = strstr(at, "ms=");
	if (ms)
		*ms = m ? atol(m + 3) : -1;
	return st;
}

/* tmpdir/err.K or out.K, malloc'd ("" when missing). */
char *env_launch_output(const char *stream, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "%s.%d", stream, k);
	char *path = test_path(test_tmpdir(), name), *text = test_read_file(path, NULL);
	free(path);
	return text ? text : strdup("");
}

char *env_launch_rt_test(const char *args)
{
	char *cmd = NULL;
	if (asprintf(&cmd, "'%s/hvd-rt-test' %s", test_build_dir(), args) < 0)
		return NULL;
	return cmd;
}

/* tmpdir/chexnet, synthetic NIH images and their pack in tmpdir/shards. */
int env_launch_data(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && cp '%s/chexnet' chexnet && ./chexnet synth --out nih "
		 "--count 200 --size 128 --seed 3 && ./chexnet pack --data nih --out shards --size 72",
		 test_tmpdir(), test_build_dir());
	if (test_run(cmd, 120, &p))
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "synth + pack: exit %d: %.600s", rc, p.err);
	test_proc_free(&p);
	return rc ? -1 : 0;
}

void env_launch_train_alone(const char *args)
{
	char cmd[1024];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && ./chexnet train " ENV_LAUNCH_TRAIN " %s", test_tmpdir(), args);
	if (test_run(cmd, 240, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "chexnet train %s: exit %d: %.600s", args, p.exit_code, p.err);
	test_proc_free(&p);
}

void env_launch_train_pods(int n, const char *args)
{
	char cmd[1024];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "./chexnet train " ENV_LAUNCH_TRAIN " %s", args);
	if (env_launch_run("", n, NULL, cmd, 240, &p))
		return;
	for (int k = 0; k < n; k++) {
		char *err = env_launch_output("err", k);
		CHECK_MSG(env_launch_status(&p, k, NULL) == 0, "pod %d of %d: %.600s", k, n, err);
		free(err);
	}
	test_proc_free(&p);
}

