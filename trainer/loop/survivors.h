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
/* Leaves this rank's marker, waits, reads every marker there is. 0 with
 * *writer (a rank) and *steps (its completed steps), or -1 (a line). */
int survivors_choose(const char *out, int rank, int expected, long completed, int *writer,
		     long *steps);
/* The writer, once OUT/last is on disk: `summary` (one line) in saved. */
int survivors_mark_saved(const char *out, const char *summary);
/* The others: 0 once saved exists, -1 (a line) after `timeout_s`. */
int survivors_wait_saved(const char *out, double timeout_s);

/* What OUT/.survivors/saved says (the writer's summary, key=value words,
 * `who=` last: "time=T hosts=n2 ranks=4 accumulate=1 epoch=0 step=3
 * writer=0 who=ranks 2,3 (host n2)"). */
struct survivors_saved {
	char time[32], hosts[1024], who[1024];
	int ranks, accumulate, epoch;
	long step;
};
/* 1 with *s filled, 0 when dir has no saved file, -1 (a line) when it
 * cannot be read as one. */
int survivors_read_saved(const char *dir, struct survivors_saved *s);

#endif
