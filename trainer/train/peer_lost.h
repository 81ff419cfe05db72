/* train/peer_lost.h - which peers a runtime failure line says were lost:
 * the ranks and hosts named when a peer's process died or left
 * (`'control connection closed'`, `cannot send`) or went silent
 * (`'silent for ...`: stopped, hung, its node or network lost), in the
 * forms runtime/README.md lists:
 *   hvd: ranks 2,3 (host n2), rank 5 (host n3): 'silent for 4.1 s': ...
 * What it is not: any other failure (a tensor mismatch, a rank's own
 * error, a stall of live ranks): peer_lost_parse says 0 for those.
 */
#ifndef HVD_TRAINER_PEER_LOST_H
#define HVD_TRAINER_PEER_LOST_H

#include <stddef.h>

#define PEER_LOST_MAX 256
/* A peer was lost, the survivors wrote OUT/last: go on without its host
 * (--resume). EX_PROTOCOL in sysexits.h; 75 is a stop, see stop_signal.h. */
#define CHEXNET_EXIT_PEER_LOST 76

struct peer_lost {
	int count;                  /* ranks named */
	int ranks[PEER_LOST_MAX];
	char hosts[1024];           /* "n2,n3": each host once, in the line's order */
	char who[1024];             /* "ranks 2,3 (host n2)", as the line says it */
};

/* 1 when `line` names lost peers (out filled), 0 otherwise. */
int peer_lost_parse(const char *line, struct peer_lost *out);
/* 1 when `line` says a world without a scheduler did not form because
 * ranks never joined (rank 0 and the workers it told: "...; missing:
 * rank 2 (?) rank 3 (?)"; a worker rank 0 never answered: rank 0), with
 * out->ranks filled (hosts and who left empty: the runtime knew none);
 * 0 otherwise. */
int peer_lost_at_start(const char *line, struct peer_lost *out);
/* out's ranks named by their hosts, rank r's the r-th of hosts_by_rank
 * ("n1,n1,n2"; "?" past its end): who and hosts as peer_lost_parse
 * fills them ("rank 2 (host n2)"; "n2"). */
void peer_lost_name_hosts(struct peer_lost *out, const char *hosts_by_rank);
/* 1 when host (len bytes) is one of l->hosts. */
int peer_lost_has_host(const struct peer_lost *l, const char *host, size_t len);

#endif
