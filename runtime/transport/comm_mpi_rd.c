/* comm_mpi_rd.c - see comm_mpi_rd.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/comm_mpi_rd.h"

/* Larger vectors go to libnbc's reduce-scatter + allgather, which moves
 * half as much per rank (bench/allreduce.sh: 64 KiB on 2 ranks is as
 * fast either way, 1 MiB is not). */
#define RD_MAX_BYTES ((size_t)64 * 1024)
#define RD_TAG 0x4856
_Static_assert(RD_PIECED_MAX <= RD_PIECES_MAX * RD_PIECE_BYTES, "pieces fit req[]");

int rd_usable(int size, size_t bytes)
{
	return size > 1 && !(size & (size - 1)) && bytes <= RD_MAX_BYTES;
}

typedef float f32x4 __attribute__((vector_size(16)));

static void sum_f32(float *a, const float *b, int n)
{
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		f32x4 x, y;
		memcpy(&x, a + i, sizeof(x));
		memcpy(&y, b + i, sizeof(y));
		x += y;
		memcpy(a + i, &x, sizeof(x));
	}
	for (; i < n; i++)
		a[i] += b[i];
}

static void rd_combine(enum rd_kind kind, void *acc, const void *in, int n)
{
	switch (kind) {
	case RD_SUM_F32:
		sum_f32((float *)acc, (const float *)in, n);
		break;
	case RD_SUM_I32:
		for (int i = 0; i < n; i++)
			((int32_t *)acc)[i] += ((const int32_t *)in)[i];
		break;
	case RD_SUM_I64:
		for (int i = 0; i < n; i++)
			((int64_t *)acc)[i] += ((const int64_t *)in)[i];
		break;
	}
}

static size_t rd_esize(enum rd_kind kind)
{
	return kind == RD_SUM_F32 || kind == RD_SUM_I32 ? 4 : 8;
}

static int rd_grow(char **buf, size_t *cap, size_t bytes)
{
	if (bytes <= *cap)
		return MPI_SUCCESS;
	char *p = realloc(*buf, bytes);
	if (!p)
		return MPI_ERR_NO_MEM;
	*buf = p;
	*cap = bytes;
	return MPI_SUCCESS;
}

/* The first element of piece p and its length. */
static int piece_at(const struct rd_op *op, int p, int *len)
{
	int per = (op->count + op->pieces - 1) / op->pieces, at = p * per;
	*len = op->count - at < per ? op->count - at : per;
	return at;
}

/* Every receive first, then the sends. */
static int post_round(struct rd_op *op)
{
	int partner = op->rank ^ op->dist, rc = MPI_SUCCESS, len;
	size_t esize = rd_esize(op->kind);
	for (int r = 0; r < 2 * op->pieces; r++) /* a failed post leaves no stale request */
		op->req[r] = MPI_REQUEST_NULL;
	for (int p = 0; rc == MPI_SUCCESS && p < op->pieces; p++) {
		int at = piece_at(op, p, &len);
		rc = MPI_Irecv(op->tmp + at * esize, len, op->type, partner, RD_TAG, op->comm,
			       &op->req[p]);
	}
	for (int p = 0; rc == MPI_SUCCESS && p < op->pieces; p++) {
		int at = piece_at(op, p, &len);
		rc = MPI_Isend(op->buf + at * esize, len, op->type, partner, RD_TAG, op->comm,
			       &op->req[op->pieces + p]);
	}
	return rc;
}

static int pieces_for(size_t bytes)
{
	if (bytes > RD_PIECED_MAX || bytes <= RD_PIECE_BYTES)
		return 1;
	return (int)((bytes + RD_PIECE_BYTES - 1) / RD_PIECE_BYTES);
}

static MPI_Datatype type_of(enum rd_kind kind)
{
	return kind == RD_SUM_F32 ? MPI_FLOAT : kind == RD_SUM_I32 ? MPI_INT32_T : MPI_INT64_T;
}

int rd_start(struct rd_op *op, void *buf, int count, enum rd_kind kind)
{
	size_t bytes = (size_t)count * rd_esize(kind);
	if (rd_grow(&op->tmp, &op->tmp_cap, bytes) != MPI_SUCCESS)
		return MPI_ERR_NO_MEM;
	op->buf = buf;
	op->count = count;
	op->kind = kind;
	op->type = type_of(kind);
	op->pieces = pieces_for(bytes);
	op->dist = op->size > 1 ? 1 : 0;
	return op->dist ? post_round(op) : MPI_SUCCESS;
}

int rd_test(struct rd_op *op, int *done)
{
	*done = 0;
	if (!op->dist) {
		*done = 1;
		return MPI_SUCCESS;
	}
	int flag = 0;
	int rc = MPI_Testall(2 * op->pieces, op->req, &flag, MPI_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS || !flag)
		return rc;
	rd_combine(op->kind, op->buf, op->tmp, op->count);
	op->dist <<= 1;
	if (op->dist >= op->size) {
		op->dist = 0;
		*done = 1;
		return MPI_SUCCESS;
	}
	return post_round(op);
}

void rd_free(struct rd_op *op)
{
	free(op->tmp);
	op->tmp = NULL;
	op->tmp_cap = 0;
}
