/* loop/survivors.h - after a lost peer (train/peer_lost.h) the ranks left
 * agree, through files in the run folder, which of them writes OUT/last:
 * each survivor leaves OUT/.survivors/RANK holding its completed optimizer
 * steps and waits up to SURVIVORS_WAIT_S for every expected survivor's;
 * the one with the most completed steps writes (the lowest rank of those
 * on a tie). A step is complete on a rank once its averaged gradients
 * reached it: every rank, the lost ones too, had contributed to them, so
 * its parameters and moments are what every rank would hold. Survivors
 * can differ by one step at most (the one whose exchange broke). The
 * others then wait for OUT/.survivors/saved before they leave (a rank
 * that leaves ends the step).
 * Needs --out on a file system every node sees, as --resume does.
 * What it does not do: write the checkpoint (loop/train.c), or talk to
 * the runtime (its collectives have all failed by then).
 */
#ifndef HVD_TRAINER_LOOP_SURVIVORS_H
#define HVD_TRAINER_LOOP_SURVIVORS_H

#define SURVIVORS_DIR ".survivors"
#define SURVIVORS_WAIT_S 3.0
#define SURVIVORS_SAVE_WAIT_S 120.0

/* Rank 0 at start-up, before the first collective: no stale marker. */
int survivors_reset(const char *out);
/* What the markers said: the writer (most completed steps, lowest rank
 * on a tie) and every survivor that left one, with its host. */
struct survivors_vote {
	int writer;
	long steps;
	int count;
	char ranks[1024];    /* "0,1": ascending */
	char hosts[1024];    /* their hosts, in the same order: "n1,n1" */
};
/* Leaves this rank's marker (completed steps and host), waits, reads every
 * marker there is. 0 with *v filled, or -1 (a line). */
int survivors_choose(const char *out, int rank, const char *host, int expected, long completed,
		     struct survivors_vote *v);
/* The writer, once OUT/last is on disk: `summary` (one line) in saved. */
int survivors_mark_saved(const char *out, const char *summary);
/* New rank 0 of the ranks that went on in-process, once the run ended
 * well: OUT/.survivors/finished (contrib/chexnet-elastic ends srun, which
 * waits only for the lost node's tasks by then). */
int survivors_mark_finished(const char *out);
/* The others: 0 once saved exists, -1 (a line) after `timeout_s`. */
int survivors_wait_saved(const char *out, double timeout_s);

/* What OUT/.survivors/saved says (the writer's summary, key=value words,
 * `who=` last: "time=T hosts=n2 ranks=4 accumulate=1 epoch=0 step=3
 * writer=0 next=in-process members=0,1 who=ranks 2,3 (host n2)").
 * next: `in-process` (the members go on in their own processes,
 * train/rejoin.h) or `relaunch` (every survivor exits 76). */
struct survivors_saved {
	char time[32], hosts[1024], who[1024], next[16], members[1024];
	int ranks, accumulate, epoch;
	long step;
};
/* 1 with *s filled, 0 when dir has no saved file, -1 (a line) when it
 * cannot be read as one. */
int survivors_read_saved(const char *dir, struct survivors_saved *s);
/* The accumulation K' for `size` ranks that keeps the global batch of
 * s->ranks x s->accumulate micro-batches (*exact = 1), or when no integer
 * does, the nearest (ties: the larger; at least 1; *exact = 0). */
long survivors_accumulate(const struct survivors_saved *s, int size, int *exact);
/* old_rank's place among s->members (*rank) and their number (*size): 0,
 * or -1 when it is not one of them. */
int survivors_member(const struct survivors_saved *s, int old_rank, int *rank, int *size);

#endif
