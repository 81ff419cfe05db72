/* vote/vote.h - the coordination plane: how the engines' votes on
 * the plan cache (engine/agree.c: an elementwise MIN over the ranks of a
 * few int64s) travel, chosen apart from the data backend that reduces
 * the tensors, so a job on NCCL agrees repeated steps among its engines
 * as one on MPI or TCP does:
 *   shared memory  every rank on one node: a POSIX shared-memory object
 *                  that rank 0 creates (0600, a random name passed
 *                  through the bootstrap, unlinked once all attached);
 *                  each rank writes its vote in a slot and raises a
 *                  sequence number, every rank reads every slot
 *   messages       over the data backend's own library or links, apart
 *                  from its ops (comm.h holds data operations only):
 *                  MPI_Iallreduce on a communicator of the vote's own
 *                  (vote_mpi.c), the TCP backend's ring (vote_ring.c)
 *   ring           a TCP ring of its own (vote_ring.c, authenticated by
 *                  the job secret), for NCCL across nodes
 * HVD_VOTE picks one (auto: shared memory on one node, else messages,
 * else the ring). Every transport's test never blocks: agree.c polls it
 * against the deadline and the abort flag, so a dead or silent rank is
 * named by the control plane as on any collective.
 * What it does not do: build or read votes (agree.c) or move tensors.
 */
#ifndef HVD_VOTE_H
#define HVD_VOTE_H

#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hosts.h"
#include "core/auth.h"
#include "transport/comm.h"

/* The most values a vote has (agree.c checks its own at compile time). */
#define VOTE_MAX_VALUES 32

struct vote_ops {
	const char *name; /* "shared memory", "messages", "ring" */
	/* MIN over the ranks of n (1 to VOTE_MAX_VALUES) values in place:
	 * start it (at most one in flight), then poll it (*done = 1 when vals
	 * hold it). */
	int (*start)(void *ctx, int64_t *vals, int n, const struct comm_wait *w);
	int (*test)(void *ctx, int *done, const struct comm_wait *w);
	void (*close)(void *ctx, int clean); /* NULL: nothing to release */
};

/* ops NULL: no vote; rank 0 plans every bucket. */
struct vote_plane {
	const struct vote_ops *ops;
	void *ctx;
};

/* What the choice needs: the data backend, the bootstrap and host table
 * (who shares a node), HVD_VOTE, and for a ring this rank's address and
 * the job secret. */
struct vote_need {
	struct comm *data;
	struct bootstrap *boot;
	const struct host_entry *hosts;
	enum hvd_vote_choice choice;
	const char *ip;
	const struct auth_key *key;
	double deadline;
};

/* Every rank calls it at start-up with the same choice: they end on the
 * same transport (a shared-memory object one rank cannot attach is given
 * up by all). 0 or an hvd_status with err. */
int vote_open(struct vote_plane *v, const struct vote_need *need, char *err, size_t errlen);
void vote_close(struct vote_plane *v, int clean);

/* vote_shm.c: 0 with v->ops and v->ctx set; 1 when some rank could not
 * attach (every rank gets 1, nothing is left behind); or an hvd_status
 * with err. */
int vote_shm_open(struct vote_plane *v, struct bootstrap *b, char *err, size_t n);
/* vote_ring.c: the TCP data backend's links, else a ring of its own
 * (need->ip and need->key). */
int vote_ring_open(struct vote_plane *v, const struct vote_need *need, char *err, size_t errlen);
#ifdef HAVE_MPI
/* vote_mpi.c: after the MPI data backend started MPI. */
int vote_mpi_open(struct vote_plane *v, char *err, size_t errlen);
#endif

#endif
