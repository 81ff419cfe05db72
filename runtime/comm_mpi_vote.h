/* comm_mpi_vote.h - the plan cache's vote (agree.c) on MPI point-to-point,
 * by recursive doubling like comm_mpi_rd.h, with room for the bucket the
 * vote is about: each rank sends its vote and, when it has one ready, the
 * bucket's vector in the same messages, so a repeated small bucket costs
 * one exchange instead of a vote and then a reduction. The vote is the
 * MIN of every value over the ranks, as before; the vectors are summed
 * only when every rank's vote is alike in its first `nsame` values and
 * every rank sent a vector of the same length ("uniform"), and otherwise
 * the caller's vector is left as it was: the caller then runs the bucket
 * the ordinary way.
 *
 * A round's message is a header (the vote, the sender's uniform flag, its
 * vector's length) followed by the vector, in pieces under the shared
 * memory transport's eager limit as in comm_mpi_rd.c. The receiver learns
 * the length from the first piece, so ranks that disagree still receive
 * exactly what their partner sent. Every rank adds the same two operands
 * at each round, associated as comm_mpi_rd.c (and OpenMPI) associate them,
 * so the sums are bit for bit those of the ordinary path.
 * What it does not do: decide what a vote means (agree.c), pick the
 * vector's layout (engine.c), or any rank count but a power of two.
 */
#ifndef HVD_COMM_MPI_VOTE_H
#define HVD_COMM_MPI_VOTE_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "comm_mpi_rd.h"

/* The longest vector a vote carries (comm_mpi_rd.c's point-to-point limit). */
#define VOTE_DATA_MAX ((size_t)64 * 1024)
/* Values in a vote, at most (the header's room). */
#define VOTE_VALUES_MAX 64
/* Messages per round and direction, at most: the first piece, then the
 * rest of the vector in pieces (or whole above comm_mpi_rd.c's limit). */
#define VOTE_PIECES_MAX (1 + RD_PIECES_MAX)

struct vote_op {
	MPI_Comm comm;            /* shared with comm_mpi_rd.c (never both in flight) */
	int rank, size;
	int64_t *vals;            /* the caller's vote, MIN over the ranks in place */
	int n, nsame;
	char *data;               /* the vector summed: the caller's on two ranks,
				   * else a copy (acc), so that a disagreement in a
				   * later round leaves the caller's as it was */
	char *out;                /* the caller's vector when data is the copy */
	char *acc;
	size_t acc_cap;
	size_t bytes;             /* its length; 0 once the round is not uniform */
	enum rd_kind kind;        /* its sum */
	int uniform;              /* every vote so far alike, every vector as long */
	char *tx, *rx;            /* the first piece out; the partner's message */
	size_t rx_cap;
	size_t peer_bytes;        /* the partner's vector this round */
	int dist;                 /* the round: partner = rank ^ dist; 0 = done */
	int head_in;              /* the partner's first piece has arrived */
	int nreq;
	MPI_Request req[2 * VOTE_PIECES_MAX];
};

/* Starts the vote: n values (nsame of them must be alike everywhere)
 * and, with data (bytes <= VOTE_DATA_MAX, a multiple of the kind's
 * element), the vector to sum beside it. MPI_SUCCESS, an MPI error code,
 * or MPI_ERR_NO_MEM / MPI_ERR_ARG. */
int vote_start(struct vote_op *op, int64_t *vals, int n, int nsame, void *data, size_t bytes,
	       enum rd_kind kind);
/* Progresses it; *done = 1 once vals hold the MIN and op->uniform says
 * whether data holds the sum (else data is as it was). MPI_ERR_TRUNCATE
 * when a partner's message is malformed. */
int vote_test(struct vote_op *op, int *done);
/* Frees the scratch (requests must be complete). */
void vote_free(struct vote_op *op);

#endif
