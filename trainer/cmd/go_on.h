/* cmd/go_on.h - the settings of the next session of a run after a lost
 * peer, in the same process: a member of the ranks left going on under
 * --shrink (the survivors' summary says `next=in-process` and names it),
 * or a spare node's rank joining their world (--join G, started by
 * contrib/chexnet-elastic). Either continues in OUT from OUT/last with
 * the run's own settings, whatever the run started with (--init,
 * --overwrite), and the run's first global batch where an integer
 * --accumulate allows, else the nearest (ties: the larger;
 * --allow-changes, recorded).
 * What it does not do: run the session (cmd/train.c) or decide who goes
 * on (recover/survivors.h).
 */
#ifndef HVD_TRAINER_CMD_GO_ON_H
#define HVD_TRAINER_CMD_GO_ON_H

#include "recover/survivors.h"
#include "train/dist.h"
#include "train/settings.h"

/* Where a session of the ranks left starts from: its place among them
 * and the summary that made it (the first session: none), and whether
 * its world formed. */
struct rejoined {
	int rank, size;
	struct survivors_saved saved;
	int formed;
	struct dist_world world;   /* the next session's (size 0: the launch's) */
};

/* go_on_in_process: the ranks left formed a newer world without this
 * member (it came too late); the process ends with status 0, so that
 * neither srun nor contrib/chexnet-elastic counts it as a failure. */
#define GO_ON_WITHOUT_IT (-1)

/* --relaunch: the command line that started the run in --out, given
 * again (by contrib/chexnet-elastic after a lost node): next continues
 * the run there (--resume) with the --accumulate its record keeps to for
 * the ranks this launch has (cmd/resume_defaults.h), a spare's --join
 * kept. 0, or 2 (a line). */
int go_on_relaunch(const struct settings *given, struct settings *next);
/* A member: leave the broken runtime, join the ranks left (and the
 * spares' ranks the summary names; run->train.spares less their nodes) and
 * set next. *target: micro-batches per step the run keeps to (0: not
 * known yet; R x K of the session that lost the peer). 0, or
 * CHEXNET_EXIT_PEER_LOST when this process does not go on, or
 * GO_ON_WITHOUT_IT (one line said). */
int go_on_in_process(const struct settings *run, long *target, struct rejoined *r,
		     struct settings *next);
/* A spare's rank (--join G --resume OUT): the world of generation G
 * takes it as rank M + SLURM_PROCID (M: the members the summary
 * OUT/.generations/G.saved names); next and *target from that world's
 * terms. Its place is claimed once (OUT/.generations/G.join-INDEX): a
 * second joiner for it is refused alone, before the world sees it. 0, or
 * 2 (usage), or 1 (a line) when it cannot join. */
int go_on_join(const struct settings *given, long *target, struct rejoined *r,
	       struct settings *next);

#endif
