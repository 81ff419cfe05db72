/* recover/rejoin.h - after a lost peer the ranks left form a world of their
 * own in the same processes (no new srun step): the lowest of them
 * publishes a coordinator (its IPv4 addresses, its host name and a free
 * port; it listens on every address) and a fresh job secret in the run
 * folder, OUT/.survivors/world and
 * OUT/.survivors/secret (mode 0600, on the file system every node sees,
 * as --resume needs anyway); every member then starts the runtime in the
 * world those name (dist_init_world: its place among the members, their
 * count, the coordinator's address on a network this host is on, the
 * secret file): a launch without a scheduler, the TCP ring among the
 * members. The environment is left as it is.
 * Each such world is the generation the survivors' decision claimed
 * (base/fence.h): the world file names it, with the world's size, its
 * --accumulate and the micro-batches per step the run keeps to, and a
 * member waits past one of an older generation. A spare node's ranks
 * (chexnet train --join G) read those terms and join as its last ranks.
 * What it does not do: choose the members (recover/survivors.h), start the
 * runtime, or move the training state (the members resume from OUT/last).
 */
#ifndef HVD_TRAINER_RECOVER_REJOIN_H
#define HVD_TRAINER_RECOVER_REJOIN_H

#include <stddef.h>

#include "train/dist.h"

/* How long a member waits for the coordinator's world file: above an NFS
 * client's longest default attribute-cache time (acdirmax, 60 s), which
 * may hide a new file from a lookup that does not revalidate, plus the
 * new rank 0's own start (releasing the runtime, writing the file). */
#define REJOIN_WAIT_S 90.0

/* The terms of a world of the ranks left. */
struct rejoin_terms {
	long generation;
	int size;
	long accumulate;            /* --accumulate K of its session */
	long target;                /* micro-batches per step the run keeps to */
};

/* Member new_rank of the world of terms (rank 0 publishes them): 0 with
 * *world filled; 1 (silent) when a newer generation's world replaced it
 * (this member came too late: the others went on without it); -1 (a
 * line) when the coordinator's files did not appear within
 * REJOIN_WAIT_S, cannot be written or read, or name other terms. */
int rejoin_prepare(const char *out, int new_rank, const struct rejoin_terms *terms,
		   struct dist_world *world);
/* A spare's view: the terms of generation g's world once its file
 * exists (within REJOIN_WAIT_S); 0, or -1 (a line: none, or the world
 * already replaced by a newer generation's). */
int rejoin_read_terms(const char *out, long g, struct rejoin_terms *terms);

/* The coordinator's address for a member on host, whose own addresses
 * are mine ("ip/prefix,..."): loopback when coordinator_host is host;
 * else the first of listed (the coordinator's, "ip/prefix,...") on a
 * network of mine's that is not one of mine's own addresses (a bridge
 * such as docker0, one address on every node, leads a host to itself).
 * 0 with out set, -1 when none is. */
int rejoin_pick(const char *listed, const char *coordinator_host, const char *host,
		const char *mine, char *out, size_t len);

#endif
