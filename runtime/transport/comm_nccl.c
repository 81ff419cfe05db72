/* comm_nccl.c - the GPU backend (practice C1): device buffers, its own CUDA
 * stream ordered after the caller's compute stream with events, one NCCL
 * communicator. The device is the one whose PCI bus id the hvd plugin
 * exported (HVD_GPU_BUSID, cudaDeviceGetByPCIBusId), device 0 without the
 * plugin. Rank 0's ncclUniqueId travels through the PMIx bootstrap; the
 * communicator is created non-blocking and polled with
 * ncclCommGetAsyncError against a deadline; ncclCommRevoke on error,
 * timeout or a shutdown after a failure, so no NCCL wait is unbounded.
 * The revoked communicator outlives hvd_shutdown: when the next hvd_init
 * of this process joins the ranks left of that world, in their old
 * order (trainer/recover/rejoin.c), ncclCommShrink makes theirs from it,
 * with no new id; else it is aborted. Every CUDA/NCCL status is
 * checked and named with the library's error string. ncclCommRevoke
 * (NCCL 2.28.3 lacks it) and ncclCommShrink are weak references:
 * with a library that lacks either, a failed communicator is aborted and
 * the next open makes a new one, and libhvd.so.0 still loads; allgatherv uses
 * scratch buffers allocated at open and copies asynchronously (group
 * gpu-audit checks all three).
 * What it does not do: HVD_COMPRESSION (needs device kernels; refused at
 * start-up). CI runs it on the emulated device and NCCL (make GPU_EMU=1,
 * group slurm-e2e-gpu), which checks stream order and results, not a real
 * GPU's NCCL.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

/* NULL where the loaded NCCL is older than these calls. */
#pragma weak ncclCommRevoke
#pragma weak ncclCommShrink

#include "bootstrap/bootstrap.h"
#include "transport/comm.h"
#include "core/fail.h"
#include "core/settings.h"

/* Readiness events are reused: record_ready (the submitting thread)
 * takes one from the free list, wait_ready (the engine thread) gives it
 * back once the NCCL stream waits on it (cudaStreamWaitEvent captures the
 * event's state at the call, so re-recording it later is safe). Events
 * are created only while the list is empty, i.e. during the first step:
 * no per-step allocation. */
#define NCCL_EVENT_POOL 1024

struct nccl_ctx {
	ncclComm_t comm;
	cudaStream_t stream;
	/* chunked buckets: copies on copy_stream beside the reductions on
	 * stream; `copied` = the copies a reduction waits for, reduced[k % 2]
	 * = chunk k's reduction, which its copy-out waits for */
	cudaStream_t copy_stream;
	cudaEvent_t copied, reduced[2];
	int copy_on_side;
	size_t chunks_started;
	int device;
	int rank, size;
	int aborted;
	pthread_mutex_t events_lock;
	cudaEvent_t free_events[NCCL_EVENT_POOL];
	int free_count;
	/* Allocated at open, so allgatherv allocates nothing: (size + 1)
	 * uint64 each, on the device every rank's byte count and this
	 * rank's, pinned on the host the counts read back and this rank's on
	 * its way up. */
	uint64_t *scratch;
	uint64_t *sizes_host;
};

static ncclDataType_t nccl_type(enum hvd_dtype t)
{
	static const ncclDataType_t types[HVD_DTYPE_COUNT] = { [HVD_F32] = ncclFloat32,
		[HVD_F16] = ncclFloat16, [HVD_BF16] = ncclBfloat16, [HVD_I32] = ncclInt32,
		[HVD_I64] = ncclInt64 };
	return (unsigned)t < HVD_DTYPE_COUNT ? types[t] : ncclInt64;
}

/* A rank's place in a communicator (rank -1: none). */
struct place {
	int rank, size;
};

/* The last communicator revoked in this process and this rank's place
 * there, for the next open to shrink. */
static ncclComm_t revoked;
static struct place revoked_at = { -1, 0 };
static int shrunk_from;   /* the last open's: the parent's ranks, 0 if not shrunk */

static void abort_revoked(void)
{
	if (revoked)
		ncclCommAbort(revoked);
	revoked = NULL;
	revoked_at = (struct place){ -1, 0 };
}

/* In-flight work stopped: revoked and kept (keep) or aborted. */
static void nccl_stop(struct nccl_ctx *ctx, int keep)
{
	if (ctx->aborted || !ctx->comm)
		return;
	ctx->aborted = 1;
	keep = keep && ncclCommRevoke && ncclCommShrink;
	if (keep) {
		ncclResult_t r = ncclCommRevoke(ctx->comm, NCCL_REVOKE_DEFAULT);
		keep = r == ncclSuccess || r == ncclInProgress;
	}
	if (!keep) {
		ncclCommAbort(ctx->comm);
		return;
	}
	abort_revoked();
	revoked = ctx->comm;
	revoked_at = (struct place){ ctx->rank, ctx->size };
}

static int nccl_fail(struct nccl_ctx *ctx, const struct comm_wait *w, const char *call,
		     const char *why)
{
	snprintf(w->err, w->errlen, "hvd: %s: '%s': %s", call, w->what, why);
	nccl_stop(ctx, 1);
	return HVD_ERR_COMM;
}

/* 0, or ce's failure in w->err (the communicator aborted). */
static int cuda_ok(struct nccl_ctx *ctx, cudaError_t ce, const struct comm_wait *w, const char *call)
{
	return ce == cudaSuccess ? 0 : nccl_fail(ctx, w, call, cudaGetErrorString(ce));
}

/* The engine thread's CUDA calls must run on the communicator's device
 * (a new thread starts on device 0): cudaSetDevice(ctx->device) first,
 * here checked. */
static int nccl_on_device(struct nccl_ctx *ctx, const struct comm_wait *w)
{
	return cuda_ok(ctx, cudaSetDevice(ctx->device), w, "cudaSetDevice");
}

/* Polls a stream and the communicator until the work is done. */
static int nccl_wait(struct nccl_ctx *ctx, cudaStream_t stream, const struct comm_wait *w,
			const char *call)
{
	for (;;) {
		cudaError_t ce = cudaStreamQuery(stream);
		if (ce == cudaSuccess)
			return 0;
		if (ce != cudaErrorNotReady)
			return cuda_ok(ctx, ce, w, call);
		ncclResult_t async = ncclSuccess;
		ncclResult_t query = ncclCommGetAsyncError(ctx->comm, &async);
		if (query != ncclSuccess)
			async = query;
		if (async != ncclSuccess && async != ncclInProgress)
			return nccl_fail(ctx, w, call, ncclGetErrorString(async));
		int st = comm_wait_check(w, call);
		if (st) {
			nccl_stop(ctx, 1);
			return st;
		}
		sched_yield();
	}
}

static int nccl_issued(struct nccl_ctx *ctx, ncclResult_t rc, const struct comm_wait *w,
		       const char *call)
{
	if (rc != ncclSuccess && rc != ncclInProgress)
		return nccl_fail(ctx, w, call, ncclGetErrorString(rc));
	return nccl_wait(ctx, ctx->stream, w, call);
}

static void *nccl_alloc(void *vctx, size_t bytes, char *err, size_t n)
{
	void *p = NULL;
	cudaError_t ce = cudaMalloc(&p, bytes ? bytes : 1);

	if (ce == cudaSuccess)
		return p;
	snprintf(err, n, "hvd: cudaMalloc: 'fusion buffer, %zu bytes': %s", bytes,
		 cudaGetErrorString(ce));
	return NULL;
}

static void nccl_release(void *vctx, void *p)
{
	cudaFree(p);
}

static int nccl_copy(void *vctx, void *dst, const void *src, size_t bytes, char *err, size_t n)
{
	struct nccl_ctx *ctx = vctx;
	cudaError_t ce = cudaSetDevice(ctx->device);
	if (ce == cudaSuccess)
		ce = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
				     ctx->copy_on_side ? ctx->copy_stream : ctx->stream);
	if (ce != cudaSuccess)
		return fail_msg(HVD_ERR_COMM, err, n, "hvd: cudaMemcpyAsync: '%zu bytes': %s",
				bytes, cudaGetErrorString(ce));
	return 0;
}

/* Chunked buckets: the host queues the whole bucket without waiting.
 * Copies run on copy_stream (nccl_stage), each reduction on stream waits
 * for its chunk's copy-in and its copy-out waits for it, so chunk k+1's
 * copy-in and k-1's copy-out overlap k's reduction on the device; the
 * engine's drain waits for both streams. */
static int nccl_allreduce_start(void *vctx, void *buf, size_t count, enum hvd_dtype t,
				enum hvd_op op, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	int rc = nccl_on_device(ctx, w);
	if (!rc && ctx->copy_on_side)
		rc = cuda_ok(ctx, cudaStreamWaitEvent(ctx->stream, ctx->copied, 0), w,
			     "cudaStreamWaitEvent (chunk copied in)");
	ncclResult_t nr = rc ? ncclSuccess : ncclAllReduce(buf, buf, count, nccl_type(t),
		op == HVD_AVERAGE ? ncclAvg : ncclSum, ctx->comm, ctx->stream);
	if (nr != ncclSuccess && nr != ncclInProgress)
		return nccl_fail(ctx, w, "ncclAllReduce", ncclGetErrorString(nr));
	if (!rc && ctx->copy_on_side)
		rc = cuda_ok(ctx, cudaEventRecord(ctx->reduced[ctx->chunks_started++ % 2], ctx->stream),
			     w, "cudaEventRecord (chunk reduced)");
	return rc;
}

static int nccl_stage(void *vctx, enum comm_stage s, size_t chunk, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	cudaError_t ce = cudaSetDevice(ctx->device);
	if (ce == cudaSuccess && s == COMM_STAGE_BEGIN) {
		ctx->chunks_started = 0;
		ce = cudaEventRecord(ctx->copied, ctx->stream); /* the tensors' readiness waits */
		if (ce == cudaSuccess)
			ce = cudaStreamWaitEvent(ctx->copy_stream, ctx->copied, 0);
		ctx->copy_on_side = ce == cudaSuccess;
	} else if (ce == cudaSuccess && s == COMM_STAGE_IN_DONE) {
		ce = cudaEventRecord(ctx->copied, ctx->copy_stream);
	} else if (ce == cudaSuccess && s == COMM_STAGE_OUT) {
		ce = cudaStreamWaitEvent(ctx->copy_stream, ctx->reduced[chunk % 2], 0);
	}
	if (s == COMM_STAGE_END)
		ctx->copy_on_side = 0;
	return cuda_ok(ctx, ce, w, "cudaEventRecord/cudaStreamWaitEvent (chunked bucket)");
}

static int nccl_broadcast(void *vctx, void *buf, size_t bytes, int root, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	int rc = nccl_on_device(ctx, w);
	return rc ? rc : nccl_issued(ctx, ncclBroadcast(buf, buf, bytes, ncclUint8, root, ctx->comm,
							ctx->stream), w, "ncclBroadcast");
}

/* Every rank's send_bytes into bytes_per_rank: one allgather of a uint64
 * in the scratch buffer, copied back asynchronously and waited for
 * against the deadline. */
static int gather_sizes(struct nccl_ctx *ctx, size_t send_bytes, size_t *bytes_per_rank,
			const struct comm_wait *w)
{
	uint64_t *sizes = ctx->scratch, *own = ctx->scratch + ctx->size;
	size_t bytes = (size_t)ctx->size * sizeof(uint64_t);
	ctx->sizes_host[ctx->size] = send_bytes;
	const char *copy = "cudaMemcpyAsync (allgatherv sizes)";
	int rc = cuda_ok(ctx, cudaMemcpyAsync(own, ctx->sizes_host + ctx->size, sizeof(uint64_t),
					      cudaMemcpyHostToDevice, ctx->stream), w, copy);
	if (!rc)
		rc = nccl_issued(ctx, ncclAllGather(own, sizes, 1, ncclUint64, ctx->comm, ctx->stream),
				 w, "ncclAllGather");
	if (!rc)
		rc = cuda_ok(ctx, cudaMemcpyAsync(ctx->sizes_host, sizes, bytes, cudaMemcpyDeviceToHost,
						  ctx->stream), w, copy);
	if (!rc)
		rc = nccl_wait(ctx, ctx->stream, w, copy);
	for (int r = 0; !rc && r < ctx->size; r++)
		bytes_per_rank[r] = (size_t)ctx->sizes_host[r];
	return rc;
}

/* NCCL has no allgatherv: gather the sizes, then one broadcast per rank
 * in a group. */
static int nccl_allgatherv(void *vctx, const void *send, size_t send_bytes, void *recv,
			   size_t cap, size_t *bytes_per_rank, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	int rc = nccl_on_device(ctx, w);
	if (!rc)
		rc = gather_sizes(ctx, send_bytes, bytes_per_rank, w);
	size_t total = 0;
	for (int r = 0; !rc && r < ctx->size; r++)
		total += bytes_per_rank[r];
	if (rc || total > cap)
		return rc ? rc : HVD_ERR_USAGE;
	ncclResult_t started = ncclGroupStart(), nr = started;
	size_t off = 0;
	for (int r = 0; r < ctx->size && nr == ncclSuccess; r++) {
		nr = ncclBroadcast(send, (char *)recv + off, bytes_per_rank[r], ncclUint8, r,
				   ctx->comm, ctx->stream);
		off += bytes_per_rank[r];
	}
	ncclResult_t ended = started == ncclSuccess ? ncclGroupEnd() : started;
	return nccl_issued(ctx, nr != ncclSuccess ? nr : ended, w, "ncclBroadcast (allgatherv)");
}

static int nccl_record_ready(void *vctx, void *stream, void **mark, char *err, size_t n)
{
	struct nccl_ctx *ctx = vctx;
	cudaEvent_t ev = NULL;
	cudaError_t ce = cudaSuccess;
	pthread_mutex_lock(&ctx->events_lock);
	if (ctx->free_count > 0)
		ev = ctx->free_events[--ctx->free_count];
	pthread_mutex_unlock(&ctx->events_lock);
	if (!ev)
		ce = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
	if (ce != cudaSuccess)
		return fail_msg(HVD_ERR_COMM, err, n, "hvd: cudaEventCreateWithFlags: 'ready "
				"mark': %s", cudaGetErrorString(ce));
	ce = cudaEventRecord(ev, (cudaStream_t)stream);
	if (ce != cudaSuccess) {
		snprintf(err, n, "hvd: cudaEventRecord: 'compute stream': %s", cudaGetErrorString(ce));
		cudaEventDestroy(ev);
		return HVD_ERR_COMM;
	}
	*mark = ev;
	return 0;
}

/* Back to the free list (destroyed when the list is full). */
static void give_back_event(struct nccl_ctx *ctx, cudaEvent_t ev)
{
	pthread_mutex_lock(&ctx->events_lock);
	int kept = ctx->free_count < NCCL_EVENT_POOL;
	if (kept)
		ctx->free_events[ctx->free_count++] = ev;
	pthread_mutex_unlock(&ctx->events_lock);
	if (!kept)
		cudaEventDestroy(ev);
}

static int nccl_wait_ready(void *vctx, void *mark, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	cudaEvent_t ev = mark;
	cudaError_t ce = cudaSetDevice(ctx->device);
	if (ce == cudaSuccess)
		ce = cudaStreamWaitEvent(ctx->stream, ev, 0);
	give_back_event(ctx, ev);
	if (ce == cudaSuccess)
		return 0;
	return fail_msg(HVD_ERR_COMM, w->err, w->errlen, "hvd: cudaStreamWaitEvent: '%s': %s",
			w->what, cudaGetErrorString(ce));
}

static int nccl_drain(void *vctx, const struct comm_wait *w)
{
	struct nccl_ctx *ctx = vctx;
	int rc = nccl_on_device(ctx, w);
	if (!rc)
		rc = nccl_wait(ctx, ctx->stream, w, "cudaMemcpyAsync (fusion buffer out)");
	return rc ? rc : nccl_wait(ctx, ctx->copy_stream, w, "cudaMemcpyAsync (fusion buffer out)");
}

static void nccl_finalize(void *vctx, int clean)
{
	struct nccl_ctx *ctx = vctx;
	cudaSetDevice(ctx->device);
	if (clean && !ctx->aborted)
		ncclCommDestroy(ctx->comm);
	else
		nccl_stop(ctx, 1);
	if (ctx->stream) /* an open that failed may have made neither */
		cudaStreamDestroy(ctx->stream);
	if (ctx->copy_stream)
		cudaStreamDestroy(ctx->copy_stream);
	cudaEventDestroy(ctx->copied);
	cudaEventDestroy(ctx->reduced[0]);
	cudaEventDestroy(ctx->reduced[1]);
	while (ctx->free_count > 0)
		cudaEventDestroy(ctx->free_events[--ctx->free_count]);
	cudaFree(ctx->scratch);
	cudaFreeHost(ctx->sizes_host);
	pthread_mutex_destroy(&ctx->events_lock);
	free(ctx);
}

static void nccl_library(char *text, size_t len)
{
	int v = 0;
	if (ncclGetVersion(&v) != ncclSuccess)
		snprintf(text, len, "NCCL (version unknown)");
	else   /* X*10000 + Y*100 + Z since NCCL 2.9 */
		snprintf(text, len, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	if (shrunk_from)
		snprintf(text + strlen(text), len - strlen(text), ", shrunk from %d ranks", shrunk_from);
}

static const struct comm_ops nccl_ops = {
	.name = "nccl",
	.library = nccl_library,
	.allreduce_phase = "NCCL_ALLREDUCE",
	.broadcast_phase = "NCCL_BCAST",
	.allgather_phase = "NCCL_ALLGATHER",
	.device_memory = 1,
	.alloc = nccl_alloc,
	.release = nccl_release,
	.copy = nccl_copy,
	.allreduce_start = nccl_allreduce_start,
	.allreduce_test = comm_done_test, /* stream order: what follows runs after it */
	.stage = nccl_stage,
	.broadcast = nccl_broadcast,
	.allgatherv = nccl_allgatherv,
	.record_ready = nccl_record_ready,
	.wait_ready = nccl_wait_ready,
	.drain = nccl_drain,
	.finalize = nccl_finalize,
};

/* A new communicator: rank 0's id to every rank, then a non-blocking
 * ncclCommInitRankConfig (*nr: its status). */
static int new_comm(struct nccl_ctx *ctx, struct bootstrap *b, ncclConfig_t *config,
		    ncclResult_t *nr, char *err, size_t errlen)
{
	ncclUniqueId id = { { 0 } };
	ncclResult_t got = b->rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
	if (got != ncclSuccess)
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: ncclGetUniqueId: 'rank 0': %s",
				ncclGetErrorString(got));
	ncclUniqueId *all = calloc((size_t)(unsigned)b->size, sizeof(id));
	if (!all)
		return HVD_ERR_NOMEM;
	int rc = bootstrap_allgather(b, "hvd.nccl.id", &id, sizeof(id), all, err, errlen);
	if (!rc)
		*nr = ncclCommInitRankConfig(&ctx->comm, b->size, all[0], b->rank, config);
	free(all);
	return rc;
}

/* The ranks of the revoked world that no caller holds, into excluded
 * (room for that world's size): how many, or -1 when the callers are not
 * ranks of one revoked world in ascending order. A shrink needs at least
 * one (NCCL refuses an empty list). */
static int excluded_ranks(const struct place *all, int size, int *excluded)
{
	int n = 0, next = 0, parent = all[0].size;
	for (int r = 0; r < size; r++) {
		if (all[r].size != parent || all[r].rank < next || all[r].rank >= parent)
			return -1;
		while (next < all[r].rank)
			excluded[n++] = next++;
		next++;
	}
	while (next < parent)
		excluded[n++] = next++;
	return n;
}

/* A non-blocking communicator's state, polled while it is in progress
 * and the deadline has not passed. */
static ncclResult_t poll_state(ncclComm_t comm, ncclResult_t nr, double deadline)
{
	while (nr == ncclInProgress && runtime_now() < deadline) {
		sched_yield();
		ncclResult_t query = ncclCommGetAsyncError(comm, &nr);
		if (query != ncclSuccess)
			nr = query;
	}
	return nr;
}

/* The communicator: shrunk from the revoked one when every rank holds
 * it and some of its ranks are gone (the ranks left of that world), once
 * the revoke has quiesced it (NCCL refuses a communicator in progress);
 * else new. Non-blocking, polled until ready or the deadline. */
static int init_comm(struct nccl_ctx *ctx, struct bootstrap *b, double deadline,
		     char *err, size_t errlen)
{
	struct place mine = revoked_at; /* in the communicator revoked last */
	struct place *all = calloc((size_t)(unsigned)b->size, sizeof(mine));
	int rc = all ? bootstrap_allgather(b, "hvd.nccl.place", &mine, sizeof(mine), all, err, errlen)
		     : HVD_ERR_NOMEM;
	int *excluded = rc ? NULL : calloc((size_t)(unsigned)all[0].size + 1, sizeof(int));
	int n = excluded ? excluded_ranks(all, b->size, excluded) : -1;
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	config.blocking = 0;
	ncclResult_t nr = ncclSuccess;
	shrunk_from = n > 0 ? revoked_at.size : 0;
	if (n > 0)
		nr = poll_state(revoked, ncclInProgress, deadline);
	if (n > 0 && nr == ncclSuccess)
		nr = ncclCommShrink(revoked, excluded, n, &ctx->comm, &config, NCCL_SHRINK_ABORT);
	else if (n <= 0 && !rc)
		rc = new_comm(ctx, b, &config, &nr, err, errlen);
	if (!rc)
		nr = poll_state(ctx->comm, nr, deadline);
	if (!rc && nr != ncclSuccess) {
		nccl_stop(ctx, 0);
		rc = fail_msg(HVD_ERR_COMM, err, errlen, "hvd: %s: '%d ranks': %s", shrunk_from ?
			      "ncclCommShrink" : "ncclCommInitRankConfig", b->size, nr == ncclInProgress ?
			      "not ready within HVD_TIMEOUT_S" : ncclGetErrorString(nr));
	}
	abort_revoked();   /* shrunk from, or of no use to this world */
	free(excluded);
	free(all);
	return rc;
}

/* The NCCL stream, the chunked buckets' copy stream and its events, and
 * the scratch buffers (device, pinned host). */
static int open_buffers(struct nccl_ctx *ctx, char *err, size_t errlen)
{
	size_t words = (size_t)(unsigned)ctx->size + 1;
	const char *what = "cudaStreamCreateWithFlags";
	cudaError_t ce = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
	if (ce == cudaSuccess)
		ce = cudaStreamCreateWithFlags(&ctx->copy_stream, cudaStreamNonBlocking);
	if (ce == cudaSuccess)
		ce = cudaEventCreateWithFlags(&ctx->copied, cudaEventDisableTiming);
	for (int k = 0; k < 2 && ce == cudaSuccess; k++)
		ce = cudaEventCreateWithFlags(&ctx->reduced[k], cudaEventDisableTiming);
	if (ce == cudaSuccess) {
		what = "cudaMalloc";
		ce = cudaMalloc((void **)&ctx->scratch, words * sizeof(uint64_t));
	}
	if (ce == cudaSuccess) {
		what = "cudaHostAlloc";
		ce = cudaHostAlloc((void **)&ctx->sizes_host, words * sizeof(uint64_t),
				   cudaHostAllocDefault);
	}
	if (ce != cudaSuccess)
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: %s: 'device %d': %s", what,
				ctx->device, cudaGetErrorString(ce));
	return 0;
}

int comm_nccl_usable(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

int comm_nccl_open(struct comm *c, struct bootstrap *b, const struct hvd_settings *s,
		   double deadline, char *err, size_t errlen)
{
	struct nccl_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return HVD_ERR_NOMEM;
	ctx->rank = b->rank;
	ctx->size = b->size;
	pthread_mutex_init(&ctx->events_lock, NULL);
	cudaError_t ce = cudaSuccess; /* device 0 without the plugin's HVD_GPU_BUSID */
	if (s->gpu_busid[0])
		ce = cudaDeviceGetByPCIBusId(&ctx->device, s->gpu_busid);
	if (ce == cudaSuccess)
		ce = cudaSetDevice(ctx->device);
	int rc = ce == cudaSuccess ? 0 : fail_msg(HVD_ERR_COMM, err, errlen, "hvd: HVD_GPU_BUSID: "
						  "'%s': %s", s->gpu_busid[0] ? s->gpu_busid :
						  "device 0", cudaGetErrorString(ce));
	if (!rc)
		rc = open_buffers(ctx, err, errlen);
	if (!rc)
		rc = init_comm(ctx, b, deadline, err, errlen);
	if (rc) {
		nccl_finalize(ctx, 0);
		return rc;
	}
	c->ops = &nccl_ops;
	c->ctx = ctx;
	return 0;
}
