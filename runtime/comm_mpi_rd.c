/* comm_mpi_rd.c - see comm_mpi_rd.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_mpi_rd.h"

/* Larger vectors go to libnbc's reduce-scatter + allgather, which moves
 * half as much per rank (bench/allreduce.sh: 64 KiB on 2 ranks is as
 * fast either way, 1 MiB is not). */
#define RD_MAX_BYTES ((size_t)64 * 1024)
#define RD_TAG 0x4856

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

static void combine(struct rd_op *op)
{
	int n = op->count;
	switch (op->kind) {
	case RD_SUM_F32:
		sum_f32((float *)op->buf, (const float *)op->tmp, n);
		break;
	case RD_SUM_I32:
		for (int i = 0; i < n; i++)
			((int32_t *)op->buf)[i] += ((const int32_t *)op->tmp)[i];
		break;
	case RD_SUM_I64:
		for (int i = 0; i < n; i++)
			((int64_t *)op->buf)[i] += ((const int64_t *)op->tmp)[i];
		break;
	case RD_MIN_I64:
		for (int i = 0; i < n; i++) {
			int64_t x = ((const int64_t *)op->tmp)[i];
			if (x < ((int64_t *)op->buf)[i])
				((int64_t *)op->buf)[i] = x;
		}
		break;
	}
}

static int post_round(struct rd_op *op)
{
	int partner = op->rank ^ op->dist;
	int rc = MPI_Irecv(op->tmp, op->count, op->type, partner, RD_TAG, op->comm, &op->req[0]);
	if (rc == MPI_SUCCESS)
		rc = MPI_Isend(op->buf, op->count, op->type, partner, RD_TAG, op->comm, &op->req[1]);
	return rc;
}

static MPI_Datatype type_of(enum rd_kind kind)
{
	return kind == RD_SUM_F32 ? MPI_FLOAT : kind == RD_SUM_I32 ? MPI_INT32_T : MPI_INT64_T;
}

int rd_start(struct rd_op *op, void *buf, int count, enum rd_kind kind)
{
	size_t esize = kind == RD_SUM_F32 || kind == RD_SUM_I32 ? 4 : 8;
	size_t bytes = (size_t)count * esize;
	if (bytes > op->tmp_cap) {
		char *tmp = realloc(op->tmp, bytes);
		if (!tmp)
			return MPI_ERR_NO_MEM;
		op->tmp = tmp;
		op->tmp_cap = bytes;
	}
	op->buf = buf;
	op->count = count;
	op->kind = kind;
	op->type = type_of(kind);
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
	int rc = MPI_Testall(2, op->req, &flag, MPI_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS || !flag)
		return rc;
	combine(op);
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
