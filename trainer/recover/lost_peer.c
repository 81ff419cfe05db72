/* recover/lost_peer.c - training or validation broken by a lost peer
 * (train/peer_lost.h): the ranks left make one decision (which of them
 * writes OUT/last at the most completed steps, who goes on:
 * recover/survivors.h); the writer writes OUT/last and run.json's end under
 * the decision's generation, then the summary the others and the driver
 * read; each exits CHEXNET_EXIT_PEER_LOST (cmd/train.c goes on in-process
 * when the summary says so). A rank the decision leaves out, or of an
 * older generation (a hung node woken after the others went on), leaves
 * OUT alone.
 * What it does not do: notice the loss (the runtime), or go on (cmd/).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fence.h"
#include "recover/lost_peer.h"
#include "loop/run_dir.h"
#include "loop/trainer.h"
#include "recover/writer_beat.h"
#include "train/peer_lost.h"
#include "train/stop_signal.h"

/* v's members as the records and lines write them, "0,1" (they fit:
 * the decision's text held them). */
static const char *members_of(const struct survivors_vote *v, char *text, size_t len)
{
	return survivors_ranks_text(v->ranks, v->count, text, len) ? "?" : text;
}

/* What the survivors do next: go on in their own processes (--shrink,
 * and no survivor on a lost rank's host: a lost rank on a live host is a
 * crashed or hung process, whose node the driver gives back; NCCL's
 * communicator is then shrunk, runtime/transport/comm_nccl.c), or exit
 * 76 for a relaunch. */
static const char *next_of(int shrink, const struct peer_lost *lost,
			   const struct survivors_vote *v)
{
	if (!shrink)
		return "relaunch";
	for (const char *h = v->hosts; *h; h += strcspn(h, ",") + (h[strcspn(h, ",")] != '\0'))
		if (peer_lost_has_host(lost, h, strcspn(h, ",")))
			return "relaunch";
	return "in-process";
}

/* The ranks of spare nodes that join in the lost ones' places: all the
 * lost ranks while spares are left for every lost host (in-process
 * only), else none. */
static int joiners_of(long spares, const struct peer_lost *lost, const char *next, int *nodes)
{
	*nodes = 1;
	for (const char *h = lost->hosts; *h; h++)
		*nodes += *h == ',';
	return !strcmp(next, "in-process") && lost->hosts[0] && spares >= *nodes ? lost->count : 0;
}

/* The summary the others and the driver read (survivors.h). */
static int mark_saved(const char *out, const struct peer_lost *lost,
		      const struct survivors_vote *v, int epoch, long step, int writer,
		      const char *next, int joiners, int nodes)
{
	char saved[8192], when[32], join[64] = "", members[4096];
	time_t now = time(NULL);
	struct tm tm;

	if (joiners)
		snprintf(join, sizeof(join), " joiners=%d join_nodes=%d", joiners, nodes);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	snprintf(saved, sizeof(saved), "time=%s hosts=%s epoch=%d step=%ld writer=%d next=%s "
		 "members=%s member_hosts=%s%s who=%s", when, lost->hosts[0] ? lost->hosts : "?",
		 epoch, step, writer, next, members_of(v, members, sizeof(members)), v->hosts, join,
		 lost->who);
	return survivors_mark_saved(out, saved);
}

/* The chosen survivor: OUT/last at its completed step (the next
 * epoch's start, validation first, when the epoch's steps were all done),
 * run.json's end, then OUT/.survivors/saved. */
static int write_for_survivors(struct trainer *t, const struct peer_lost *lost,
			       const struct survivors_vote *v)
{
	char line[2048], members[4096];

	if (t->state.step == t->steps_per_epoch) {
		t->state.epoch++;
		t->state.step = 0;
		t->state.validate_first = 1;
	}
	if (trainer_state_to_host(t) || trainer_finite(t) || trainer_save_here(t, "last"))  /* its own BN statistics */
		return -1;
	snprintf(line, sizeof(line), "peer lost: %s: OUT/last holds epoch %d, step %ld (written by "
		 "rank %d of %d): no completed step is lost", lost->who, t->state.epoch + 1,
		 t->state.step, t->rank, t->world);
	if (t->recorded && run_dir_end(&t->c, CHEXNET_EXIT_PEER_LOST, 0, line,
				       t->state.epoch * t->steps_per_epoch + t->state.step,
				       t->best_epoch, t->state.best_val_loss))
		return -1;
	const char *next = next_of(t->c.shrink, lost, v);
	int nodes, joiners = joiners_of(t->c.spares, lost, next, &nodes);
	if (mark_saved(t->c.out, lost, v, t->state.epoch, t->state.step, t->rank, next, joiners,
		       nodes))
		return -1;
	if (!strcmp(next, "relaunch"))
		fprintf(stderr, "chexnet: %s; exit %d: go on without host(s) %s (--resume %s)\n", line,
			CHEXNET_EXIT_PEER_LOST, lost->hosts, t->c.out);
	else if (joiners)
		fprintf(stderr, "chexnet: %s; ranks %s go on in their own processes, %d rank(s) of "
			"%d spare node(s) join in the place of host(s) %s\n", line,
			members_of(v, members, sizeof(members)), joiners,
			nodes, lost->hosts);
	else
		fprintf(stderr, "chexnet: %s; ranks %s go on without host(s) %s in their own "
			"processes\n", line, members_of(v, members, sizeof(members)), lost->hosts);
	return 0;
}

/* A rank the run went on without under --shrink leaves OUT alone and
 * waits for the step to end: to exit would end the step, the members'
 * too (a task that leaves without PMIx_Finalize on a live node,
 * docs/lost-rank.md). 1 once a stop signal came. */
static int wait_for_the_step_end(void)
{
	dist_release();
	while (!stop_signal_received())
		pause();
	return 1;
}

/* --shrink: a newer generation in OUT/.generations (a hung node woken). */
static int superseded(struct trainer *t, long now)
{
	const char *why = dist_error();
	fprintf(stderr, "chexnet: train: rank %d of %d: the run went on without it (generation %ld, "
		"this rank's %ld)%s%s; OUT/last left alone, waiting for the step to end\n", t->rank,
		t->world, now, fence_held(), why[0] ? ": " : "", why);
	return wait_for_the_step_end();
}

/* The survivors' decision v leaves this rank out (it reported late, or
 * sits in the other half of a partition): it writes nothing, and under
 * --shrink it waits for the step's end; else it exits as every survivor
 * does. */
static int left_out(int shrink, int rank, int size, const struct survivors_vote *v)
{
	char members[4096];
	fprintf(stderr, "chexnet: train: rank %d of %d: the survivors' decision (generation %ld: "
		"ranks %s go on) leaves this rank out: OUT left alone%s\n", rank, size, v->generation,
		members_of(v, members, sizeof(members)), shrink ? ", waiting for the step to end" : "");
	return shrink ? wait_for_the_step_end() : CHEXNET_EXIT_PEER_LOST;
}

/* Training or validation broken by a lost peer (train/peer_lost.h): the
 * survivors' one decision (recover/survivors.h) names the writer of OUT/last
 * and the members, who hold its generation; a rank it leaves out writes
 * nothing. Every survivor exits CHEXNET_EXIT_PEER_LOST. Any other
 * failure: 1. */
int trainer_survive_lost_peer(struct trainer *t)
{
	struct peer_lost lost;
	struct survivors_vote v;
	long done = t->state.epoch * t->steps_per_epoch + t->state.step, now;

	if (t->c.shrink && t->c.out && (now = fence_newest(t->c.out)) > fence_held())
		return superseded(t, now);
	int how = dist_lost(&lost);
	if (t->world < 2 || !t->c.out || how == PEER_LOST_NONE || how == PEER_LOST_NEVER_JOINED ||
	    lost.count >= t->world)
		return 1;
	int rc = survivors_decide(t->c.out, fence_held(), t->rank, dist_hostname(), t->world,
				  lost.ranks, lost.count, done, &v);
	if (rc < 0)
		return 1;
	if (rc == 1)
		return left_out(t->c.shrink, t->rank, t->world, &v);
	fence_hold(t->c.out, v.generation);
	if (v.writer == t->rank) {
		if (writer_beat_start(t->c.out, v.generation, t->rank, dist_hostname(), WRITER_BEAT_S)) {
			fprintf(stderr, "chexnet: survivors: '%s/%s/%ld.writing': cannot begin: %s\n",
				t->c.out, FENCE_DIR, v.generation, strerror(errno));
			return 1;
		}
		int failed = write_for_survivors(t, &lost, &v);
		writer_beat_stop();
		return failed ? 1 : CHEXNET_EXIT_PEER_LOST;
	}
	double bytes = 3.0 * sizeof(float) * (double)t->s.model.desc.param_count;  /* weights, Adam's moments */
	return survivors_wait_saved(t->c.out, writer_wait_limit_s(bytes), SURVIVORS_SILENT_S) ? 1
		: CHEXNET_EXIT_PEER_LOST;
}

int survivors_after_failed_start(const char *out, int shrink, int rank, int size,
				 const struct survivors_saved *before)
{
	struct peer_lost lost;
	struct survivors_vote v;
	char host[256] = "host", members[4096];

	if (dist_lost(&lost) != PEER_LOST_NEVER_JOINED || lost.count >= size)
		return 1;
	peer_lost_name_hosts(&lost, before->member_hosts);
	gethostname(host, sizeof(host) - 1);
	int rc = survivors_decide(out, fence_held(), rank, host, size, lost.ranks, lost.count, 0, &v);
	if (rc < 0)
		return 1;
	if (rc == 1)
		return left_out(shrink, rank, size, &v);
	fence_hold(out, v.generation);
	if (v.writer != rank)
		return survivors_wait_saved(out, writer_wait_limit_s(0), SURVIVORS_SILENT_S) ? 1
			: CHEXNET_EXIT_PEER_LOST;
	const char *next = next_of(shrink, &lost, &v);
	if (mark_saved(out, &lost, &v, before->epoch, before->step, rank, next, 0, 0))
		return 1;
	fprintf(stderr, "chexnet: train: the ranks left could not start again: %s never joined; "
		"OUT/last holds epoch %d, step %ld; ranks %s %s\n", lost.who, before->epoch + 1,
		before->step, members_of(&v, members, sizeof(members)), strcmp(next, "relaunch") ? "go on in their own processes"
		: "exit for a relaunch");
	return CHEXNET_EXIT_PEER_LOST;
}
