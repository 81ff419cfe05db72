/* comm_mpi.c - the host backend: OpenMPI started inside the srun step
 * (direct launch through PMIx, no mpirun), non-blocking collectives polled
 * against a deadline and the control plane's abort flag. MPI lacks f16 and
 * bf16 sums: the engine widens them to f32 first (widens_halves).
 * HVD_AVERAGE (f32) by point-to-point messages: rank r owns block r of
 * the buffer; every rank sends each owner its block, the owner sums them
 * in rank order, scaling by 1/size in the last addition (the average
 * costs no pass of its own), and sends the result to every rank. Every
 * element is summed once, by its owner, in rank order: every rank gets
 * the same bits, whatever the count.
 * MPI starts (comm_mpi_init) before the bootstrap's host exchange, which
 * is so the fence that keeps every rank from sending while another is
 * still in MPI_Init_thread: Open MPI 4.1.4 crashes there (a call through
 * a NULL active-message callback in btl/tcp, in MPI_Init's last wait).
 * What it does not do: MPI_Abort (it kills the step without our message)
 * or MPI_Finalize after a failure (a dead peer would make it hang).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bootstrap/bootstrap.h"
#include "core/dtype.h"
#include "core/fail.h"
#include "transport/comm.h"
#include "transport/iface_shared.h"

#define AVG_TAG 4343

struct mpi_ctx {
	MPI_Comm comm;
	int rank, size;
	MPI_Request chunk;      /* the chunked bucket's reduction in flight */
	unsigned chunk_polls;
	int avg;                /* an average in flight: 1 summing, 2 gathering */
	float *buf, *tmp;       /* its buffer; size blocks of the peers' values */
	size_t count, tmp_cap;
	MPI_Request *req;       /* 2 (size - 1) */
};

int comm_mpi_fail(const struct comm_wait *w, const char *call, int rc)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "MPI error %d", rc);
	return fail_msg(HVD_ERR_COMM, w->err, w->errlen, "hvd: %s: '%s': %s", call, w->what, text);
}

/* A request posted (posted: the post's return code), polled until
 * done, the deadline, or an abort. */
static int mpi_wait(int posted, MPI_Request *req, const struct comm_wait *w, const char *call)
{
	for (unsigned spins = 0; posted == MPI_SUCCESS; spins++) {
		int done = 0;
		posted = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (posted != MPI_SUCCESS || done)
			break;
		int st = (spins & 63) == 0 ? comm_wait_check(w, call) : 0;
		if (st)
			return st;
		comm_poll_pause(spins);
	}
	return posted == MPI_SUCCESS ? 0 : comm_mpi_fail(w, call, posted);
}

/* f16 and bf16: none (the engine widens them, widens_halves). */
static MPI_Datatype mpi_type(enum hvd_dtype t)
{
	static const MPI_Datatype types[HVD_DTYPE_COUNT] = { [HVD_F32] = MPI_FLOAT,
		[HVD_F16] = MPI_DATATYPE_NULL, [HVD_BF16] = MPI_DATATYPE_NULL,
		[HVD_I32] = MPI_INT32_T, [HVD_I64] = MPI_INT64_T };
	return (unsigned)t < HVD_DTYPE_COUNT ? types[t] : MPI_DATATYPE_NULL;
}

#define MPI_CHUNK ((size_t)1 << 30) /* elements or bytes per call: fits an int */

/* Every peer q: gather (avg 2) receives block q from q into the buffer
 * and sends this rank's block; else receives this rank's block of q's
 * values into tmp and sends q its block. */
static int avg_post(struct mpi_ctx *ctx, int gather, const struct comm_wait *w)
{
	size_t mf, mn, f, n, stride = ctx->count / (size_t)ctx->size + 1;
	comm_block(ctx->count, ctx->size, ctx->rank, &mf, &mn);
	int rc = MPI_SUCCESS;
	for (int k = 0; k < 2 * (ctx->size - 1); k++)
		ctx->req[k] = MPI_REQUEST_NULL; /* a failed post leaves none unset */
	for (int q = 0, k = 0; q < ctx->size && rc == MPI_SUCCESS; q++) {
		if (q == ctx->rank)
			continue;
		comm_block(ctx->count, ctx->size, q, &f, &n);
		float *in = gather ? ctx->buf + f : ctx->tmp + (size_t)q * stride;
		rc = MPI_Irecv(in, (int)(gather ? n : mn), MPI_FLOAT, q, AVG_TAG, ctx->comm,
			       &ctx->req[k++]);
		if (rc == MPI_SUCCESS)
			rc = MPI_Isend(ctx->buf + (gather ? mf : f), (int)(gather ? mn : n), MPI_FLOAT,
				       q, AVG_TAG, ctx->comm, &ctx->req[k++]);
	}
	ctx->avg = 1 + gather;
	return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(w, "MPI_Isend", rc);
}

/* This rank's block: x0 + x1 + ... in rank order, the last addition
 * scaled, accumulated in tmp's block 0 (or the buffer on rank 0). */
static void avg_sum(struct mpi_ctx *ctx)
{
	size_t f, n, stride = ctx->count / (size_t)ctx->size + 1;
	comm_block(ctx->count, ctx->size, ctx->rank, &f, &n);
	float *mine = ctx->buf + f, *acc = ctx->rank ? ctx->tmp : mine;
	for (int q = 1; q < ctx->size; q++) {
		int last = q == ctx->size - 1;
		dtype_add_scale_f32(last ? mine : acc, acc, q == ctx->rank ? mine : ctx->tmp + q * stride,
				    n, last ? 1.0f / (float)ctx->size : 1.0f);
	}
}

static int avg_start(struct mpi_ctx *ctx, const struct comm_wait *w)
{
	size_t n = (size_t)ctx->size * (ctx->count / (size_t)ctx->size + 1);
	if (n > ctx->tmp_cap) {
		float *p = realloc(ctx->tmp, n * sizeof(float));
		if (!p)
			return HVD_ERR_NOMEM;
		ctx->tmp = p;
		ctx->tmp_cap = n;
	}
	return avg_post(ctx, 0, w);
}

/* One look at the average's messages: once the blocks are in, sum and
 * send the result; *done once the results are in too. */
static int avg_test(struct mpi_ctx *ctx, int *done, const struct comm_wait *w)
{
	int rc = MPI_Testall(2 * (ctx->size - 1), ctx->req, done, MPI_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS)
		return comm_mpi_fail(w, "MPI_Testall", rc);
	if (!*done || ctx->avg == 2) {
		ctx->avg = *done ? 0 : ctx->avg;
		return 0;
	}
	*done = 0;
	avg_sum(ctx);
	return avg_post(ctx, 1, w);
}

/* One reduction of at most MPI_CHUNK elements (the pipeline's pieces
 * never exceed max_count), polled by mpi_allreduce_test. */
static int mpi_allreduce_start(void *vctx, void *buf, size_t count, enum hvd_dtype t,
			       enum hvd_op op, const struct comm_wait *w)
{
	struct mpi_ctx *ctx = vctx;
	ctx->chunk_polls = 0;
	ctx->buf = buf;
	ctx->count = count;
	if (op == HVD_AVERAGE && ctx->size > 1)
		return avg_start(ctx, w);
	int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mpi_type(t), MPI_SUM, ctx->comm,
				&ctx->chunk);
	return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(w, "MPI_Iallreduce", rc);
}

/* One MPI_Test (it also progresses the reduction); the deadline and the
 * abort flag every 64 polls, as mpi_wait. */
static int mpi_allreduce_test(void *vctx, int *done, const struct comm_wait *w)
{
	struct mpi_ctx *ctx = vctx;
	int rc = 0, mrc;
	*done = 0;
	if (ctx->avg)
		rc = avg_test(ctx, done, w);
	else if ((mrc = MPI_Test(&ctx->chunk, done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
		rc = comm_mpi_fail(w, "MPI_Iallreduce", mrc);
	if (rc || *done || (ctx->chunk_polls++ & 63))
		return rc;
	return comm_wait_check(w, "MPI_Iallreduce");
}

static int mpi_broadcast(void *vctx, void *buf, size_t bytes, int root, const struct comm_wait *w)
{
	struct mpi_ctx *ctx = vctx;
	int rc = 0;
	for (size_t done = 0; !rc && done < bytes; done += MPI_CHUNK) {
		size_t n = bytes - done < MPI_CHUNK ? bytes - done : MPI_CHUNK;
		MPI_Request req;
		rc = mpi_wait(MPI_Ibcast((char *)buf + done, (int)n, MPI_BYTE, root, ctx->comm, &req),
			      &req, w, "MPI_Ibcast");
	}
	return rc;
}

static int mpi_allgatherv(void *vctx, const void *send, size_t send_bytes, void *recv,
			  size_t cap, size_t *bytes_per_rank, const struct comm_wait *w)
{
	struct mpi_ctx *ctx = vctx;
	_Static_assert(sizeof(size_t) == sizeof(uint64_t), "sizes travel as MPI_UINT64_T");
	uint64_t mine = send_bytes;
	MPI_Request req;
	int rc = mpi_wait(MPI_Iallgather(&mine, 1, MPI_UINT64_T, bytes_per_rank, 1, MPI_UINT64_T,
					 ctx->comm, &req), &req, w, "MPI_Iallgather");
	if (rc)
		return rc;
	size_t total = 0;
	for (int r = 0; r < ctx->size; r++)
		total += bytes_per_rank[r];
	if (total > cap || total > INT_MAX)
		return fail_msg(HVD_ERR_USAGE, w->err, w->errlen, "hvd: allgatherv: '%s': %zu "
				"bytes from all ranks do not fit the %zu-byte receive buffer (or "
				"exceed 2 GiB)", w->what, total, cap);
	int *counts = calloc(2 * (size_t)(unsigned)ctx->size, sizeof(int)); /* and displacements */
	if (!counts)
		return HVD_ERR_NOMEM;
	int *displs = counts + ctx->size;
	for (int r = 0, off = 0; r < ctx->size; r++) {
		counts[r] = (int)bytes_per_rank[r];
		displs[r] = off;
		off += counts[r];
	}
	rc = mpi_wait(MPI_Iallgatherv(send_bytes ? send : MPI_BOTTOM, (int)send_bytes, MPI_BYTE,
				      recv, counts, displs, MPI_BYTE, ctx->comm, &req),
		      &req, w, "MPI_Iallgatherv");
	free(counts);
	return rc;
}

static void mpi_finalize(void *vctx, int clean)
{
	struct mpi_ctx *ctx = vctx;
	if (clean) {
		MPI_Comm_free(&ctx->comm);
		MPI_Finalize();
	}
	free(ctx->tmp);
	free(ctx->req);
	free(ctx);
}

/* MPI_Get_library_version's first clause: "Open MPI v4.1.4". */
static void mpi_library(char *text, size_t len)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	MPI_Get_library_version(v, &n);
	snprintf(text, len, "%.*s", (int)strcspn(v, ",\n"), v);
}

static const struct comm_ops mpi_ops = {
	.name = "mpi",
	.library = mpi_library,
	.allreduce_phase = "MPI_ALLREDUCE",
	.broadcast_phase = "MPI_BCAST",
	.allgather_phase = "MPI_ALLGATHER",
	.widens_halves = 1,
	.max_count = MPI_CHUNK,
	.alloc = comm_host_alloc,
	.release = comm_host_release,
	.copy = comm_host_copy,
	.allreduce_start = mpi_allreduce_start,
	.allreduce_test = mpi_allreduce_test,
	.broadcast = mpi_broadcast,
	.allgatherv = mpi_allgatherv,
	.finalize = mpi_finalize,
};

/* OpenMPI's non-blocking allreduce (coll/libnbc) picks a binomial tree
 * (reduce to rank 0, then broadcast) for every in-place call and for any
 * call on fewer than 4 ranks: half the speed of the blocking
 * MPI_Allreduce at 1 MiB and above. Reduce-scatter + allgather
 * (Rabenseifner, libnbc's algorithm 3; it falls back to a ring where the
 * count is below the rank count) matches the blocking call (bench/). Only
 * for a power-of-two rank count: with 6 ranks on 3 nodes one run in four
 * crashed inside Open MPI 4.1.4 (a NULL dereference) with it, and the
 * non-power-of-two form of the algorithm is the one with an extra step.
 * A value the user set wins; MPICH ignores the variable. */
#define LIBNBC_IALLREDUCE "OMPI_MCA_coll_libnbc_iallreduce_algorithm"

/* Open MPI's TCP BTL dials every address a peer has, in turn, and waits
 * on one that leads back to its own host (docker0's 172.17.0.1 on every
 * node: `connect() to 172.17.0.1:1026 failed`, then a hang, measured on
 * the multi-node test cluster). Unless the user chose the interfaces,
 * the interfaces holding an address more than one host has are left out,
 * beside Open MPI's own defaults (loopback, sppp); rank 0 says so. One
 * more exchange through the bootstrap, before MPI starts. */
#define IF_INCLUDE "OMPI_MCA_btl_tcp_if_include"
#define IF_EXCLUDE "OMPI_MCA_btl_tcp_if_exclude"

static int exclude_shared_addresses(struct bootstrap *b, char *err, size_t errlen)
{
	if (b->size < 2 || getenv(IF_INCLUDE) || getenv(IF_EXCLUDE))
		return 0;
	struct iface_row mine = { .host = "" }, *all = calloc((size_t)b->size, sizeof(*all));
	if (!all)
		return fail_msg(HVD_ERR_NOMEM, err, errlen, "hvd: MPI start: out of memory");
	snprintf(mine.host, sizeof(mine.host), "%s", b->hostname);
	iface_walk(NULL, mine.addrs, sizeof(mine.addrs));
	int rc = bootstrap_allgather(b, "hvd.iface", &mine, sizeof(mine), all, err, errlen);
	char shared[1024], names[512] = "", value[600];
	for (int r = 0; !rc && r < b->size; r++)
		all[r].host[sizeof(all[r].host) - 1] = all[r].addrs[sizeof(all[r].addrs) - 1] = '\0';
	if (!rc && iface_shared(all, b->size, shared, sizeof(shared)) > 0)
		iface_walk(shared, names, sizeof(names));
	if (names[0]) {
		snprintf(value, sizeof(value), "127.0.0.1/8,sppp,%s", names);
		setenv(IF_EXCLUDE, value, 1);
		if (b->rank == 0)
			fprintf(stderr, "hvd: setting: %s=%s: interfaces whose address more than one "
				"host has (%s) left out\n", IF_EXCLUDE, value, shared);
	}
	free(all);
	return rc;
}

int comm_mpi_init(struct bootstrap *b, char *err, size_t errlen)
{
	int inited = 0, provided = 0;
	if (MPI_Initialized(&inited) == MPI_SUCCESS && inited)
		return 0;
	int rc = exclude_shared_addresses(b, err, errlen);
	if (rc)
		return rc;
	if (b->size > 1 && !(b->size & (b->size - 1)))
		setenv(LIBNBC_IALLREDUCE, "3", 0);
	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) == MPI_SUCCESS)
		return 0;
	return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: MPI_Init_thread: "
			"'MPI_THREAD_SERIALIZED': failed");
}

int comm_mpi_open(struct comm *c, int rank, int size, char *err, size_t errlen)
{
	int provided = 0;
	MPI_Query_thread(&provided);
	if (provided < MPI_THREAD_SERIALIZED)
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: MPI_Init_thread: 'thread level "
				"%d': the engine thread needs MPI_THREAD_SERIALIZED", provided);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int mrank = -1, msize = -1;
	MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
	MPI_Comm_size(MPI_COMM_WORLD, &msize);
	if (mrank != rank || msize != size)
		return fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "hvd: MPI_COMM_WORLD: 'rank %d of "
				"%d': PMIx said rank %d of %d", mrank, msize, rank, size);
	struct mpi_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx || !(ctx->req = calloc(2 * (size_t)size, sizeof(*ctx->req)))) {
		free(ctx);
		return HVD_ERR_NOMEM;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &ctx->comm);
	MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
	ctx->rank = rank;
	ctx->size = size;
	ctx->chunk = MPI_REQUEST_NULL;
	c->ops = &mpi_ops;
	c->ctx = ctx;
	return 0;
}
