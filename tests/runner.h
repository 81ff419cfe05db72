/* runner.h - the project's test runner: cases, checks, fixtures, helpers.
 *
 * Each test file defines `const struct test_case NAME_tests[]` (ended by
 * {0}) and is listed once, as a group, in tests/groups.h. Every case runs in
 * a forked child with a deadline, so a crash or a hang fails that case only.
 * CHECK* record file:line and continue; SKIP("reason") ends the case as
 * skipped. What this does not do: build anything, or start Slurm itself
 * (tests/slurm/cluster.sh does; the runner only calls it).
 */
#ifndef HVD_TESTS_RUNNER_H
#define HVD_TESTS_RUNNER_H

#include <stddef.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

enum test_needs {
	TEST_NEEDS_NOTHING = 0,  /* unit tests: no Slurm, no root */
	TEST_NEEDS_CLUSTER,      /* the one-node tests/slurm cluster */
	TEST_NEEDS_MULTINODE,    /* the multi-node (netns) cluster */
	TEST_NEEDS_CLUSTER_CGROUP, /* the one-node cluster with HVD_CLUSTER_CGROUP=1 */
	TEST_NEEDS_CLUSTER_AFFINITY, /* the one-node cluster with task/affinity alone (=2) */
};

struct test_group {
	const char *name;
	const struct test_case *cases;
	enum test_needs needs;
	int timeout_s;           /* per case; 0 = default (120 s) */
	int hidden;              /* run only when named with -g */
	/* A variant of another group's cases: env "NAME=VALUE" is put in each
	 * case's environment before it runs (programs it starts inherit it),
	 * only the cases whose name contains `matching` run (NULL: all), and
	 * when redundant(env) returns a reason the whole group is one skip
	 * (e.g. a cap that lowers nothing on this machine). */
	const char *env;
	const char *matching;
	const char *(*redundant)(const char *env);
	/* The whole group's limit, counted from its first case (0: the sum of
	 * its selected cases' timeouts). Past it the group fails as one: its
	 * running case, its cluster's daemons and every process under the
	 * run's temp root are killed, and the runner goes on. */
	int deadline_s;
	/* Run once more as NAME@stress, beside two busy loops and a
	 * listener on port 6006: after the suite, or at the end of the lane
	 * the group runs in (.beside; the lane's own loops while the groups
	 * in line go on: the same checks on a busier machine). The whole
	 * suite runs so with
	 * HVD_STRESS=1 (`make check STRESS=1`). stress_matching: that re-run
	 * runs only the cases whose name contains it, or one of its
	 * '|'-separated alternatives (NULL: all; a case that times nothing
	 * gains nothing from it). A whole run leaves those cases to the
	 * re-run (the same checks under load); -g NAME runs them plain. */
	int stress;
	const char *stress_matching;
	/* Left out of `make check-quick` (hvdtest -q): over half a minute
	 * here, or processes that time one another. */
	int slow;
	/* Run in a child runner beside the groups in line, with the other
	 * groups so marked that follow it and need the same cluster (or
	 * none), one after another (a lane): its output comes in one piece
	 * when the lane ends. Two lanes at most run at once: the unit lane
	 * (groups that need no cluster) runs on beside the cluster groups
	 * and is collected at the end, before the stress re-runs; a
	 * cluster's lane is collected before a group in line that needs its
	 * cluster, or at the end, and its cluster goes down with it. For
	 * long groups that tolerate a busy machine: the unit lane, or the
	 * multi-node cluster's groups beside the one-node cluster's.
	 * BESIDE_IN_QUICK: in that lane only under -q (make check-quick,
	 * whose lane has no .slow group), in line in a whole run. */
	int beside;
};

#define BESIDE_IN_QUICK 2

/* Checks: record file:line, print `FAIL name file:line: expr`, continue. */
void test_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int test_near(double a, double b, double atol, double rtol);

#define CHECK(expr) do { if (!(expr)) \
	test_fail_at(__FILE__, __LINE__, "%s", #expr); } while (0)
#define CHECK_MSG(expr, ...) do { if (!(expr)) \
	test_fail_at(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) test_fail_at(__FILE__, __LINE__, "%s == %s (%lld != %lld)", \
	#a, #b, a_, b_); } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) test_fail_at(__FILE__, __LINE__, \
	"%s == %s ('%s' != '%s')", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)
#define CHECK_CONTAINS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); \
	if (!h_ || !strstr(h_, n_)) test_fail_at(__FILE__, __LINE__, \
	"%s contains '%s' (got '%.400s')", #hay, n_, h_ ? h_ : "(null)"); } while (0)
#define CHECK_NEAR(a, b, atol, rtol) do { double a_ = (a), b_ = (b); \
	if (!test_near(a_, b_, (atol), (rtol))) test_fail_at(__FILE__, __LINE__, \
	"%s ~= %s (%.9g vs %.9g)", #a, #b, a_, b_); } while (0)
#define SKIP(...) do { test_skip(__VA_ARGS__); return; } while (0)

/* Compare arrays with |a - ref| <= atol + rtol*|ref|; prints the first 5
 * mismatches and records one failure. Returns the mismatch count. */
size_t test_check_arrays_at(const char *file, int line, const char *what,
			    const float *a, const float *ref, size_t count,
			    double atol, double rtol);
#define CHECK_ARRAYS(what, a, ref, n, atol, rtol) \
	test_check_arrays_at(__FILE__, __LINE__, what, a, ref, n, atol, rtol)

/* Fixtures and places. */
const char *test_tmpdir(void);      /* fresh, empty dir for this case */
const char *test_src_dir(void);     /* repository root */
const char *test_build_dir(void);   /* where make put programs and libs */
/* A folder shared by every hvdtest of this run, the ones it starts too
 * ($HVD_TEST_SHARED): results computed once per run, such as ref's
 * oracle steps (test_cpu_models.c). Removed with the run. */
const char *test_shared_dir(void);
const char *test_data_dir(void);    /* $HVD_TEST_DATA (real NIH data), else NULL */
const char *test_cluster_dir(void); /* running cluster's dir, else NULL */
const char *test_hostname(void);    /* `hostname -s` */

/* Run `/bin/sh -c cmd` with a deadline (the whole process group is killed
 * at the deadline). stdout and stderr are captured separately. */
struct test_proc {
	int exit_code;      /* exit status, or 128+signal, or -1 */
	int timed_out;
	double seconds;
	char *out;          /* NUL-terminated, never NULL after test_run */
	char *err;
};
int test_run(const char *cmd, int timeout_s, struct test_proc *p);
/* test_run of n commands at once, each in its own thread, returning when
 * all have ended: for cases whose runs wait more than they compute. Not
 * for CHECKs: the threads only run; the case judges ps[] after. */
int test_run_together(const char *const *cmds, int n, int timeout_s, struct test_proc *ps);
void test_proc_free(struct test_proc *p);

/* The last n bytes of s (all of s when shorter): failure messages show
 * the end of a long stderr, where the verdict is. */
const char *test_tail(const char *s, size_t n);
/* stdout of a command that must succeed within timeout_s, its trailing
 * newlines cut (malloc'd); a failure to run it or a non-zero exit is
 * recorded with the end of its stderr. */
char *test_output_of(const char *cmd, int timeout_s);

/* Small file helpers for fixtures. */
char *test_read_file(const char *path, size_t *len);
int test_write_file(const char *path, const void *data, size_t len);
char *test_path(const char *dir, const char *name); /* malloc'd dir/name */
/* Write text to test_tmpdir()/rel, making the folders on the way. */
int test_put(const char *rel, const char *text);
/* 1 when two files (paths relative to the case's directory or absolute)
 * hold the same bytes; else records a failure naming both and returns 0. */
int test_same_file(const char *a, const char *b);

/* Rewrite the cluster's plugstack.conf line for the hvd plugin (srun and
 * slurmstepd reread it per job). args may be "" for site defaults. */
int test_cluster_plugstack(const char *args);

#endif
