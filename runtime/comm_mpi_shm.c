/* comm_mpi_shm.c - see comm_mpi_shm.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_mpi_shm.h"

/* One vote: the values, the vector's length, the vector. */
struct shm_half {
	int64_t n;
	int64_t bytes;       /* 0: no vector */
	int64_t vals[VOTE_VALUES_MAX];
	_Alignas(64) char data[VOTE_DATA_MAX];
};

/* A rank's slot. seq (votes posted; half seq % 2 holds the latest) has
 * a cache line of its own: the peers poll it while the owner writes. */
struct shm_slot {
	_Alignas(64) uint64_t seq;
	_Alignas(64) struct shm_half half[2];
};

_Static_assert(sizeof(struct shm_slot) % 64 == 0, "slots one after another stay aligned");

static void reset(struct shm_vote *v, int rank, int size)
{
	*v = (struct shm_vote){ .win = MPI_WIN_NULL, .rank = rank, .size = size };
}

/* A rank's share of the window: a slot and room to align it (OpenMPI
 * puts a header before the first share, so a share starts 8 bytes past
 * a cache line; the mapping is page-aligned in every process, so the
 * aligned slot is the same memory for everyone). */
#define SHARE_BYTES (sizeof(struct shm_slot) + 64)

/* Every rank's slot, once the window is mapped: 1 when each is whole
 * (the same everywhere, the caller agrees on it). */
static int map_slots(struct shm_vote *v)
{
	v->slots = calloc((size_t)v->size, sizeof(*v->slots));
	if (!v->slots)
		return 0;
	for (int r = 0; r < v->size; r++) {
		MPI_Aint bytes = 0;
		int unit = 0;
		void *base = NULL;
		if (MPI_Win_shared_query(v->win, r, &bytes, &unit, &base) != MPI_SUCCESS ||
		    (size_t)bytes < SHARE_BYTES)
			return 0;
		v->slots[r] = (struct shm_slot *)(((uintptr_t)base + 63) & ~(uintptr_t)63);
	}
	return 1;
}

int shm_vote_open(struct shm_vote *v, MPI_Comm world, int rank, int size, int enabled,
		  int *used)
{
	reset(v, rank, size);
	*used = 0;
	if (size < 2)
		return MPI_SUCCESS;
	/* Every rank takes every step below, whatever its own answers (its
	 * HVD_SHM, its node): a rank that left early would leave the others
	 * waiting in a collective without a deadline. */
	MPI_Comm node;
	int rc = MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	if (rc != MPI_SUCCESS)
		return rc;
	int node_size = 0, node_rank = -1, all = 0;
	MPI_Comm_size(node, &node_size);
	MPI_Comm_rank(node, &node_rank);
	int want = enabled && node_size == size && node_rank == rank;
	rc = MPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, world);
	if (rc == MPI_SUCCESS && all) { /* node is world, in world's order */
		void *share = NULL;
		int ok = MPI_Win_allocate_shared((MPI_Aint)SHARE_BYTES, 1, MPI_INFO_NULL, node, &share,
						 &v->win) == MPI_SUCCESS && map_slots(v);
		if (ok)
			v->slots[rank]->seq = 0; /* before the reduction: nobody reads it earlier */
		rc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, world);
	}
	MPI_Comm_free(&node);
	if (rc != MPI_SUCCESS || !all) { /* a rank may have no window: none is freed */
		shm_vote_close(v, 0);
		reset(v, rank, size);
		return rc;
	}
	*used = 1;
	return MPI_SUCCESS;
}

int shm_vote_start(struct shm_vote *v, int64_t *vals, int n, int nsame, void *data, size_t bytes,
		   enum rd_kind kind)
{
	if (!v->slots || n < 1 || n > VOTE_VALUES_MAX || nsame < 0 || nsame > n ||
	    bytes > VOTE_DATA_MAX || (bytes && !data) || bytes % rd_esize(kind) ||
	    (data && (v->size & (v->size - 1))))
		return MPI_ERR_ARG;
	struct shm_slot *mine = v->slots[v->rank];
	struct shm_half *h = &mine->half[(v->seq + 1) & 1];
	v->vals = vals;
	v->n = n;
	v->nsame = nsame;
	v->data = data;
	v->bytes = data ? bytes : 0;
	v->kind = kind;
	v->uniform = 0;
	h->n = n;
	h->bytes = (int64_t)v->bytes;
	memcpy(h->vals, vals, (size_t)n * sizeof(int64_t));
	if (v->bytes)
		memcpy(h->data, data, v->bytes);
	v->seq++;
	__atomic_store_n(&mine->seq, v->seq, __ATOMIC_RELEASE); /* the half is whole */
	return MPI_SUCCESS;
}

static const struct shm_half *half_of(const struct shm_vote *v, int r)
{
	return &v->slots[r]->half[v->seq & 1];
}

/* out = the sum of the vectors of ranks lo .. lo + m - 1 (m a power of
 * two), associated as a tree: (first half) + (second half). scratch:
 * room for log2(m) - 1 vectors. */
static void block_sum(const struct shm_vote *v, int lo, int m, char *out, char *scratch)
{
	int count = (int)(v->bytes / rd_esize(v->kind));
	if (m == 1) {
		memcpy(out, half_of(v, lo)->data, v->bytes);
		return;
	}
	if (m == 2) {
		memcpy(out, half_of(v, lo)->data, v->bytes);
		rd_combine(v->kind, out, half_of(v, lo + 1)->data, count);
		return;
	}
	block_sum(v, lo, m / 2, out, scratch);
	block_sum(v, lo + m / 2, m / 2, scratch, scratch + v->bytes);
	rd_combine(v->kind, out, scratch, count);
}

/* The caller's vector becomes the sum, as recursive doubling builds it
 * on this rank: at distance d, the tree sum of the partner's block of d
 * ranks is added (the sums are commutative, so every rank ends with the
 * same bits). */
static int sum_vectors(struct shm_vote *v)
{
	int count = (int)(v->bytes / rd_esize(v->kind)), levels = 0;
	for (int d = 1; d < v->size; d <<= 1)
		levels++;
	if (v->size > 2 && rd_grow(&v->acc, &v->acc_cap, (size_t)levels * v->bytes) != MPI_SUCCESS)
		return MPI_ERR_NO_MEM;
	for (int d = 1; d < v->size; d <<= 1) {
		int lo = (v->rank ^ d) & ~(d - 1);
		if (d == 1) {
			rd_combine(v->kind, v->data, half_of(v, lo)->data, count);
			continue;
		}
		block_sum(v, lo, d, v->acc, v->acc + v->bytes);
		rd_combine(v->kind, v->data, v->acc, count);
	}
	return MPI_SUCCESS;
}

int shm_vote_test(struct shm_vote *v, int *done)
{
	*done = 0;
	for (int r = 0; r < v->size; r++)
		if (r != v->rank && __atomic_load_n(&v->slots[r]->seq, __ATOMIC_ACQUIRE) < v->seq)
			return MPI_SUCCESS;
	const struct shm_half *mine = half_of(v, v->rank);
	int uniform = 1;
	for (int r = 0; r < v->size; r++) {
		const struct shm_half *h = half_of(v, r);
		if (h->n != v->n || h->bytes < 0 || (size_t)h->bytes > VOTE_DATA_MAX)
			return MPI_ERR_TRUNCATE;
		uniform &= (size_t)h->bytes == v->bytes &&
			   !memcmp(h->vals, mine->vals, (size_t)v->nsame * sizeof(int64_t));
	}
	if (uniform && v->bytes) {
		int rc = sum_vectors(v);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	for (int r = 0; r < v->size; r++)
		if (r != v->rank)
			rd_combine(RD_MIN_I64, v->vals, half_of(v, r)->vals, v->n);
	v->uniform = uniform;
	*done = 1;
	return MPI_SUCCESS;
}

void shm_vote_close(struct shm_vote *v, int clean)
{
	if (v->win != MPI_WIN_NULL && clean)
		MPI_Win_free(&v->win);
	v->win = MPI_WIN_NULL;
	free(v->slots);
	free(v->acc);
	v->slots = NULL;
	v->acc = NULL;
	v->acc_cap = 0;
}
