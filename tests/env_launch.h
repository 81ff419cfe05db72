/* env_launch.h - helpers of the launch-without-a-scheduler tests
 * (env_launch.c). What it does not do: anything without the test runner.
 */
#ifndef HVD_TESTS_ENV_LAUNCH_H
#define HVD_TESTS_ENV_LAUNCH_H

#include "runner.h"

/* Training arguments shared by the equivalence cases (as slurm-e2e's). */
#define ENV_LAUNCH_TRAIN "--data shards --size 64 --threads 1 --optimizer sgd --lr 0.001 " \
	"--steps 5 --quiet"

/* A loopback port free now (the kernel's next ephemeral one), or -1. */
int env_launch_port(void);
/* tmpdir/NAME: 64 random bytes, mode 0600 (as a mounted Secret). */
int env_launch_secret(const char *name);
/* `cd tmpdir && ENV tests/env_launch.sh SIZE COORD CMD` (a fresh secret
 * file `secret`); coord NULL = 127.0.0.1:free port. 0 when it ran. */
int env_launch_run(const char *env, int size, const char *coord, const char *cmd, int timeout_s,
		   struct test_proc *p);
/* Exit status (and *ms) of process k from env_launch.sh's lines, or -1. */
int env_launch_status(const struct test_proc *p, int k, long *ms);
/* tmpdir/STREAM.K ("out"/"err"), malloc'd, "" when missing. */
char *env_launch_output(const char *stream, int k);
/* "'build/hvd-rt-test' ARGS", malloc'd. */
char *env_launch_rt_test(const char *args);
/* tmpdir/chexnet and packed synthetic data in tmpdir/shards. */
int env_launch_data(void);
/* One rank, no launcher / n pods: `chexnet train ENV_LAUNCH_TRAIN ARGS` in tmpdir. */
void env_launch_train_alone(const char *args);
void env_launch_train_pods(int n, const char *args);

#endif
