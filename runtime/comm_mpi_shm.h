/* comm_mpi_shm.h - the plan cache's vote (agree.c) through memory that
 * the ranks of one node share (MPI-3 MPI_Win_allocate_shared), for a job
 * whose ranks all share one node. Each rank writes its vote, and the
 * bucket the vote is about when it has one ready, into its own slot and
 * raises the slot's sequence number; every rank then reads every slot
 * and computes the same result: the MIN of every value, and, when every
 * rank's vote is alike in its first `nsame` values and every rank sent a
 * vector of the same length ("uniform"), the sum of the vectors,
 * associated as recursive doubling associates them ((x0 + x1) + (x2 +
 * x3): comm_mpi_rd.h, OpenMPI), so the bits are those of the ordinary
 * path. A vote that is not uniform leaves the caller's vector as it was.
 * No message, no matching, no request: one copy in, one read of the
 * peers' slots (comm_mpi_vote.c's two eager messages through OpenMPI's
 * shared-memory transport cost more than the data itself at 4 KiB).
 *
 * Each slot has two halves used in turn (vote k writes half k % 2). A
 * rank writes vote k's half only after it has read every rank's vote
 * k - 1, and every rank that has posted vote k - 1 has read every vote
 * k - 2 (the half vote k reuses); so a half is never overwritten while
 * someone may still read it, whatever the ranks' pace.
 * A peer's slot is checked before it is read (its value count equals
 * ours, its length fits): a corrupt slot is an error, not a read past
 * the end.
 * What it does not do: ranks on several nodes (comm_mpi_vote.c), wait
 * (the caller polls against its deadline and abort flag: a rank that
 * died mid-vote is the control plane's to name), or larger vectors.
 */
#ifndef HVD_COMM_MPI_SHM_H
#define HVD_COMM_MPI_SHM_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "comm_mpi_rd.h"
#include "comm_mpi_vote.h"

struct shm_slot;

struct shm_vote {
	MPI_Win win;               /* MPI_WIN_NULL: not in use */
	struct shm_slot **slots;   /* every rank's slot, by rank */
	int rank, size;
	uint64_t seq;              /* votes this rank has posted */
	int64_t *vals;             /* the caller's vote, MIN over the ranks in place */
	int n, nsame;
	char *data;                /* the caller's vector, summed in place when uniform */
	size_t bytes;
	enum rd_kind kind;
	int uniform;               /* after the vote: data holds the sum */
	char *acc;                 /* more than 2 ranks: the partial sums */
	size_t acc_cap;
};

/* Collective over world (every rank calls it at start-up): maps every
 * rank's slot when every rank is enabled (HVD_SHM: a rank that says 0
 * turns it off for all), all `size` ranks share this node and MPI can
 * share memory; else v stays unused.
 * MPI_SUCCESS either way (*used says which, the same on every rank), or
 * an MPI error code. */
int shm_vote_open(struct shm_vote *v, MPI_Comm world, int rank, int size, int enabled,
		  int *used);
/* Posts this rank's vote: n values (nsame must be alike everywhere) and,
 * with data (bytes <= VOTE_DATA_MAX, a multiple of the kind's element;
 * a power-of-two rank count), the vector to sum beside it. MPI_SUCCESS,
 * or MPI_ERR_ARG. */
int shm_vote_start(struct shm_vote *v, int64_t *vals, int n, int nsame, void *data,
		   size_t bytes, enum rd_kind kind);
/* *done = 1 once every rank has posted: vals hold the MIN and v->uniform
 * says whether data holds the sum. MPI_ERR_TRUNCATE for a malformed
 * slot, MPI_ERR_NO_MEM when the partial sums find no memory. */
int shm_vote_test(struct shm_vote *v, int *done);
/* Unmaps the slots: collective when clean (every rank finishing), else
 * local (the memory goes with the process). */
void shm_vote_close(struct shm_vote *v, int clean);

#endif
