/* train/peer_lost.h - which peers a failure lost: as the runtime says
 * it (struct peer_lost: dist_lost, from hvd_lost_ranks, in the trainer's
 * words, with the line that names them, "ranks 2,3 (host n2), rank 5
 * (host n3)"), and as the survivors' summary records it and what they
 * did (struct survivors_saved: read at --resume by the loop). Nothing
 * here reads the runtime's messages.
 * What it is not: a decision about what to do, or the summary's reader
 * and writer (recover/survivors.h).
 */
#ifndef HVD_TRAINER_PEER_LOST_H
#define HVD_TRAINER_PEER_LOST_H

#include <stddef.h>

#define PEER_LOST_MAX 256
/* A peer was lost, the survivors wrote OUT/last: go on without its host
 * (--resume). EX_PROTOCOL in sysexits.h; 75 is a stop, see stop_signal.h. */
#define CHEXNET_EXIT_PEER_LOST 76

enum peer_lost_how {
	PEER_LOST_NONE = 0,      /* the failure lost no peer */
	PEER_LOST_EXITED,        /* its process ended (killed, crashed) */
	PEER_LOST_SILENT,        /* stopped, hung, or its node or network lost */
	PEER_LOST_UNREACHABLE,   /* this rank could not send to it */
	PEER_LOST_NEVER_JOINED,  /* a world did not form: it never joined */
};

struct peer_lost {
	int how;                    /* enum peer_lost_how */
	int count;                  /* ranks named */
	int ranks[PEER_LOST_MAX];   /* ascending */
	char hosts[1024];           /* "n2,n3": each known host once, in rank order */
	char who[1024];             /* "ranks 2,3 (host n2)" ("?" for a host not known) */
};

#define SURVIVORS_DIR ".survivors"
/* The most members one decision or summary holds. */
#define SURVIVORS_MAX 512

/* What OUT/.survivors/saved says (the writer's summary, key=value words,
 * `who=` last: "time=T hosts=n2 epoch=0 step=3 writer=0 next=in-process
 * members=0,1 member_hosts=n1,n1 who=ranks 2,3 (host n2)"). Membership
 * only: the settings of the session that lost the peer (its ranks, its
 * --accumulate) are those the checkpoint in OUT/last records.
 * next: `in-process` (the members go on in their own processes,
 * recover/rejoin.h) or `relaunch` (every survivor exits 76). With
 * `joiners=J join_nodes=N` (in-process only, before `who=`), J ranks on
 * N spare nodes join the members' world as its last ranks (chexnet train
 * --join G, started by contrib/chexnet-elastic). */
struct survivors_saved {
	char time[32], hosts[1024], who[1024], next[16], member_hosts[1024];
	int members[SURVIVORS_MAX], member_count;   /* ascending */
	int epoch;
	long step;
	int joiners, join_nodes;
};
/* out's who and hosts from its ranks' hosts (hosts[i] for ranks[i], ""
 * when not known): the ranks of one host named together. */
void peer_lost_name(struct peer_lost *out, const char *const *hosts);
/* out's ranks named by their hosts, rank r's the r-th of hosts_by_rank
 * ("n1,n1,n2"; "?" past its end): who as "rank 2 (host n2), rank 3 (host
 * ?)", one rank at a time, and hosts. */
void peer_lost_name_hosts(struct peer_lost *out, const char *hosts_by_rank);
/* 1 when host (len bytes) is one of l->hosts. */
int peer_lost_has_host(const struct peer_lost *l, const char *host, size_t len);

#endif
