/* test_survivors.c - what a runtime failure line says was lost
 * (train/peer_lost.h), on the lines the runtime prints (runtime/README.md's
 * table, copied from real runs), and the survivors' agreement on who writes
 * OUT/last (loop/survivors.h) among processes that race on one folder,
 * and the world they form to go on in-process (train/rejoin.h).
 * What it does not do: lose a node (test_multinode_elastic.c does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "loop/survivors.h"
#include "train/peer_lost.h"
#include "train/rejoin.h"

static void test_lost_peers_are_read_from_the_runtimes_lines(void)
{
	struct peer_lost l;
	CHECK_INT(peer_lost_parse("hvd: ranks 2,3 (host n2): 'silent for 4.1 s': no heartbeat within "
				  "HVD_TIMEOUT_S (stopped, hung, or its network is cut) [rank 0/4 n1]", &l), 1);
	CHECK_INT(l.count, 2);
	CHECK_INT(l.ranks[0], 2);
	CHECK_INT(l.ranks[1], 3);
	CHECK_STR(l.hosts, "n2");
	CHECK_STR(l.who, "ranks 2,3 (host n2)");
	CHECK_INT(peer_lost_parse("hvd: rank 3 (host n2), ranks 4,5 (host gpu-07.cluster): 'silent "
				  "for 5.1 s': no heartbeat while the other ranks waited", &l), 1);
	CHECK_INT(l.count, 3);
	CHECK_STR(l.hosts, "n2,gpu-07.cluster");
	CHECK_INT(peer_lost_has_host(&l, "gpu-07.cluster", 14), 1);
	CHECK_INT(peer_lost_has_host(&l, "n2", 2), 1);
	CHECK_INT(peer_lost_has_host(&l, "n", 1), 0);
	CHECK_INT(peer_lost_has_host(&l, "gpu-07", 6), 0);
	CHECK_INT(peer_lost_parse("hvd: rank 0 (host n1): 'control connection closed': the process "
				  "died or left without hvd_shutdown [rank 2/4 n2]", &l), 1);
	CHECK_INT(l.ranks[0], 0);
	CHECK_STR(l.hosts, "n1");
	CHECK_INT(peer_lost_parse("hvd: control plane: 'rank 0 (host n1)': cannot send: Broken pipe",
				  &l), 1);
	CHECK_STR(l.who, "rank 0 (host n1)");
}

static void test_other_failures_are_not_a_lost_peer(void)
{
	static const char *const lines[] = {
		"hvd: tensor mismatch: 'grad.common' vs 'grad.x': rank 0 submitted allreduce",
		"hvd: stalled: 'rank 1: [a, b]': these ranks did not submit within HVD_TIMEOUT_S",
		"hvd: rank 1 (host n1) called hvd_shutdown: 'grad.x': other ranks submitted these",
		"hvd: control plane: 'rank 3 (host n2)': message of 99 bytes: too long",
		"chexnet: loader: 'shards': fewer training records than world size x batch",
		"hvd: ranks 2,x (host n2): 'silent for 4.1 s': no heartbeat",
		"hvd: ranks 2,3 (host n2: 'silent for 4.1 s': no heartbeat",
		"hvd: rank 2 (host n2) rank 3 (host n3): 'silent for 1 s'",
		"hvd: rank -1 (host n2): 'silent for 1 s'",
		"", NULL,
	};
	struct peer_lost l;
	for (int i = 0; lines[i] || i == 0; i++) {
		CHECK_MSG(peer_lost_parse(lines[i], &l) == 0 && l.count == 0, "taken as lost: '%s'",
			  lines[i] ? lines[i] : "(null)");
		if (!lines[i])
			break;
	}
	CHECK_INT(peer_lost_parse(NULL, &l), 0);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Survivors `ranks` (completed steps `steps`, on host "n<rank/2>") choose
 * at once, each in its own process; writers[i] gets rank i's choice,
 * *seconds the slowest, *last the last process's view of the members. */
static void choose_all(const char *out, int n, const int *ranks, const long *steps, int expected,
		       int *writers, double *seconds, struct survivors_vote *last)
{
	int fds[16][2];
	pid_t pids[16];
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		if (pipe(fds[i]) != 0 || (pids[i] = fork()) < 0)
			abort();
		if (pids[i] == 0) {
			struct survivors_vote v = { .writer = -1 };
			char host[16];
			snprintf(host, sizeof(host), "n%d", ranks[i] / 2);
			if (survivors_choose(out, ranks[i], host, expected, steps[i], &v) != 0)
				v.writer = -2;
			if (write(fds[i][1], &v, sizeof(v)) != sizeof(v))
				_exit(1);
			_exit(0);
		}
		close(fds[i][1]);
	}
	for (int i = 0; i < n; i++) {
		writers[i] = -3;
		if (read(fds[i][0], last, sizeof(*last)) == sizeof(*last))
			writers[i] = last->writer;
		else
			writers[i] = -4;
		close(fds[i][0]);
		waitpid(pids[i], NULL, 0);
	}
	*seconds = now_s() - t0;
}

/* Ranks 0, 1 and 3 outlive rank 2; rank 3 received the last step's
 * gradients, 0 and 1 did not: all three choose rank 3, at once. A
 * survivor that never shows up costs SURVIVORS_WAIT_S, no more. */
static void test_survivors_agree_on_the_most_completed_steps(void)
{
	char *out = test_path(test_tmpdir(), "run");
	CHECK_INT(mkdir(out, 0755), 0);
	int ranks[] = { 0, 1, 3 }, writers[3];
	long steps[] = { 41, 41, 42 };
	double s;
	struct survivors_vote v;
	choose_all(out, 3, ranks, steps, 3, writers, &s, &v);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(writers[i] == 3, "rank %d chose %d", ranks[i], writers[i]);
	CHECK_STR(v.ranks, "0,1,3");
	CHECK_STR(v.hosts, "n0,n0,n1");
	CHECK_MSG(s < SURVIVORS_WAIT_S, "%.2f s with every survivor there", s);
	CHECK_INT(survivors_reset(out), 0);
	long tie[] = { 41, 41, 41 };
	choose_all(out, 3, ranks, tie, 3, writers, &s, &v);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(writers[i] == 0, "on a tie rank %d chose %d, not the lowest rank", ranks[i],
			  writers[i]);
	CHECK_INT(survivors_reset(out), 0);
	choose_all(out, 2, ranks, steps, 3, writers, &s, &v);   /* rank 3 never comes */
	CHECK_MSG(writers[0] == 0 && writers[1] == 0, "chose %d and %d", writers[0], writers[1]);
	CHECK_MSG(s >= SURVIVORS_WAIT_S && s < SURVIVORS_WAIT_S + 2, "%.2f s for a missing survivor", s);
	free(out);
}

static void test_saved_summary_is_read_back_or_refused(void)
{
	char *out = test_path(test_tmpdir(), "run");
	CHECK_INT(mkdir(out, 0755), 0);
	struct survivors_saved s;
	CHECK_INT(survivors_read_saved(out, &s), 0);
	CHECK_INT(survivors_mark_saved(out, "time=2026-11-24T23:20:48Z hosts=n2 ranks=4 accumulate=1 "
				       "epoch=0 step=3 writer=0 next=in-process members=0,1,5 "
				       "who=ranks 2,3 (host n2)"), 0);
	CHECK_INT(survivors_read_saved(out, &s), 1);
	CHECK_STR(s.hosts, "n2");
	CHECK_STR(s.who, "ranks 2,3 (host n2)");
	CHECK_STR(s.next, "in-process");
	CHECK_INT(s.ranks, 4);
	CHECK_INT(s.step, 3);
	int rank, size;
	CHECK_INT(survivors_member(&s, 5, &rank, &size), 0);
	CHECK_MSG(rank == 2 && size == 3, "rank 5 of members 0,1,5: %d of %d", rank, size);
	CHECK_INT(survivors_member(&s, 2, &rank, &size), -1);
	/* 4 x 1 -> 2 ranks: 2; 3 x 1 -> 2: 1.5, the larger (2); 4 x 1 -> 3: 1;
	 * 5 x 1 -> 2: 2.5 -> 3; 2 x 1 -> 3: 0.67 -> 1 */
	static const int from[][3] = { { 4, 1, 2 }, { 3, 1, 2 }, { 4, 1, 3 }, { 5, 1, 2 }, { 2, 1, 3 },
				       { 8, 2, 4 } };
	static const long k[] = { 2, 2, 1, 3, 1, 4 };
	static const int exact[] = { 1, 0, 0, 0, 0, 1 };
	for (int i = 0; i < 6; i++) {
		int e = -1;
		s.ranks = from[i][0], s.accumulate = from[i][1];
		long got = survivors_accumulate(&s, from[i][2], &e);
		CHECK_MSG(got == k[i] && e == exact[i], "%d x %d -> %d ranks: K %ld (exact %d), want "
			  "%ld (%d)", from[i][0], from[i][1], from[i][2], got, e, k[i], exact[i]);
	}
	CHECK_INT(survivors_mark_saved(out, "time=T hosts=n2 ranks=4 accumulate=1 epoch=0 step=3 "
				       "writer=0 next=later members=0,1 who=rank 2 (host n2)"), 0);
	CHECK_INT(survivors_read_saved(out, &s), -1);
	CHECK_INT(survivors_wait_saved(out, 1), 0);
	CHECK_INT(survivors_mark_saved(out, "hosts=n2 ranks=4"), 0);
	CHECK_INT(survivors_read_saved(out, &s), -1);
	CHECK_INT(survivors_reset(out), 0);
	CHECK_INT(survivors_wait_saved(out, 0.2), -1);
	free(out);
}

/* Members 0 and 1 of 2 prepare at once, each in its own process; what
 * each set (HVD_RANK HVD_SIZE HVD_COORDINATOR HVD_SECRET_FILE generation,
 * PMIx dropped) comes back in env[i]. */
static void rejoin_both(const char *out, char env[2][1024])
{
	int fds[2][2];
	pid_t pids[2];
	for (int i = 0; i < 2; i++) {
		if (pipe(fds[i]) != 0 || (pids[i] = fork()) < 0)
			abort();
		if (pids[i] == 0) {
			char line[1024] = "failed";
			long g = -1;
			setenv("PMIX_NAMESPACE", "slurm.pmix.1.0", 1);
			if (rejoin_prepare(out, i, 2, &g) == 0)
				snprintf(line, sizeof(line), "%s %s %s %s %ld %s", getenv("HVD_RANK"),
					 getenv("HVD_SIZE"), getenv("HVD_COORDINATOR"),
					 getenv("HVD_SECRET_FILE"), g, getenv("PMIX_NAMESPACE") ? "pmix" : "-");
			if (write(fds[i][1], line, sizeof(line)) != (ssize_t)sizeof(line))
				_exit(1);
			_exit(0);
		}
		close(fds[i][1]);
	}
	for (int i = 0; i < 2; i++) {
		if (read(fds[i][0], env[i], 1024) != 1024)
			snprintf(env[i], 1024, "no answer");
		close(fds[i][0]);
		waitpid(pids[i], NULL, 0);
	}
}

/* The coordinator publishes the next generation, a port on its own
 * address and a private secret; the other member reads the same; both
 * drop PMIx. A second world raises the generation again; a world file
 * that is not one is refused. */
static void test_ranks_left_form_a_world_of_their_own(void)
{
	char *out = test_path(test_tmpdir(), "run");
	char *dir = test_path(test_tmpdir(), "run/.survivors");
	char env[2][1024], secret[4400], coordinator[256];
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT((int)rejoin_generation(out), 0);
	rejoin_both(out, env);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	unsigned port = 0;
	long g = -1;
	CHECK_MSG(sscanf(env[0], "0 2 %255s %*s %ld -", coordinator, &g) == 2 && g == 1 &&
		  strchr(coordinator, ':') && sscanf(strchr(coordinator, ':') + 1, "%u", &port) == 1 &&
		  port > 0 && port < 65536 && strstr(env[0], secret), "coordinator: %s", env[0]);
	char want[1200];
	snprintf(want, sizeof(want), "1 2 %s %s 1 -", coordinator, secret);
	CHECK_STR(env[1], want);
	struct stat st;
	CHECK_MSG(stat(secret, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 65,
		  "secret: mode %o, %ld bytes", (unsigned)(st.st_mode & 0777), (long)st.st_size);
	CHECK_INT((int)rejoin_generation(out), 1);
	char world[4400];
	snprintf(world, sizeof(world), "%s/world", dir);
	CHECK_INT(unlink(world), 0);
	rejoin_both(out, env);
	CHECK_MSG(strstr(env[0], " 2 -") && strstr(env[1], " 2 -"), "second world: %s | %s", env[0],
		  env[1]);
	FILE *f = fopen(world, "w");
	fputs("1 0 10.0.0.1/24\n", f);   /* port 0 */
	fclose(f);
	long g2;
	CHECK_INT(rejoin_prepare(out, 1, 2, &g2), -1);
	free(dir);
	free(out);
}

const struct test_case survivors_tests[] = {
	{ "lost_peers_are_read_from_the_runtimes_lines", test_lost_peers_are_read_from_the_runtimes_lines },
	{ "other_failures_are_not_a_lost_peer", test_other_failures_are_not_a_lost_peer },
	{ "survivors_agree_on_the_most_completed_steps", test_survivors_agree_on_the_most_completed_steps },
	{ "saved_summary_is_read_back_or_refused", test_saved_summary_is_read_back_or_refused },
	{ "ranks_left_form_a_world_of_their_own", test_ranks_left_form_a_world_of_their_own },
	{ 0 }
};
