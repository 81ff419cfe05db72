/* comm_mpi_rd.h - a small allreduce on MPI point-to-point: recursive
 * doubling (log2(P) rounds, each an exchange of the whole vector with the
 * partner rank ^ distance by Isend/Irecv, in pieces below, then a local
 * combine), for a power-of-two rank count and small vectors. OpenMPI's
 * non-blocking collectives (coll/libnbc) cost 2-5 us per call on 2 ranks
 * where the blocking MPI_Allreduce takes 0.4-1.7 us; this keeps the call
 * non-blocking (polled against the runtime's deadline) at the blocking
 * call's speed. Every rank
 * combines the same two operands at each round (a + b == b + a in IEEE),
 * so all ranks hold the same bits, associated as OpenMPI associates them
 * ((x0 + x1) + (x2 + x3): pairs at distance 1, then 2, ...; slurm-runtime
 * four_ranks_small_and_large_reductions_agree compares the bits).
 * What it does not do: large vectors (the caller uses libnbc there) or
 * non-power-of-two rank counts.
 */
#ifndef HVD_COMM_MPI_RD_H
#define HVD_COMM_MPI_RD_H

#include <stddef.h>

#include <mpi.h>

/* A round's vector goes as up to this many messages, each within the
 * shared-memory transport's eager limit (comm_mpi_rd.c). */
#define RD_PIECES_MAX 8
/* Pieces: under vader's 4096-byte eager limit with the match header, and
 * only for vectors up to RD_PIECED_MAX bytes; 64 KiB is as fast whole
 * (measured on 2 ranks: 4 KiB 3.7 us whole, 1.1-1.6 in pieces; 8 KiB 4.7
 * vs 2.2-3.1; 16 KiB 6.4 vs 4.8-5.7; 64 KiB 17.5 vs 17.9-18.6). The same
 * tag on one communicator keeps them in order. */
#define RD_PIECE_BYTES ((size_t)4000)
#define RD_PIECED_MAX ((size_t)16 * 1024)

/* The combine at each round. */
enum rd_kind { RD_SUM_F32, RD_SUM_I32, RD_SUM_I64 };

struct rd_op {
	MPI_Comm comm;          /* a communicator of its own (no other traffic) */
	int rank, size;
	char *buf;              /* the caller's vector, reduced in place */
	int count;
	MPI_Datatype type;
	enum rd_kind kind;
	char *tmp;              /* the partner's vector of the round */
	size_t tmp_cap;
	int dist;               /* the round in flight: partner = rank ^ dist; 0 = none */
	int pieces;             /* messages per round and direction (RD_PIECES_MAX) */
	MPI_Request req[2 * RD_PIECES_MAX];
};

/* Whether a reduction of `bytes` over `size` ranks goes this way. */
int rd_usable(int size, size_t bytes);
/* Starts the reduction of buf (count elements) in place. MPI_SUCCESS, an
 * MPI error code, or MPI_ERR_NO_MEM when the scratch cannot grow. */
int rd_start(struct rd_op *op, void *buf, int count, enum rd_kind kind);
/* Progresses it; *done = 1 once buf holds the result. */
int rd_test(struct rd_op *op, int *done);
/* Frees the scratch (requests must be complete). */
void rd_free(struct rd_op *op);
#endif
