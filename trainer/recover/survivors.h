/* recover/survivors.h - after a lost peer (train/peer_lost.h) the ranks left
 * make one decision, through the run folder: which of them writes
 * OUT/last and which go on. Each survivor reports its completed optimizer
 * steps and host in OUT/.survivors/RANK. The leader, the lowest rank the
 * runtime did not name lost, waits up to SURVIVORS_WAIT_S for every
 * other survivor's report, then decides: the writer (most completed
 * steps, the lowest rank on a tie) and the members (the survivors that
 * reported; never a rank named lost, so in a partition each half counts
 * only itself). A view of the survivors that holds neither more than half
 * of the world nor half with rank 0 decides SURVIVORS_WAIT_S later, so a
 * partition's other half (the majority, or rank 0's) claims first and
 * goes on; when that half is really gone, this one goes on after the
 * wait. The decision is claimed as the run's next generation
 * (base/fence.h): exactly one exists, whoever claims first, and a rank
 * that holds an older generation can no longer write into OUT. The
 * others wait for it; one that sees none within SURVIVORS_WAIT_S plus
 * SURVIVORS_STAGGER_S per rank before it (a leader that died too)
 * decides in its place. A survivor that reports late, or sits in the
 * other half of a partition, reads the decision and is not a member: it
 * leaves OUT alone. A step is complete on a rank once its averaged
 * gradients reached it, so the survivors' parameters and moments are
 * what every rank would hold; they differ by one step at most.
 * Needs --out on a file system every node sees, as --resume does.
 * What it does not do: write the checkpoint (recover/lost_peer.c), or talk
 * to the runtime (its collectives have all failed by then).
 */
#ifndef HVD_TRAINER_RECOVER_SURVIVORS_H
#define HVD_TRAINER_RECOVER_SURVIVORS_H

#include <stddef.h>

#include "train/peer_lost.h"

#define SURVIVORS_WAIT_S 3.0
#define SURVIVORS_STAGGER_S 2.0
#define SURVIVORS_SAVE_WAIT_S 120.0   /* the least limit (recover/writer_beat.h) */
#define SURVIVORS_SILENT_S 60.0       /* a writer's beat unchanged this long: lost */

/* Rank 0 at start-up, before the first collective: no stale marker. */
int survivors_reset(const char *out);
/* The decision: its generation, the writer and its completed steps, the
 * members (ascending) and their hosts. */
struct survivors_vote {
	long generation;
	int writer;
	long steps;
	int count;
	int ranks[SURVIVORS_MAX]; /* the members, ascending */
	char hosts[1024];    /* their hosts, in the same order: "n1,n1" */
};
/* ranks[0..count) as the records and lines write them, "0,1": 0, or -1
 * when they do not fit in len (never cut short). */
int survivors_ranks_text(const int *ranks, int count, char *text, size_t len);
/* This rank's report, then the decision of generation held + 1 (made
 * here when this rank leads, or its leader is silent): 0 with *v filled
 * when this rank is a member, 1 when it is not (it must leave OUT alone),
 * -1 (a line). lost: the ranks the runtime named lost. */
int survivors_decide(const char *out, long held, int rank, const char *host, int world,
		     const int *lost, int lost_count, long completed, struct survivors_vote *v);
/* The writer, once OUT/last is on disk: `summary` (one line) in saved,
 * and in OUT/.generations/G.saved (G: the decision's generation), which
 * stays: contrib/chexnet-elastic reads it there whenever it looks. */
int survivors_mark_saved(const char *out, const char *summary);
/* New rank 0 of the ranks that went on in-process, once the run ended
 * well: OUT/.survivors/finished and OUT/.generations/G.finished (G: its
 * session's generation; contrib/chexnet-elastic ends srun, which waits
 * only for the lost node's tasks by then). */
int survivors_mark_finished(const char *out);
/* The others: 0 once the summary of the generation this process holds
 * exists (OUT/.generations/G.saved; saved when it holds none); -1 (a
 * line) when the writer's beat (recover/writer_beat.h) did not change for
 * silent_s (or never came), or after limit_s. */
int survivors_wait_saved(const char *out, double limit_s, double silent_s);

/* What dir's OUT/.survivors/saved says (train/peer_lost.h): 1 with *s
 * filled, 0 when dir has no saved file, -1 (a line) when it cannot be
 * read as one. */
int survivors_read_saved(const char *dir, struct survivors_saved *s);
/* As survivors_read_saved, for the summary survivors_wait_saved waits
 * for: that of the generation this process holds. */
int survivors_read_held(const char *out, struct survivors_saved *s);
/* The same from generation g's record, OUT/.generations/G.saved. */
int survivors_read_record(const char *out, long g, struct survivors_saved *s);
/* The accumulation K' for `size` ranks that keeps `want` micro-batches
 * per step (the run's R x K: *exact = 1), or when no integer does, the
 * nearest (ties: the larger; at least 1; *exact = 0). */
long survivors_accumulate(long want, int size, int *exact);
/* old_rank's place among s->members (*rank) and their number (*size): 0,
 * or -1 when it is not one of them. */
int survivors_member(const struct survivors_saved *s, int old_rank, int *rank, int *size);

#endif
