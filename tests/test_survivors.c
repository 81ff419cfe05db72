/* test_survivors.c - what a runtime failure line says was lost
 * (train/peer_lost.h), on the lines the runtime prints (runtime/README.md's
 * table, copied from real runs), the survivors' one decision on who writes
 * OUT/last and goes on (recover/survivors.h) among processes that race on
 * one folder (at once, one late, a partition, a silent leader), the
 * generations that fence an older process's writes (base/fence.h), and
 * the world they form to go on in-process (recover/rejoin.h).
 * What it does not do: lose a node (test_multinode_elastic.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fence.h"
#include "base/whole_file.h"
#include "cmd/go_on.h"
#include "runner.h"
#include "loop/run_metrics.h"
#include "recover/survivors.h"
#include "recover/writer_beat.h"
#include "train/checkpoint.h"
#include "train/checkpoint_replace.h"
#include "train/peer_lost.h"
#include "recover/rejoin.h"
#include "train/tb_events.h"

/* The lines that name lost peers, from the runtime's record (its ranks
 * and their hosts): the ranks of one host together, in the runtime's own
 * form, each known host once; a host not known is "?" and not a host. */
static void test_lost_peers_are_named_by_host(void)
{
	struct peer_lost l = { .how = PEER_LOST_SILENT, .count = 3, .ranks = { 3, 4, 5 } };
	const char *hosts[] = { "n2", "gpu-07.cluster", "gpu-07.cluster" };
	peer_lost_name(&l, hosts);
	CHECK_STR(l.who, "rank 3 (host n2), ranks 4,5 (host gpu-07.cluster)");
	CHECK_STR(l.hosts, "n2,gpu-07.cluster");
	CHECK_INT(peer_lost_has_host(&l, "gpu-07.cluster", 14), 1);
	CHECK_INT(peer_lost_has_host(&l, "n2", 2), 1);
	CHECK_INT(peer_lost_has_host(&l, "n", 1), 0);
	CHECK_INT(peer_lost_has_host(&l, "gpu-07", 6), 0);
	const char *interleaved[] = { "n1", "n2", "n1" };
	peer_lost_name(&l, interleaved);
	CHECK_STR(l.who, "ranks 3,5 (host n1), rank 4 (host n2)");
	const char *unknown[] = { "", "", "n3" };
	peer_lost_name(&l, unknown);
	CHECK_STR(l.who, "ranks 3,4 (host ?), rank 5 (host n3)");
	CHECK_STR(l.hosts, "n3");
}

/* Members that never joined a world of the ranks left are named by the
 * hosts the members had, one rank at a time (the runtime knew none). */
static void test_members_that_never_joined_are_named(void)
{
	struct peer_lost l = { .how = PEER_LOST_NEVER_JOINED, .count = 2, .ranks = { 2, 4 } };
	peer_lost_name_hosts(&l, "n1,n1,n2,n3,n3");   /* the members' hosts, by place */
	CHECK_STR(l.who, "rank 2 (host n2), rank 4 (host n3)");
	CHECK_STR(l.hosts, "n2,n3");
	peer_lost_name_hosts(&l, "n1,n1,n2");   /* rank 4: past the list */
	CHECK_STR(l.who, "rank 2 (host n2), rank 4 (host ?)");
	CHECK_STR(l.hosts, "n2");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* One survivor as the runtime left it: its rank, completed steps, the
 * ranks it was told were lost, and how late it reports (seconds). */
struct survivor {
	int rank;
	long steps;
	int lost[8], lost_count;
	double late;
};

/* v's members as the decision writes them: "0,1" (four at a time). */
static const char *members(const struct survivors_vote *v)
{
	static char text[4][4096];
	static int next;
	char *t = text[next++ % 4];
	return survivors_ranks_text(v->ranks, v->count, t, sizeof(text[0])) ? "(too many)" : t;
}

/* Each survivor decides in its own process, at once (plus its lateness),
 * holding generation `held` of out in a world of `world` ranks. rc[i]:
 * survivors_decide's result; v[i] the decision it read; *seconds the
 * slowest. */
static void decide_all(const char *out, long held, int world, const struct survivor *sv, int n,
		       int *rc, struct survivors_vote *v, double *seconds)
{
	int fds[16][2];
	pid_t pids[16];
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		if (pipe(fds[i]) != 0 || (pids[i] = fork()) < 0)
			abort();
		if (pids[i] == 0) {
			struct { int rc; struct survivors_vote v; } r = { .rc = -9 };
			char host[16];
			snprintf(host, sizeof(host), "n%d", sv[i].rank / 2);
			usleep((useconds_t)(sv[i].late * 1e6));
			r.rc = survivors_decide(out, held, sv[i].rank, host, world, sv[i].lost,
						sv[i].lost_count, sv[i].steps, &r.v);
			if (write(fds[i][1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
			_exit(0);
		}
		close(fds[i][1]);
	}
	for (int i = 0; i < n; i++) {
		struct { int rc; struct survivors_vote v; } r = { .rc = -8 };
		if (read(fds[i][0], &r, sizeof(r)) != sizeof(r))
			r.rc = -7;
		rc[i] = r.rc;
		v[i] = r.v;
		close(fds[i][0]);
		waitpid(pids[i], NULL, 0);
	}
	*seconds = now_s() - t0;
}

/* decide_all in a fresh run folder whose session holds generation 1 of
 * a 4-rank world; the folder's path (free it). */
static char *decide_in_new_run(const struct survivor *sv, int n, int *rc,
			       struct survivors_vote *v, double *seconds)
{
	char *out = test_path(test_tmpdir(), "run");
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT(fence_claim(out, 1, "session\n"), 0);
	decide_all(out, 1, 4, sv, n, rc, v, seconds);
	return out;
}

/* Ranks 0, 1 and 3 outlive rank 2; rank 3 received the last step's
 * gradients, 0 and 1 did not: the one decision names rank 3, at once,
 * as generation held + 1. On a tie the lowest rank writes. */
static void test_survivors_agree_on_the_most_completed_steps(void)
{
	struct survivor sv[] = { { 0, 41, { 2 }, 1, 0 }, { 1, 41, { 2 }, 1, 0 }, { 3, 42, { 2 }, 1, 0 } };
	int rc[3];
	struct survivors_vote v[3];
	double s;
	char *out = decide_in_new_run(sv, 3, rc, v, &s);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(rc[i] == 0 && v[i].writer == 3 && v[i].generation == 2 &&
			  !strcmp(members(&v[i]), "0,1,3") && !strcmp(v[i].hosts, "n0,n0,n1"),
			  "rank %d: rc %d, writer %d, generation %ld, members %s (%s)", sv[i].rank,
			  rc[i], v[i].writer, v[i].generation, members(&v[i]), v[i].hosts);
	CHECK_MSG(s < SURVIVORS_WAIT_S, "%.2f s with every survivor there", s);
	CHECK_INT((int)fence_newest(out), 2);
	CHECK_INT(survivors_reset(out), 0);
	for (int i = 0; i < 3; i++)
		sv[i].steps = 41;
	decide_all(out, 2, 4, sv, 3, rc, v, &s);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(rc[i] == 0 && v[i].writer == 0 && v[i].generation == 3, "on a tie rank %d: "
			  "writer %d, not the lowest rank", sv[i].rank, v[i].writer);
	free(out);
}

/* A survivor that reports after the old 3-s poll (a loaded node, NFS):
 * the leader decided without it; it reads that decision, is not a
 * member and writes nothing, not even its report. Exactly one decision
 * exists. */
static void test_a_late_survivor_is_left_out_not_a_second_writer(void)
{
	struct survivor sv[] = { { 0, 41, { 3 }, 1, 0 }, { 1, 41, { 3 }, 1, 0 },
				 { 2, 42, { 3 }, 1, SURVIVORS_WAIT_S + 1.5 } };
	int rc[3];
	struct survivors_vote v[3];
	double s;
	char *out = decide_in_new_run(sv, 3, rc, v, &s);
	CHECK_MSG(rc[0] == 0 && rc[1] == 0 && v[0].writer == 0 && !strcmp(members(&v[0]), "0,1"),
		  "ranks 0, 1: rc %d %d, writer %d, members %s", rc[0], rc[1], v[0].writer, members(&v[0]));
	CHECK_MSG(rc[2] == 1 && v[2].generation == 2 && !strcmp(members(&v[2]), "0,1"),
		  "the late rank 2: rc %d (1: left out), decision %ld: %s", rc[2], v[2].generation,
		  members(&v[2]));
	CHECK_INT((int)fence_newest(out), 2);
	char *report = test_path(out, ".survivors/2");
	CHECK_MSG(access(report, F_OK) != 0, "the late rank 2 wrote its report after the decision");
	free(report);
	free(out);
}

/* A partition: ranks 0, 1 and ranks 2, 3 each see the other half lost and
 * both report at once. One decision exists, rank 0's half's (the half
 * without rank 0 defers by SURVIVORS_WAIT_S); the other half reads it and
 * is left out; no rank named lost by the deciding half is a member. */
static void test_a_partition_has_one_decision(void)
{
	struct survivor sv[] = { { 0, 41, { 2, 3 }, 2, 0 }, { 1, 41, { 2, 3 }, 2, 0 },
				 { 2, 41, { 0, 1 }, 2, 0 }, { 3, 41, { 0, 1 }, 2, 0 } };
	int rc[4];
	struct survivors_vote v[4];
	double s;
	char *out = decide_in_new_run(sv, 4, rc, v, &s);
	int in = 0;
	for (int i = 0; i < 4; i++) {
		CHECK_MSG(rc[i] == 0 || rc[i] == 1, "rank %d: rc %d", sv[i].rank, rc[i]);
		CHECK_MSG(v[i].generation == 2 && !strcmp(members(&v[i]), members(&v[0])), "rank %d read "
			  "decision %ld (%s), rank 0 %s", sv[i].rank, v[i].generation, members(&v[i]),
			  members(&v[0]));
		in += rc[i] == 0;
	}
	CHECK_MSG(in == 2 && !strcmp(members(&v[0]), "0,1") && rc[0] == 0 && rc[2] == 1,
		  "members %s, %d ranks go on (rank 0: rc %d, rank 2: rc %d)", members(&v[0]), in, rc[0],
		  rc[2]);
	CHECK_INT((int)fence_newest(out), 2);
	free(out);
}

/* Rank 0's half really gone (not a partition): ranks 2, 3 go on once
 * their deference has passed, not before and not much later. */
static void test_the_half_without_rank_0_goes_on_after_its_wait(void)
{
	struct survivor sv[] = { { 2, 41, { 0, 1 }, 2, 0 }, { 3, 41, { 0, 1 }, 2, 0 } };
	int rc[2];
	struct survivors_vote v[2];
	double s;
	char *out = decide_in_new_run(sv, 2, rc, v, &s);
	CHECK_MSG(rc[0] == 0 && rc[1] == 0 && v[0].writer == 2 && !strcmp(members(&v[0]), "2,3"),
		  "rc %d %d, writer %d, members %s", rc[0], rc[1], v[0].writer, members(&v[0]));
	CHECK_MSG(s >= SURVIVORS_WAIT_S - 0.1 && s < SURVIVORS_WAIT_S + 1.5, "%.2f s (its wait: "
		  "%.1f s)", s, SURVIVORS_WAIT_S);
	free(out);
}

/* The leader by the survivors' view (rank 0, which the runtime did not
 * name) never reports: the next survivor decides in its place after its
 * staggered wait; rank 0 is not a member. */
static void test_a_silent_leader_is_replaced(void)
{
	struct survivor sv[] = { { 1, 41, { 3 }, 1, 0 }, { 2, 41, { 3 }, 1, 0 } };
	int rc[2];
	struct survivors_vote v[2];
	double s;
	char *out = decide_in_new_run(sv, 2, rc, v, &s);
	CHECK_MSG(rc[0] == 0 && rc[1] == 0 && v[0].writer == 1 && !strcmp(members(&v[0]), "1,2"),
		  "rc %d %d, writer %d, members %s", rc[0], rc[1], v[0].writer, members(&v[0]));
	CHECK_MSG(s >= SURVIVORS_WAIT_S + SURVIVORS_STAGGER_S - 0.2 &&
		  s < SURVIVORS_WAIT_S + 2 * SURVIVORS_STAGGER_S + 1, "%.2f s without a leader", s);
	free(out);
}

/* Generations are claimed once each: of 8 processes claiming the same
 * number one gets it; fence_claim_next passes over taken numbers. A
 * process that holds an older generation renames nothing into the
 * folder, and begins no temporary there: a whole file and a checkpoint
 * stay as the newer one left them. */
static void test_an_older_generation_writes_nothing(void)
{
	char *out = test_path(test_tmpdir(), "run"), *file = test_path(out, "run.json");
	char *ck = test_path(out, "last"), *tmp = test_path(out, "last.tmp-x");
	CHECK_INT(mkdir(out, 0755), 0);
	pid_t pids[8];
	for (int i = 0; i < 8; i++)
		if ((pids[i] = fork()) == 0)
			_exit(fence_claim(out, 1, "racer\n") == 0 ? 0 : 3);
	int won = 0;
	for (int i = 0; i < 8; i++) {
		int st;
		waitpid(pids[i], &st, 0);
		won += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	CHECK_INT(won, 1);
	CHECK_INT((int)fence_claim_next(out, "next\n"), 2);
	CHECK_INT(whole_file_put(file, "generation 2\n", 0644), 0);
	fence_hold(out, 1);   /* a hung rank of generation 1, woken */
	CHECK_INT(fence_stale(), 1);
	CHECK_INT(whole_file_put(file, "generation 1\n", 0644), -1);
	CHECK_INT(errno, ESTALE);
	struct model m;         /* a checkpoint is refused before its temporary exists */
	struct trainer_error err = { "" };
	memset(&m, 0, sizeof(m));
	CHECK_INT(checkpoint_save(ck, &m, NULL, NULL, NULL, &err), -1);
	CHECK_CONTAINS(err.msg, "not written: a newer generation of the run");
	char t[1200];
	CHECK_INT(whole_file_open(file, t, sizeof(t), 0644), -1);
	CHECK_INT(errno, ESTALE);
	struct test_proc ls;
	char cmd[1100];
	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep tmp; :", out);
	CHECK_INT(test_run(cmd, 10, &ls), 0);
	CHECK_MSG(!ls.out[0], "a stale process left temporaries: %s", ls.out);
	test_proc_free(&ls);
	char *text = test_read_file(file, NULL);
	CHECK_STR(text, "generation 2\n");
	free(text);
	CHECK_INT(mkdir(tmp, 0755), 0);
	CHECK_INT(checkpoint_replace(tmp, ck, &err), -1);
	CHECK_CONTAINS(err.msg, "a newer generation of the run");
	struct stat sb;
	CHECK_MSG(stat(ck, &sb) != 0 && stat(tmp, &sb) != 0, "last/ put in place by a stale rank");
	fence_hold(out, 2);
	CHECK_INT(fence_stale(), 0);
	CHECK_INT(whole_file_put(file, "generation 2 again\n", 0644), 0);
	/* fence_replace exchanges: the old file comes back under tmp's name */
	char *other = test_path(out, "run.json.tmp-y"), *fresh = test_path(out, "fresh");
	FILE *f = fopen(other, "w");
	fputs("generation 2, third\n", f);
	fclose(f);
	CHECK_INT(fence_replace(other, file), 0);
	text = test_read_file(other, NULL);
	CHECK_STR(text, "generation 2 again\n");
	free(text);
	CHECK_INT(fence_replace(other, fresh), 0);   /* no file there yet: a plain rename */
	CHECK_MSG(stat(other, &sb) != 0 && stat(fresh, &sb) == 0, "not renamed into a new name");
	fence_hold(out, 1);
	CHECK_INT(mkdir(tmp, 0755), 0);
	CHECK_INT(fence_replace(tmp, fresh), -1);
	CHECK_INT(errno, ESTALE);
	fence_hold(NULL, 0);
	free(other);
	free(fresh);
	free(tmp);
	free(ck);
	free(file);
	free(out);
}

/* A process whose generation a newer one replaced appends no row to
 * metrics.csv and no event to its file in tb/: both stay as they were,
 * and the refusal is one line; not even one frozen between its check and
 * its append. Before, such an append landed. */
static void test_an_older_generation_appends_no_metrics(void)
{
	char *out = test_path(test_tmpdir(), "run");
	char *csv = test_path(out, "metrics.csv");
	struct run_metrics m;
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT((int)fence_claim_next(out, "session\n"), 1);
	fence_hold(out, 1);
	if (run_metrics_open(&m, out, 8, -1, 2, 0) != 0) {
		CHECK_MSG(0, "run_metrics_open failed");
		return;
	}
	CHECK_INT(run_metrics_train(&m, 0, 1, 0.5, 1e-3, 10, 0, 0), 0);
	size_t csv_len = 0;
	free(test_read_file(csv, &csv_len));
	struct test_proc ls;
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "stat -c %%s '%s'/tb/*", out);
	CHECK_INT(test_run(cmd, 10, &ls), 0);
	char *before = strdup(ls.out);
	test_proc_free(&ls);
	CHECK_INT((int)fence_claim_next(out, "went on\n"), 2);   /* the others went on */
	CHECK_INT(run_metrics_train(&m, 0, 2, 0.4, 1e-3, 10, 0, 0), -1);
	/* one frozen past that check appends into the files the claim
	 * replaced with fresh copies (base/fence.h), never into metrics.csv
	 * or tb/'s events */
	struct tb_event late = { .step = 2 };
	struct trainer_error terr = { "" };
	CHECK_INT(fputs("2,stale row\n", m.csv) >= 0 && fflush(m.csv) == 0, 1);
	CHECK_INT(tb_events_write(m.tb, &late, &terr), 0);
	run_metrics_close(&m);
	size_t after_len = 0;
	free(test_read_file(csv, &after_len));
	CHECK_INT((int)after_len, (int)csv_len);
	CHECK_INT(test_run(cmd, 10, &ls), 0);
	CHECK_STR(ls.out, before);
	test_proc_free(&ls);
	fence_hold(NULL, 0);
	free(before);
	free(csv);
	free(out);
}

/* A second rank joining as the same spare's rank of one world (a second
 * --join G with the same SLURM_PROCID) is refused alone, at once and in
 * one line naming the first; its claim in OUT/.generations is a name
 * fence_newest passes over, and another joiner's place is still free. */
static void test_a_duplicate_joiner_is_refused_alone(void)
{
	char *out = test_path(test_tmpdir(), "run");
	char *saved = test_path(out, FENCE_DIR "/2.saved");
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT((int)fence_claim_next(out, "session\n"), 1);
	CHECK_INT((int)fence_claim_next(out, "decision\n"), 2);
	CHECK_INT(whole_file_put(saved, "time=2026-11-28T04:00:00Z hosts=n2 epoch=0 step=3 writer=0 "
				 "next=in-process members=0,1 member_hosts=n1,n1 joiners=2 join_nodes=1 "
				 "who=ranks 2,3 (host n2)\n", 0644), 0);
	CHECK_INT(fence_claim_name(out, "2.join-0", "joiner 0 of generation 2: n3 pid 1\n"), 0);
	CHECK_INT((int)fence_newest(out), 2);
	struct settings given, next;
	struct trainer_error err = { "" };
	struct rejoined r;
	long target = 0;
	CHECK(settings_init(&given, "train", SETTING_TRAIN, &err) == 0);
	given.train.resume = out;
	given.train.shrink = 1;
	given.join = 2;
	setenv("SLURM_PROCID", "0", 1);
	char *log = test_path(test_tmpdir(), "err");
	int saved_fd = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fflush(stderr);
	dup2(fd, 2);
	double t0 = now_seconds();
	int rc = go_on_join(&given, &target, &r, &next);
	double took = now_seconds() - t0;
	fflush(stderr);
	dup2(saved_fd, 2);
	close(fd);
	close(saved_fd);
	CHECK_INT(rc, 1);
	CHECK_MSG(took < 5, "refused after %.1f s", took);
	char *said = test_read_file(log, NULL);
	CHECK_MSG(said && strstr(said, "chexnet: train: --join 2: '") && strstr(said, "/.generations/"
		  "2.join-0': joiner 0 of this world was taken already (joiner 0 of generation 2: n3 pid "
		  "1): refused, the world left alone\n") && !strchr(strchr(said, '\n') + 1, '\n'),
		  "said: %s", said ? said : "(nothing)");
	free(said);
	free(log);
	unsetenv("SLURM_PROCID");
	CHECK_INT(fence_claim_name(out, "2.join-1", "joiner 1\n"), 0);   /* the other place */
	CHECK_INT(fence_claim_name(out, "2.join-1", "joiner 1 again\n"), 1);
	fence_hold(NULL, 0);
	free(saved);
	free(out);
}

/* The others wait for the writer by its beat, not by a fixed time. In
 * tenths of the real times: a writer that beats every 0.1 s and writes
 * its summary after 2.4 s (twice the 1.2 s a fixed wait would allow) is
 * waited for; one that beats for 0.5 s and dies is named lost about
 * 1 s (the silence) later, long before the limit; one that never begins
 * likewise. The limit grows with the checkpoint: 120 s for DenseNet-121,
 * the checkpoint at 5 MiB/s above that. */
static void test_the_writer_is_waited_for_by_its_beat(void)
{
	char *out = test_path(test_tmpdir(), "run");
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT((int)fence_claim_next(out, "session\n"), 1);
	CHECK_INT((int)fence_claim_next(out, "decision\n"), 2);
	CHECK_NEAR(writer_wait_limit_s(3.0 * 4 * 6968206), 120, 0, 0);
	CHECK_NEAR(writer_wait_limit_s(3e9), 3e9 / (5.0 * 1024 * 1024), 1e-9, 0);
	for (int dies = 0; dies < 2; dies++) {
		pid_t pid = fork();
		if (pid == 0) {
			fence_hold(out, 2);
			if (writer_beat_start(out, 2, 1, "n1", 0.1))
				_exit(2);
			usleep(dies ? 500000 : 2400000);
			if (dies)
				_exit(0);   /* its beat thread dies with it: the file stays, unchanged */
			int rc = survivors_mark_saved(out, "time=T hosts=n2 epoch=0 step=3 writer=1 "
						      "next=in-process members=0,1 member_hosts=n1,n1 who=rank 2");
			writer_beat_stop();
			_exit(rc ? 3 : 0);
		}
		fence_hold(out, 2);
		double t0 = now_seconds();
		int rc = survivors_wait_saved(out, 10, 1);
		double took = now_seconds() - t0;
		int st = 0;
		waitpid(pid, &st, 0);
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer ended %d", st);
		if (dies) {
			CHECK_INT(rc, -1);
			CHECK_MSG(took >= 1.3 && took < 3, "a dead writer named after %.2f s", took);
		} else {
			CHECK_INT(rc, 0);
			CHECK_MSG(took >= 2.3, "saved after %.2f s", took);
			char beat[640];
			writer_beat_read(out, 2, beat, sizeof(beat));
			CHECK_STR(beat, "");   /* the beat file goes once the summary is there */
		}
		char saved[4400];
		snprintf(saved, sizeof(saved), "%s/" FENCE_DIR "/2.saved", out);
		unlink(saved);
	}
	double t0 = now_seconds();   /* generation 3: its writer never begins */
	CHECK_INT((int)fence_claim_next(out, "decision\n"), 3);
	fence_hold(out, 3);
	CHECK_INT(survivors_wait_saved(out, 10, 1), -1);
	CHECK_MSG(now_seconds() - t0 < 2, "no writer named after %.2f s", now_seconds() - t0);
	fence_hold(NULL, 0);
	free(out);
}

/* The frozen writer's part (HVD_FENCE_WRITER=OUT, HVD_FENCE_WHAT=file or
 * checkpoint): it holds generation 1 and writes run.json, or replaces
 * last/ with a folder holding "generation 1"; either must fail ESTALE. */
static void frozen_writer(const char *writer)
{
	const char *what = getenv("HVD_FENCE_WHAT");
	char *file = test_path(writer, "run.json"), *ck = test_path(writer, "last");
	struct trainer_error err = { "" };
	fence_hold(writer, 1);
	if (!strcmp(what, "file")) {
		int rc = whole_file_put(file, "generation 1\n", 0644);
		CHECK_MSG(rc == -1 && errno == ESTALE, "the frozen writer's rename: %d (%s)", rc,
			  strerror(errno));
	} else {
		char wdir[1024], tmp[1200], mark[1300];
		CHECK_INT(fence_writes_dir(ck, wdir, sizeof(wdir)), 1);
		snprintf(tmp, sizeof(tmp), "%s/last.tmp-frozen", wdir);
		snprintf(mark, sizeof(mark), "%s/model.safetensors", tmp);
		CHECK_INT(mkdir(tmp, 0755), 0);
		CHECK_INT(whole_file_put(mark, "generation 1\n", 0644), 0);
		CHECK_INT(checkpoint_replace(tmp, ck, &err), -1);
		CHECK_CONTAINS(err.msg, "newer generation");
	}
	fence_hold(NULL, 0);
	free(ck);
	free(file);
}

/* Generation 2 claimed while the writer is frozen in its rename; then
 * generation 2 writes what the writer was writing: gen 2's text stays. */
static void write_as_generation_2(const char *out, const char *what)
{
	fence_hold(out, 2);
	if (!strcmp(what, "file")) {
		char *file = test_path(out, "run.json");
		CHECK_INT(whole_file_put(file, "generation 2\n", 0644), 0);
		free(file);
	} else {
		char *ck = test_path(out, "last"), wdir[1024], tmp[1200], mark[1300];
		struct trainer_error err = { "" };
		CHECK_INT(fence_writes_dir(ck, wdir, sizeof(wdir)), 1);
		snprintf(tmp, sizeof(tmp), "%s/last.tmp-two", wdir);
		snprintf(mark, sizeof(mark), "%s/model.safetensors", tmp);
		CHECK_INT(mkdir(tmp, 0755), 0);
		CHECK_INT(whole_file_put(mark, "generation 2\n", 0644), 0);
		CHECK_MSG(checkpoint_replace(tmp, ck, &err) == 0, "%s", err.msg);
		free(ck);
	}
	fence_hold(NULL, 0);
}

/* A writer of generation 1 frozen inside its rename (tests/stall_shim.c
 * holds the rename past every check it makes, until the test lets it go)
 * while generation 2 is
 * claimed and writes the same name: the old rename fails, as its
 * temporary's writes folder is gone (base/fence.h), so the newer text
 * stays, with RENAME_EXCHANGE or without it (no_exchange: refused as NFS
 * does, and a checkpoint then replaced in two renames, frozen at the
 * second: the old last/ it moved aside is put back by the claim). Before,
 * the exchange's undo was the only guard, and without it none. The
 * writer is this runner again, preloaded with the shim. */
static void frozen_rename(const char *what, int no_exchange)
{
	const char *root = getenv("HVD_FENCE_ROOT");   /* a folder on NFS */
	char *out = test_path(root ? root : test_tmpdir(), "run");
	char *mark = test_path(test_tmpdir(), "stalled");
	char cmd[8192], *name = !strcmp(what, "file") ? "run.json" : "last";
	struct test_proc p;
	struct stat sb;
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT(fence_claim(out, 1, "first\n"), 0);
	if (strcmp(what, "file") != 0) {   /* a last/ of generation 1's to replace */
		char *ck = test_path(out, "last"), *model = test_path(out, "last/model.safetensors");
		CHECK_INT(mkdir(ck, 0755), 0);
		CHECK_INT(test_write_file(model, "generation 1, earlier\n", 22), 0);
		free(model);
		free(ck);
	}
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o '%s/shim.so' '%s/tests/stall_shim.c' -ldl "
		 "&& (HVD_FENCE_WRITER='%s' HVD_FENCE_WHAT=%s %s LD_PRELOAD='%s/shim.so' "
		 "HVD_STALL_RENAME=run/%s HVD_STALL_S=1 HVD_STALL_MARK='%s' HVD_STALL_UNTIL='%s.go' "
		 "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" '%s/hvdtest' -G "
		 "trainer-survivors a_frozen_rename_of_an_older_generation_fails > '%s/writer.log' 2>&1; "
		 "echo writer=$? > '%s/writer.rc') > /dev/null 2>&1 &", test_tmpdir(), test_src_dir(), out,
		 what, no_exchange ? "HVD_STALL_NO_EXCHANGE=1" : "", test_tmpdir(), name, mark, mark,
		 test_build_dir(), test_tmpdir(),
		 test_tmpdir());
	CHECK_INT(test_run(cmd, 60, &p), 0);
	test_proc_free(&p);
	for (int i = 0; i < 600 && stat(mark, &sb) != 0; i++)
		usleep(50000);
	CHECK_MSG(stat(mark, &sb) == 0, "the writer never reached its rename");
	CHECK_INT((int)fence_claim_next(out, "second\n"), 2);
	write_as_generation_2(out, what);
	char go[1100];   /* the frozen rename goes on only now */
	snprintf(go, sizeof(go), "%s.go", mark);
	CHECK_INT(test_write_file(go, "", 0), 0);
	char *rc_path = test_path(test_tmpdir(), "writer.rc"), *log = test_path(test_tmpdir(), "writer.log");
	for (int i = 0; i < 600 && stat(rc_path, &sb) != 0; i++)
		usleep(50000);
	char *rc = test_read_file(rc_path, NULL), *text = test_read_file(log, NULL);
	CHECK_MSG(rc && !strcmp(rc, "writer=0\n") && text && strstr(text, "1 passed, 0 failed"),
		  "the writer (%s%s): %s %s", what, no_exchange ? ", no exchange" : "",
		  rc ? rc : "(no status)", text ? text : "");
	free(rc);
	free(text);
	char *file = test_path(out, !strcmp(what, "file") ? "run.json" : "last/model.safetensors");
	text = test_read_file(file, NULL);
	CHECK_MSG(text && !strcmp(text, "generation 2\n"), "%s%s: %s holds %s", what,
		  no_exchange ? ", no exchange" : "", name, text ? text : "nothing");
	free(text);
	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -e tmp -e old; ls '%s/.generations' | grep 1.writes; :",
		 out, out);
	CHECK_INT(test_run(cmd, 10, &p), 0);
	CHECK_MSG(!p.out[0], "temporaries left: %s", p.out);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cd '%s' && rm -rf stalled stalled.go writer.rc writer.log", out,
		 test_tmpdir());
	CHECK_INT(test_run(cmd, 10, &p), 0);
	test_proc_free(&p);
	free(file);
	free(rc_path);
	free(log);
	free(mark);
	free(out);
}

static void test_a_frozen_rename_of_an_older_generation_fails(void)
{
	const char *writer = getenv("HVD_FENCE_WRITER");
	if (writer) {
		frozen_writer(writer);
		return;
	}
	frozen_rename("file", 0);
	frozen_rename("file", 1);
	frozen_rename("checkpoint", 0);
	frozen_rename("checkpoint", 1);
}

static void test_saved_summary_is_read_back_or_refused(void)
{
	char *out = test_path(test_tmpdir(), "run");
	CHECK_INT(mkdir(out, 0755), 0);
	struct survivors_saved s;
	CHECK_INT(survivors_read_saved(out, &s), 0);
	CHECK_INT(survivors_mark_saved(out, "time=2026-11-24T23:20:48Z hosts=n2 epoch=0 step=3 "
				       "writer=0 next=in-process members=0,1,5 member_hosts=n1,n1,n3 "
				       "who=ranks 2,3 (host n2)"), 0);
	CHECK_INT(survivors_read_saved(out, &s), 1);
	CHECK_STR(s.hosts, "n2");
	CHECK_STR(s.who, "ranks 2,3 (host n2)");
	CHECK_STR(s.next, "in-process");
	CHECK_INT(s.step, 3);
	int rank, size;
	CHECK_INT(survivors_member(&s, 5, &rank, &size), 0);
	CHECK_MSG(rank == 2 && size == 3, "rank 5 of members 0,1,5: %d of %d", rank, size);
	CHECK_INT(survivors_member(&s, 2, &rank, &size), -1);
	CHECK_MSG(s.joiners == 0 && s.join_nodes == 0, "no spares: %d %d", s.joiners, s.join_nodes);
	/* spares' ranks join an in-process world; never a relaunch, never 0 */
	CHECK_INT(survivors_mark_saved(out, "time=T hosts=n2 epoch=0 step=3 writer=0 next=in-process "
				       "members=0,1 member_hosts=n1,n1 joiners=2 join_nodes=1 who=ranks 2,3 "
				       "(host n2)"), 0);
	CHECK_INT(survivors_read_saved(out, &s), 1);
	CHECK_MSG(s.joiners == 2 && s.join_nodes == 1 && !strcmp(s.who, "ranks 2,3 (host n2)"),
		  "joiners %d on %d nodes, who '%s'", s.joiners, s.join_nodes, s.who);
	static const char *bad_join[] = { "next=relaunch members=0,1 member_hosts=n1,n1 joiners=2 join_nodes=1",
					  "next=in-process members=0,1 member_hosts=n1,n1 joiners=0 join_nodes=1",
					  "next=in-process members=0,1 member_hosts=n1,n1 joiners=1 join_nodes=2",
					  "next=in-process members=0,1 member_hosts=n1,n1 joiners=2" };
	for (int i = 0; i < 4; i++) {
		char line[512];
		snprintf(line, sizeof(line), "time=T hosts=n2 epoch=0 step=3 writer=0 %s who=rank 2",
			 bad_join[i]);
		CHECK_INT(survivors_mark_saved(out, line), 0);
		CHECK_MSG(survivors_read_saved(out, &s) == -1, "accepted: %s", line);
	}
	/* members are ascending whole numbers, nothing else: atoi read "a" as 0 */
	static const char *bad_members[] = { "a", "0,,1", "1,0", "0,1,", "-1", "0x1", ",0", "0,0",
					     "+1" };
	for (int i = 0; i < 9; i++) {
		char line[512];
		snprintf(line, sizeof(line), "time=T hosts=n2 epoch=0 step=3 writer=0 next=relaunch "
			 "members=%s member_hosts=n1 who=rank 2", bad_members[i]);
		CHECK_INT(survivors_mark_saved(out, line), 0);
		CHECK_MSG(survivors_read_saved(out, &s) == -1, "accepted: %s", line);
	}
	/* 4 x 1 -> 2 ranks: 2; 3 x 1 -> 2: 1.5, the larger (2); 4 x 1 -> 3: 1;
	 * 5 x 1 -> 2: 2.5 -> 3; 2 x 1 -> 3: 0.67 -> 1 */
	static const int from[][3] = { { 4, 1, 2 }, { 3, 1, 2 }, { 4, 1, 3 }, { 5, 1, 2 }, { 2, 1, 3 },
				       { 8, 2, 4 } };
	static const long k[] = { 2, 2, 1, 3, 1, 4 };
	static const int exact[] = { 1, 0, 0, 0, 0, 1 };
	for (int i = 0; i < 6; i++) {
		int e = -1;
		long got = survivors_accumulate((long)from[i][0] * from[i][1], from[i][2], &e);
		CHECK_MSG(got == k[i] && e == exact[i], "%d x %d -> %d ranks: K %ld (exact %d), want "
			  "%ld (%d)", from[i][0], from[i][1], from[i][2], got, e, k[i], exact[i]);
	}
	CHECK_INT(survivors_mark_saved(out, "time=T hosts=n2 epoch=0 step=3 "
				       "writer=0 next=later members=0,1 member_hosts=n1,n1 who=rank 2 (host n2)"), 0);
	CHECK_INT(survivors_read_saved(out, &s), -1);
	CHECK_INT(survivors_wait_saved(out, 1, 10), 0);
	CHECK_INT(survivors_mark_saved(out, "hosts=n2 epoch=0"), 0);
	CHECK_INT(survivors_read_saved(out, &s), -1);
	/* the driver's records stay in .generations past the next session's reset */
	CHECK_INT(fence_claim(out, 3, "decision\n"), 0);
	fence_hold(out, 3);
	CHECK_INT(survivors_mark_saved(out, "time=T hosts=n2 epoch=0 step=3 "
				       "writer=0 next=relaunch members=0,1 member_hosts=n1,n1 who=rank 2 (host n2)"), 0);
	CHECK_INT(survivors_read_record(out, 3, &s), 1);
	CHECK_STR(s.next, "relaunch");
	CHECK_INT(survivors_read_record(out, 2, &s), 0);
	/* generation 4's decision made, its summary not yet written: saved
	 * still holds generation 3's, which is not this decision's */
	CHECK_INT(fence_claim(out, 4, "decision\n"), 0);
	fence_hold(out, 4);
	CHECK_INT(survivors_wait_saved(out, 0.2, 10), -1);
	CHECK_INT(survivors_mark_saved(out, "time=T hosts=n2 epoch=0 step=3 writer=0 next=in-process "
				       "members=0,1 member_hosts=n1,n1 who=ranks 2,3 (host n2)"), 0);
	CHECK_INT(survivors_wait_saved(out, 0.2, 10), 0);
	CHECK_INT(survivors_read_held(out, &s), 1);
	CHECK_STR(s.next, "in-process");
	CHECK_INT(survivors_mark_finished(out), 0);
	fence_hold(NULL, 0);
	CHECK_INT(survivors_reset(out), 0);
	CHECK_INT(survivors_wait_saved(out, 0.2, 10), -1);
	char *rec = test_path(out, ".generations/3.saved"), *text = test_read_file(rec, NULL);
	CHECK_MSG(text && strstr(text, " next=relaunch "), "%s: %s", rec, text ? text : "missing");
	free(text);
	free(rec);
	rec = test_path(out, ".generations/4.finished");
	text = test_read_file(rec, NULL);
	CHECK_STR(text, "finished\n");
	free(text);
	free(rec);
	free(out);
}

/* Members 0 and 1 of 2 prepare at once, each in its own process; the
 * world each would start (rank, size, coordinator, secret file,
 * generation, and whether PMIx's variables are still there: the
 * environment is left alone) comes back in env[i]. */
static void rejoin_both(const char *out, long generation, char env[2][1024])
{
	int fds[2][2];
	pid_t pids[2];
	for (int i = 0; i < 2; i++) {
		if (pipe(fds[i]) != 0 || (pids[i] = fork()) < 0)
			abort();
		if (pids[i] == 0) {
			char line[1024] = "failed";
			long g = generation;
			setenv("PMIX_NAMESPACE", "slurm.pmix.1.0", 1);
			struct rejoin_terms terms = { g, 2, 3, 6 };
			struct dist_world w;
			if (rejoin_prepare(out, i, &terms, &w) == 0)
				snprintf(line, sizeof(line), "%d %d %s %s %ld %s", w.rank, w.size,
					 w.coordinator, w.secret_file, g,
					 getenv("PMIX_NAMESPACE") ? "pmix" : "-");
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

/* The coordinator publishes the decided generation's world: a port on
 * its own address and a private secret; the other member reads the same;
 * neither touches the environment. The next world has the next
 * generation (an older world file is waited past); a world file that is
 * not one is refused.
 */
static void test_ranks_left_form_a_world_of_their_own(void)
{
	char *out = test_path(test_tmpdir(), "run");
	char *dir = test_path(test_tmpdir(), "run/.survivors");
	char env[2][1024], secret[4400], coordinator[256];
	CHECK_INT(mkdir(out, 0755), 0);
	CHECK_INT(mkdir(dir, 0755), 0);
	rejoin_both(out, 1, env);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	unsigned port = 0;
	long g = -1;
	CHECK_MSG(sscanf(env[0], "0 2 %255s %*s %ld pmix", coordinator, &g) == 2 && g == 1 &&
		  strchr(coordinator, ':') && sscanf(strchr(coordinator, ':') + 1, "%u", &port) == 1 &&
		  port > 0 && port < 65536 && strstr(env[0], secret), "coordinator: %s", env[0]);
	CHECK_MSG(!strncmp(coordinator, "0.0.0.0:", 8), "the coordinator listens on every "
		  "address: %s", coordinator);
	char want[1200];   /* the other member, on the same host: loopback */
	snprintf(want, sizeof(want), "1 2 127.0.0.1:%u %s 1 pmix", port, secret);
	CHECK_STR(env[1], want);
	struct stat st;
	CHECK_MSG(stat(secret, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 65,
		  "secret: mode %o, %ld bytes", (unsigned)(st.st_mode & 0777), (long)st.st_size);
	char world[4400];
	snprintf(world, sizeof(world), "%s/world", dir);
	rejoin_both(out, 2, env);
	CHECK_MSG(strstr(env[0], " 2 pmix") && strstr(env[1], " 2 pmix"), "second world: %s | %s", env[0],
		  env[1]);
	struct rejoin_terms terms = { 0 }, first = { 1, 2, 3, 6 }, third = { 3, 2, 3, 6 };
	CHECK_INT(rejoin_read_terms(out, 2, &terms), 0);   /* a spare's view of the second */
	CHECK_MSG(terms.generation == 2 && terms.size == 2 && terms.accumulate == 3 &&
		  terms.target == 6, "terms: %ld %d %ld %ld", terms.generation, terms.size,
		  terms.accumulate, terms.target);
	CHECK_INT(rejoin_read_terms(out, 1, &terms), -1);  /* generation 2 replaced it */
	terms.accumulate = 2;   /* a member that computed another K */
	struct dist_world w;
	CHECK_INT(rejoin_prepare(out, 1, &terms, &w), -1);
	FILE *f = fopen(world, "w");
	fputs("3 0 10.0.0.1/24 n1 2 3 6\n", f);   /* port 0 */
	fclose(f);
	CHECK_INT(rejoin_prepare(out, 1, &third, &w), -1);
	/* a member of generation 1 too late for its world: the others went on
	 * without it (generation 3's world is there), said by its caller */
	CHECK_INT(rejoin_prepare(out, 1, &first, &w), 1);
	free(dir);
	free(out);
}

/* A member on another host takes the coordinator's address on a network
 * of its own that is not its own: a bridge with one address on every
 * node (docker0's 172.17.0.1/16), listed first, leads nowhere else. */
static void test_a_member_reaches_the_coordinator_not_itself(void)
{
	static const struct { const char *listed, *from, *mine, *want; } cases[] = {
		{ "172.17.0.1/16,198.18.5.11/24,127.0.0.1/8", "n2",
		  "172.17.0.1/16,198.18.5.12/24,127.0.0.1/8", "198.18.5.11" },
		{ "10.0.0.1/24,192.168.1.1/24", "n2", "192.168.1.7/24", "192.168.1.1" },
		{ "172.17.0.1/16,198.18.5.11/24", "n1", "172.17.0.1/16,198.18.5.11/24", "127.0.0.1" },
		{ "172.17.0.1/16,127.0.0.1/8", "n2", "172.17.0.1/16,198.18.5.12/24,127.0.0.1/8", NULL },
		{ "10.1.0.1/16", "n2", "10.2.0.1/16", NULL },
	};
	char got[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = rejoin_pick(cases[i].listed, "n1", cases[i].from, cases[i].mine, got,
				     sizeof(got));
		if (cases[i].want)
			CHECK_MSG(rc == 0 && !strcmp(got, cases[i].want), "%s from %s (%s): %d %s, "
				  "want %s", cases[i].listed, cases[i].from, cases[i].mine, rc,
				  rc ? "" : got, cases[i].want);
		else
			CHECK_MSG(rc == -1, "%s from %s (%s): %d %s, want none", cases[i].listed,
				  cases[i].from, cases[i].mine, rc, rc ? "" : got);
	}
}

const struct test_case survivors_tests[] = {
	{ "lost_peers_are_named_by_host", test_lost_peers_are_named_by_host },
	{ "members_that_never_joined_are_named", test_members_that_never_joined_are_named },
	{ "survivors_agree_on_the_most_completed_steps", test_survivors_agree_on_the_most_completed_steps },
	{ "a_late_survivor_is_left_out_not_a_second_writer",
	  test_a_late_survivor_is_left_out_not_a_second_writer },
	{ "a_partition_has_one_decision", test_a_partition_has_one_decision },
	{ "the_half_without_rank_0_goes_on_after_its_wait",
	  test_the_half_without_rank_0_goes_on_after_its_wait },
	{ "a_silent_leader_is_replaced", test_a_silent_leader_is_replaced },
	{ "an_older_generation_appends_no_metrics", test_an_older_generation_appends_no_metrics },
	{ "a_duplicate_joiner_is_refused_alone", test_a_duplicate_joiner_is_refused_alone },
	{ "the_writer_is_waited_for_by_its_beat", test_the_writer_is_waited_for_by_its_beat },
	{ "an_older_generation_writes_nothing", test_an_older_generation_writes_nothing },
	{ "a_frozen_rename_of_an_older_generation_fails",
	  test_a_frozen_rename_of_an_older_generation_fails },
	{ "saved_summary_is_read_back_or_refused", test_saved_summary_is_read_back_or_refused },
	{ "ranks_left_form_a_world_of_their_own", test_ranks_left_form_a_world_of_their_own },
	{ "a_member_reaches_the_coordinator_not_itself",
	  test_a_member_reaches_the_coordinator_not_itself },
	{ 0 }
};
