/* hvd_rt_test.c - the program tests/test_runtime_slurm.c runs under srun
 * (and standalone): one mode per behaviour, checks its own results, prints
 * `ok MODE` and exits 0, or prints what differs and exits 1. main() is the
 * only place that exits; failures from libhvd print hvd_error().
 *   init       start, print rank/size/backend, shut down
 *   exact      sum/average exactness, every dtype, 1 element .. MAX bytes
 *   fused      many small tensors in flight at once
 *   collect    broadcast, uneven allgatherv, barrier
 *   mismatch   rank 1 submits a differently named tensor
 *   loop       allreduce forever (for kill/stop tests), prints its pid
 *   backward   simulated backward pass: compute spans + async submits
 *   late S     rank 1 computes S seconds longer before its allreduce
 *   exchange S rank 0 waits S seconds, then every rank exchanges its host,
 *              node id and a 4 KiB blob through the bootstrap (PMIx
 *              Put/Fence/Get); prints how long its fence waited (a barrier
 *              across nodes waits for rank 0 on every node)
 *   repeat N V N steps of the same 40 allreduces (the plan cache's case);
 *              at step 3 variant V: same (nothing), count (every rank
 *              grows rep.7), order (rank 1 swaps rep.5 and rep.6), new
 *              (rank 1 adds rep.extra before rep.21), rename (rank 1
 *              calls rep.12, of the same size, rep.renamed), missing (rank 1
 *              leaves out rep.39 and sleeps 30 s), stop (rank 1 submits
 *              nothing and sleeps 30 s), quit (rank 1 calls hvd_shutdown
 *              instead), lonebarrier (rank 0 alone calls hvd_barrier
 *              after it); split: step 1 pauses 0.3 s after rep.19;
 *              barrier: every rank calls hvd_barrier after each step. Prints
 *              how many buckets the engines agreed on
 *   checksum   three fused buckets of non-integer values (f32 sum, f32
 *              average, bf16 sum); rank 0 prints a hash of every result
 *              bit (chunked and one-piece runs must print the same)
 *   small N F L O  N steps of the same 64 f32 tensors, F floats in all
 *              (a small bucket: it travels with the plan cache's vote),
 *              op O (sum or average), laid out L: forward (slices of one
 *              buffer), reversed (slices, last tensor first), scattered
 *              (a buffer each), mixed (rank 0 reversed, rank 1
 *              scattered, the others forward: rank 0's vote differs in
 *              layout, so on 4 ranks 2 and 3 agree in the first round and
 *              not in the second); rank 0 prints a
 *              hash of every result bit, every rank how many buckets the
 *              engines agreed on, how many of them went with the vote,
 *              how many submissions took the lane and how the votes
 *              travelled (shared memory, messages)
 *   steps N MS N allreduces of 4096 integers-valued floats, MS ms apart,
 *              each result checked; rank 0 prints `step K` as it goes and a
 *              checksum of all results at the end (for network-cut tests)
 *   shrink L P NCCL builds, launched without a scheduler: allreduces of
 *              device memory until one fails (the test kills rank L),
 *              then the others start again as the world without L
 *              (hvd_init_world; ranks renumbered in their old order, the
 *              new coordinator on 127.0.0.1:P), which shrinks the revoked communicator; each
 *              prints `rank R/S was R'/S': LIBRARY` and checks one
 *              allreduce of the ranks left. L = -1: nobody is lost, rank 1
 *              names its first tensor differently (a mismatch fails every
 *              rank) and the same world starts again
 *   grow L P   the same, but a spare (HVD_RT_TEST_JOINER=1: it never
 *              joins the first world) takes L's place as the last rank of
 *              the second, which has the first's size: a new communicator
 *   world P    started again at once as a given world (run_world)
 *   survive F [S]  no libhvd: PMIx_Init, then PMIx_Finalize when F is 1;
 *              rank 1 exits 3 at once (with S: no rank exits), the others
 *              print `alive R` after S seconds (default 4), or `sigterm R at
 *              MS` if one comes (docs/lost-rank.md)
 * For the control-plane attack tests (tests/slurm/attack.sh):
 *   HVD_RT_TEST_HOLD=P   rank 0 writes its pid to P.pid0 and starts; every
 *                        other rank waits for the file P.go before hvd_init
 *                        (rank 0's port is open, nobody has joined yet)
 *   HVD_RT_TEST_PAUSE=P  after hvd_init each rank writes P.ready<rank> and
 *                        waits for P.go (the secret is everywhere it goes)
 * HVD_RT_TEST_LATE="R K S" (steps): rank R sleeps S s before step K.
 * HVD_RT_TEST_ABORT=1 calls hvd_abort_job after a failure, and
 * HVD_RT_TEST_REPORT_DELAY_S=S1[,S2...] makes rank 1 print its failure S1
 * seconds late, rank 2 S2 and so on, the last figure for the ranks past
 * the list (a descheduled rank on a loaded machine); rank 0 never waits.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#include "../core/dtype.h"
#include "../engine/runtime.h"
#include "hvd.h"

static int abort_job_on_failure; /* HVD_RT_TEST_ABORT=1: hvd_abort_job after a failure */

/* This rank's figure in HVD_RT_TEST_REPORT_DELAY_S, 0 when unset. */
static double report_delay_s(void)
{
	const char *list = getenv("HVD_RT_TEST_REPORT_DELAY_S");
	if (!list || hvd_rank() < 1)
		return 0;
	for (int r = 1; r < hvd_rank() && strchr(list, ','); r++)
		list = strchr(list, ',') + 1;
	return atof(list);
}

/* The failure's record (hvd_lost_ranks), one line, for the tests to
 * compare with the message: "lost: silent ranks 1 hosts n1". */
static void print_lost(void)
{
	static const char *const kinds[] = { "none", "exited", "silent", "unreachable",
					     "never-joined" };
	static struct hvd_lost l;
	if (!hvd_lost_ranks(&l))
		return;
	fprintf(stderr, "lost: %s ranks", kinds[l.kind]);
	for (int i = 0; i < l.count; i++)
		fprintf(stderr, "%s%d", i ? "," : " ", l.ranks[i]);
	fprintf(stderr, " hosts");
	for (int i = 0; i < l.count; i++)
		fprintf(stderr, "%s%s", i ? "," : " ", l.hosts[i][0] ? l.hosts[i] : "?");
	fprintf(stderr, "\n");
}

static int fail(const char *what)
{
	double delay = report_delay_s();
	if (delay > 0)
		usleep((useconds_t)(delay * 1e6));
	fprintf(stderr, "%s\n", hvd_error()[0] ? hvd_error() : what);
	print_lost();
	if (abort_job_on_failure && hvd_abort_job(1))
		fprintf(stderr, "%s\n", hvd_error());
	return 1;
}

static double value(int rank, size_t i)
{
	return (double)((i * 7 + (size_t)rank * 3) % 16) - 7.0; /* -7..8: exact in bf16 */
}

static void fill(void *buf, size_t n, enum hvd_dtype t, int rank)
{
	for (size_t i = 0; i < n; i++) {
		double v = value(rank, i);
		switch (t) {
		case HVD_F32: ((float *)buf)[i] = (float)v; break;
		case HVD_F16: ((uint16_t *)buf)[i] = dtype_f32_to_f16((float)v); break;
		case HVD_BF16: ((uint16_t *)buf)[i] = dtype_f32_to_bf16((float)v); break;
		case HVD_I32: ((int32_t *)buf)[i] = (int32_t)v * 1000003 + (int32_t)i; break;
		case HVD_I64: ((int64_t *)buf)[i] = (int64_t)v * ((int64_t)1 << 40) + (int64_t)i; break;
		default: break;
		}
	}
}

static double got(const void *buf, size_t i, enum hvd_dtype t)
{
	switch (t) {
	case HVD_F32: return ((const float *)buf)[i];
	case HVD_F16: return dtype_f16_to_f32(((const uint16_t *)buf)[i]);
	case HVD_BF16: return dtype_bf16_to_f32(((const uint16_t *)buf)[i]);
	case HVD_I32: return ((const int32_t *)buf)[i];
	case HVD_I64: return (double)((const int64_t *)buf)[i];
	default: return 0;
	}
}

static double want(size_t i, enum hvd_dtype t, enum hvd_op op, int size)
{
	double s = 0;
	for (int r = 0; r < size; r++) {
		double v = value(r, i);
		if (t == HVD_I32)
			v = v * 1000003 + (double)i;
		else if (t == HVD_I64)
			v = v * (double)((int64_t)1 << 40) + (double)i;
		s += v;
	}
	if (op != HVD_AVERAGE)
		return s;
	/* the sum is exact; the host backends scale it by 1/size in f32 and
	 * narrow to the dtype: exact for 1, 2, 4 ranks, one rounding for 3, 6 */
	float avg = (float)s * (1.0f / (float)size);
	if (t == HVD_F16)
		return dtype_f16_to_f32(dtype_f32_to_f16(avg));
	if (t == HVD_BF16)
		return dtype_bf16_to_f32(dtype_f32_to_bf16(avg));
	return avg;
}

static int verify(const char *name, const void *buf, size_t n, enum hvd_dtype t, enum hvd_op op)
{
	for (size_t i = 0; i < n; i++) {
		double w = want(i, t, op, hvd_size()), g = got(buf, i, t);
		if (g != w) {
			static int printed;
			if (printed++ < 5) /* the first 5 mismatches are enough */
				fprintf(stderr, "rank %d: %s[%zu] = %.17g, want %.17g\n",
					hvd_rank(), name, i, g, w);
			return 1;
		}
	}
	return 0;
}

static int run_exact(size_t max_bytes)
{
	static const size_t counts[] = { 1, 3, 1000, 3001, 65537, 1 << 20, 16 << 20 }; /* 3001: uneven pieces */
	int bad = 0;
	for (int t = 0; t < HVD_DTYPE_COUNT; t++)
		for (int op = 0; op < 2; op++) {
			if (op == HVD_AVERAGE && !dtype_is_float((enum hvd_dtype)t))
				continue;
			for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
				size_t n = counts[k], bytes = n * dtype_size((enum hvd_dtype)t);
				if (bytes > max_bytes)
					continue;
				void *buf = malloc(bytes);
				char name[96];
				snprintf(name, sizeof(name), "exact.%s.%s.%zu", dtype_name((enum hvd_dtype)t),
					 op ? "avg" : "sum", n);
				fill(buf, n, (enum hvd_dtype)t, hvd_rank());
				if (hvd_allreduce(name, buf, n, (enum hvd_dtype)t, (enum hvd_op)op)) {
					free(buf);
					return fail(name);
				}
				bad |= verify(name, buf, n, (enum hvd_dtype)t, (enum hvd_op)op);
				free(buf);
			}
		}
	return bad;
}

/* `slices` 1: even ranks submit slices of one buffer, one after another
 * (a gradient buffer: reduced in place), odd ranks separate buffers
 * (copied through the fusion buffer); 2: the same slices last first
 * (gradients in backward order); the sums must not care. */
static int run_fused(int tensors, int slices)
{
	float **bufs = calloc((size_t)tensors, sizeof(*bufs));
	hvd_handle **hs = calloc((size_t)tensors, sizeof(*hs));
	int bad = 0, one_buffer = slices && hvd_rank() % 2 == 0;
	size_t total = 0;
	for (int k = 0; k < tensors; k++)
		total += 1 + (size_t)(k * 37) % 3000;
	float *all = one_buffer ? malloc(total * sizeof(float)) : NULL;
	float *next = all && slices == 2 ? all + total : all;
	for (int k = 0; k < tensors; k++) {
		size_t n = 1 + (size_t)(k * 37) % 3000; /* mixed sizes around the test threshold */
		next -= one_buffer && slices == 2 ? n : 0;
		bufs[k] = one_buffer ? next : malloc(n * sizeof(float));
		next += one_buffer && slices == 1 ? n : 0;
		fill(bufs[k], n, HVD_F32, hvd_rank());
		char name[64];
		snprintf(name, sizeof(name), "fused.%d", k);
		if (hvd_allreduce_async(name, bufs[k], n, HVD_F32, k >= tensors / 2 ? HVD_AVERAGE : HVD_SUM, &hs[k]))
			return fail(name);
	}
	for (int k = 0; k < tensors; k++) {
		size_t n = 1 + (size_t)(k * 37) % 3000;
		if (hvd_wait(hs[k]))
			return fail("wait");
		char name[64];
		snprintf(name, sizeof(name), "fused.%d", k);
		bad |= verify(name, bufs[k], n, HVD_F32, k >= tensors / 2 ? HVD_AVERAGE : HVD_SUM);
		if (!one_buffer)
			free(bufs[k]);
	}
	free(all);
	free(bufs);
	free(hs);
	return bad;
}

static int run_collect(void)
{
	int rank = hvd_rank(), size = hvd_size(), bad = 0;
	int64_t b[5];
	for (int i = 0; i < 5; i++)
		b[i] = rank == size - 1 ? 1000 + i : -1;
	if (hvd_broadcast("bcast", b, 5, HVD_I64, size - 1))
		return fail("broadcast");
	for (int i = 0; i < 5; i++)
		bad |= b[i] != 1000 + i;
	size_t mine = (size_t)rank * 3 + 1, total = 0; /* uneven: 1, 4, 7, 10 */
	for (int r = 0; r < size; r++)
		total += (size_t)r * 3 + 1;
	float *send = malloc(mine * sizeof(float)), *recv = calloc(total, sizeof(float));
	size_t *counts = calloc((size_t)size, sizeof(size_t));
	for (size_t i = 0; i < mine; i++)
		send[i] = (float)(rank * 100 + (int)i);
	if (hvd_allgatherv("gather", send, mine, recv, total, counts, HVD_F32))
		return fail("allgatherv");
	size_t off = 0;
	for (int r = 0; r < size; r++) {
		bad |= counts[r] != (size_t)r * 3 + 1;
		for (size_t i = 0; i < counts[r]; i++)
			bad |= recv[off + i] != (float)(r * 100 + (int)i);
		off += counts[r];
	}
	if (hvd_barrier())
		return fail("barrier");
	free(send);
	free(recv);
	free(counts);
	if (bad)
		fprintf(stderr, "rank %d: broadcast/allgatherv results differ\n", rank);
	return bad;
}

static int run_mismatch(void)
{
	float x[4] = { 1, 2, 3, 4 };
	if (hvd_allreduce("agree", x, 4, HVD_F32, HVD_SUM))
		return fail("agree");
	const char *name = hvd_rank() == 1 ? "grad.rank1.only" : "grad.common";
	if (hvd_allreduce(name, x, 4, HVD_F32, HVD_SUM))
		return fail(name);
	return 0;
}

static int run_loop(void)
{
	printf("pid %d rank %d\n", (int)getpid(), hvd_rank());
	fflush(stdout);
	float x[1024];
	for (long step = 0;; step++) {
		for (int i = 0; i < 1024; i++)
			x[i] = 1;
		if (hvd_allreduce("loop", x, 1024, HVD_F32, HVD_SUM))
			return fail("loop");
		usleep(10000);
	}
}

static int run_late(double seconds)
{
	float x[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	if (hvd_rank() == 1)
		usleep((useconds_t)(seconds * 1e6));
	if (hvd_allreduce("late.grad", x, 8, HVD_F32, HVD_SUM))
		return fail("late.grad");
	return x[0] != (float)hvd_size();
}

static int init_next_world(int rank, int size, const char *port)
{
	char coordinator[64];
	const char *secret = getenv("HVD_SECRET_FILE");
	snprintf(coordinator, sizeof(coordinator), "127.0.0.1:%s", port);
	/* the first world's HVD_RANK/HVD_SIZE/HVD_COORDINATOR stay set: the
	 * struct must win over them */
	struct hvd_world w = { rank, size, coordinator, secret ? secret : "" };
	return hvd_init_world(&w);
}

/* world PORT: launched as index r (JOB_COMPLETION_INDEX, else HVD_RANK)
 * of HVD_SIZE n, each process starts
 * instead as rank n-1-r of a world given to hvd_init_world, whose
 * coordinator is 127.0.0.1:PORT (the launch's is another port); worlds
 * without 0 <= rank < size are refused first. Prints `rank R/S was r
 * sum X` after one allreduce of rank + 1. */
static int run_world(const char *port)
{
	const char *r = getenv("JOB_COMPLETION_INDEX"), *n = getenv("HVD_SIZE");
	if (!r)
		r = getenv("HVD_RANK");
	int size = n ? atoi(n) : 0, rank = size - 1 - (r ? atoi(r) : 0);
	struct hvd_world bad = { size, size, "127.0.0.1:1", "secret" };
	if (hvd_init_world(NULL) != HVD_ERR_USAGE || hvd_init_world(&bad) != HVD_ERR_USAGE)
		return fail("hvd_init_world took a world without 0 <= rank < size");
	printf("refused: %s\n", hvd_error());
	if (init_next_world(rank, size, port))
		return fail("hvd_init_world");
	float v = (float)(hvd_rank() + 1);
	if (hvd_allreduce("world.sum", &v, 1, HVD_F32, HVD_SUM))
		return fail("allreduce in the given world");
	printf("rank %d/%d was %s sum %g\n", hvd_rank(), hvd_size(), r ? r : "?", v);
	if (hvd_shutdown())
		return fail("hvd_shutdown");
	printf("ok world\n");
	return 0;
}

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

/* dev[0..255] = v on every rank, summed; *got = the result's first. */
static int device_sum(const char *name, float *dev, float v, float *got)
{
	float host[256];
	for (int i = 0; i < 256; i++)
		host[i] = v;
	if (cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice) != cudaSuccess)
		return -1;
	int rc = hvd_allreduce(name, dev, 256, HVD_F32, HVD_SUM);
	if (!rc && cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost) != cudaSuccess)
		return -1;
	*got = host[255];
	return rc;
}

/* The next world's environment: rank, size, the coordinator on port. */
/* The second world's allreduce: old rank r gives r + 1, a spare size + 1. */
static int sum_after(float *dev, float mine, float want, int old, int size)
{
	float got = 0;
	printf("rank %d/%d was %d/%d: %s\n", hvd_rank(), hvd_size(), old, size, hvd_backend_library());
	int rc = device_sum("shrink.after", dev, mine, &got);
	cudaFree(dev);
	if (rc)
		return fail("shrink.after");
	if (got != want)
		printf("the ranks left summed %g, want %g\n", got, want);
	return got != want;
}

static int run_shrink(int lost, const char *port, int grow)
{
	int old = hvd_rank(), size = hvd_size();
	float *dev = NULL, got = 0, want = (float)(size * (size + 1) / 2 - (lost + 1));
	if (cudaMalloc((void **)&dev, 256 * sizeof(float)) != cudaSuccess)
		return fail("cudaMalloc");
	printf("pid %d rank %d\n", (int)getpid(), old);
	fflush(stdout);
	const char *name = lost < 0 && old == 1 ? "shrink.rank1.only" : "shrink.before";
	while (device_sum(name, dev, 1, &got) == 0)
		usleep(10000);
	fprintf(stderr, "lost: %s\n", hvd_error());
	hvd_shutdown();
	if (init_next_world(old - (lost >= 0 && old > lost), size - (lost >= 0) + grow, port))
		return fail("hvd_init (the ranks left)");
	return sum_after(dev, (float)(old + 1), want + (grow ? (float)(size + 1) : 0), old, size);
}

/* A spare: the last rank of the world that replaces the lost rank L. */
static int run_join(int lost, const char *port)
{
	const char *env = getenv("HVD_SIZE");
	int size = env ? atoi(env) : 0;
	float *dev = NULL, want = (float)(size * (size + 1) / 2 - (lost + 1) + size + 1);
	if (size < 2 || init_next_world(size - 1, size, port))
		return fail("hvd_init (a spare joining)");
	if (cudaMalloc((void **)&dev, 256 * sizeof(float)) != cudaSuccess)
		return fail("cudaMalloc");
	int bad = sum_after(dev, (float)(size + 1), want, -1, size);
	return hvd_shutdown() ? fail("hvd_shutdown") : bad;
}
#endif

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct exchange_row {
	int32_t rank, node_id, local_rank, pad;
	char host[64];
	unsigned char blob[4096];
};

static void exchange_fill(struct exchange_row *row, int rank)
{
	memset(row, 0, sizeof(*row));
	row->rank = rank;
	for (size_t i = 0; i < sizeof(row->blob); i++)
		row->blob[i] = (unsigned char)(i * 31 + (size_t)rank * 7);
}

/* Internals on purpose: the bootstrap exchange itself, not the public API. */
static int run_exchange(double delay_s)
{
	struct runtime *rt = runtime_rt;
	int size = hvd_size(), rank = hvd_rank(), bad = 0;
	struct exchange_row mine, *all = calloc((size_t)size, sizeof(*all));
	exchange_fill(&mine, rank);
	mine.node_id = hvd_node_id();
	mine.local_rank = hvd_local_rank();
	snprintf(mine.host, sizeof(mine.host), "%s", hvd_hostname());
	if (rank == 0)
		usleep((useconds_t)(delay_s * 1e6));
	double t0 = now_s();
	char err[2048];
	if (bootstrap_allgather(&rt->boot, "hvdtest.exchange", &mine, sizeof(mine), all, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		free(all);
		return 1;
	}
	double total = now_s() - t0;
	for (int r = 0; r < size; r++) {
		struct exchange_row want;
		exchange_fill(&want, r);
		if (all[r].rank != r || memcmp(all[r].blob, want.blob, sizeof(want.blob))) {
			fprintf(stderr, "rank %d: rank %d's exchange row differs\n", rank, r);
			bad = 1;
		}
	}
	printf("exchange rank %d host %s node %d fence_ms %.0f total_ms %.0f peers", rank, mine.host,
	       mine.node_id, rt->boot.last_fence_s * 1e3, total * 1e3);
	for (int r = 0; r < size; r++)
		printf(" %d@%s/%d", r, all[r].host, all[r].node_id);
	printf("\n");
	free(all);
	return bad;
}

/* HVD_RT_TEST_LATE="RANK STEP SECONDS": that rank prints `late` and
 * sleeps before submitting that step (behind while the others wait). */
static void maybe_late(long step)
{
	const char *late = getenv("HVD_RT_TEST_LATE");
	int rank;
	long at;
	double seconds;
	if (late && sscanf(late, "%d %ld %lf", &rank, &at, &seconds) == 3 && rank == hvd_rank() &&
	    step == at) {
		printf("late\n");
		fflush(stdout);
		usleep((useconds_t)(seconds * 1e6));
	}
}

static int run_steps(long steps, int ms)
{
	enum { N = 4096 };
	static float x[N];
	double checksum = 0;
	printf("pid %d rank %d\n", (int)getpid(), hvd_rank());
	fflush(stdout);
	for (long s = 0; s < steps; s++) {
		maybe_late(s);
		for (int i = 0; i < N; i++)
			x[i] = (float)((i + s * 13 + hvd_rank() * 5) % 64);
		if (hvd_allreduce("steps", x, N, HVD_F32, HVD_SUM))
			return fail("steps");
		for (int i = 0; i < N; i++) {
			double w = 0;
			for (int r = 0; r < hvd_size(); r++)
				w += (double)((i + s * 13 + r * 5) % 64);
			if (x[i] != w) {
				fprintf(stderr, "rank %d: step %ld [%d] = %g, want %g\n", hvd_rank(), s, i, x[i], w);
				return 1;
			}
			checksum += x[i] * (double)((s % 7) + 1);
		}
		if (hvd_rank() == 0) {
			printf("step %ld\n", s);
			fflush(stdout);
		}
		usleep((useconds_t)ms * 1000);
	}
	if (hvd_rank() == 0)
		printf("checksum %.0f\n", checksum);
	return 0;
}

#define REP_TENSORS 40

static size_t rep_count(int k, int step, const char *variant)
{
	size_t n = 1 + (size_t)(k * 53) % 700;
	return n + (step == 2 && k == 7 && !strcmp(variant, "count"));
}

/* Step `step`'s submission order on this rank (-1 = rep.extra). */
static int rep_order(int step, const char *variant, int *order)
{
	int n = 0, odd = step == 2 && hvd_rank() == 1;
	if (odd && !strcmp(variant, "stop"))
		return 0;
	for (int k = 0; k < REP_TENSORS; k++) {
		if (odd && !strcmp(variant, "new") && k == 21)
			order[n++] = -1;
		if (odd && !strcmp(variant, "missing") && k == REP_TENSORS - 1)
			continue;
		order[n++] = odd && !strcmp(variant, "order") && (k == 5 || k == 6) ? 11 - k : k;
	}
	return n;
}

/* Whether buf's n elements differ from the sum over the ranks of
 * value(rank + step, i) (what fill() gave every rank at that step). */
static int sums_differ(const float *buf, size_t n, int step)
{
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		double w = 0;
		for (int r = 0; r < hvd_size(); r++)
			w += value(r + step, i);
		bad |= buf[i] != (float)w;
	}
	return bad;
}

static int rep_step(float **bufs, int step, const char *variant)
{
	int order[REP_TENSORS + 1], n = rep_order(step, variant, order), bad = 0;
	hvd_handle *hs[REP_TENSORS + 1];
	for (int j = 0; j < n; j++) {
		int k = order[j] < 0 ? REP_TENSORS : order[j];
		size_t cnt = k == REP_TENSORS ? 16 : rep_count(k, step, variant);
		fill(bufs[k], cnt, HVD_F32, hvd_rank() + step);
		char name[32];
		int renamed = k == 12 && step == 2 && hvd_rank() == 1 && !strcmp(variant, "rename");
		snprintf(name, sizeof(name), k == REP_TENSORS ? "rep.extra" : renamed ? "rep.renamed"
			 : "rep.%d", k);
		if (hvd_allreduce_async(name, bufs[k], cnt, HVD_F32, HVD_SUM, &hs[j]))
			return fail(name);
		if (step == 0 && j == REP_TENSORS / 2 - 1 && !strcmp(variant, "split"))
			usleep(300000); /* step 1 is learnt as two buckets (HVD_CYCLE_TIME_MS) */
	}
	if (n < REP_TENSORS)
		sleep(30); /* "missing": the others wait for rep.39 */
	int failed = 0;
	for (int j = 0; j < n; j++) /* every handle, even after a failure: each frees its entry */
		failed |= hvd_wait(hs[j]) != 0;
	if (failed)
		return fail("wait");
	for (int k = 0; k < REP_TENSORS; k++)
		bad |= sums_differ(bufs[k], rep_count(k, step, variant), step);
	if (bad)
		fprintf(stderr, "rank %d: step %d: results differ\n", hvd_rank(), step);
	return bad;
}

static int run_repeat(int steps, const char *variant)
{
	float *bufs[REP_TENSORS + 1];
	int bad = 0;
	for (int k = 0; k <= REP_TENSORS; k++)
		bufs[k] = malloc(800 * sizeof(float));
	for (int step = 0; step < steps && !bad; step++) {
		if (step == 2 && hvd_rank() == 1 && !strcmp(variant, "quit"))
			break; /* main() shuts down while the others submit */
		bad = rep_step(bufs, step, variant);
		if (!bad && !strcmp(variant, "barrier") && hvd_barrier())
			bad = fail("barrier");
		if (!bad && !strcmp(variant, "lonebarrier") && step == 2 && hvd_rank() == 0 &&
		    hvd_barrier())
			bad = fail("barrier"); /* rank 1 submits step 3 instead */
	}
	for (int k = 0; k <= REP_TENSORS; k++)
		free(bufs[k]);
	struct runtime *rt = runtime_rt;
	if (!bad && rt) {
		pthread_mutex_lock(&rt->lock);
		printf("rank %d: %llu buckets agreed\n", hvd_rank(),
		       (unsigned long long)rt->fast_buckets);
		pthread_mutex_unlock(&rt->lock);
	}
	return bad;
}

/* Values with every mantissa bit in use, different on every rank. */
static float noisy(int rank, size_t i)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(rank * 40503 + 17);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (float)(x & 0xffffff) / 16777216.0f * 3.0f - 1.5f;
}

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
	return h;
}

/* One fused bucket of `tensors` tensors of dtype t; folds the results into *h. */
static int checksum_bucket(const char *tag, enum hvd_dtype t, enum hvd_op op, int tensors,
			   uint64_t *h)
{
	void **bufs = calloc((size_t)tensors, sizeof(*bufs));
	hvd_handle **hs = calloc((size_t)tensors, sizeof(*hs));
	for (int k = 0; k < tensors; k++) {
		size_t n = 1 + (size_t)(k * 977) % 5000;
		bufs[k] = malloc(n * dtype_size(t));
		for (size_t i = 0; i < n; i++) {
			float v = noisy(hvd_rank(), i + (size_t)k * 7919);
			if (t == HVD_BF16)
				((uint16_t *)bufs[k])[i] = dtype_f32_to_bf16(v);
			else
				((float *)bufs[k])[i] = v;
		}
		char name[64];
		snprintf(name, sizeof(name), "checksum.%s.%d", tag, k);
		if (hvd_allreduce_async(name, bufs[k], n, t, op, &hs[k]))
			return fail(name);
	}
	for (int k = 0; k < tensors; k++) {
		if (hvd_wait(hs[k]))
			return fail("wait");
		*h = fnv(*h, bufs[k], (1 + (size_t)(k * 977) % 5000) * dtype_size(t));
		free(bufs[k]);
	}
	free(bufs);
	free(hs);
	return 0;
}

static int run_checksum(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	if (checksum_bucket("sum", HVD_F32, HVD_SUM, 50, &h) ||
	    checksum_bucket("avg", HVD_F32, HVD_AVERAGE, 50, &h) ||
	    checksum_bucket("bf16", HVD_BF16, HVD_SUM, 50, &h))
		return 1;
	if (hvd_rank() == 0)
		printf("checksum %016llx\n", (unsigned long long)h);
	return 0;
}

/* Shared-memory objects named like the vote's (vote/vote_shm.c):
 * none while a job runs, since rank 0 unlinks it once all attached. */
static int vote_names_in_dev_shm(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "hvd-vote-", 9);
	if (d)
		closedir(d);
	return n;
}

#define SMALL_TENSORS 64

/* Where tensor k of n (`per` floats each, the last takes the rest) lies. */
static float *small_place(float *one, float **own, int k, size_t per, size_t floats,
			  const char *layout)
{
	int mixed = !strcmp(layout, "mixed");
	int reversed = !strcmp(layout, "reversed") || (mixed && hvd_rank() == 0);
	int scattered = !strcmp(layout, "scattered") || (mixed && hvd_rank() == 1);
	if (scattered)
		return own[k];
	if (!reversed)
		return one + (size_t)k * per;
	size_t last = floats - (size_t)(SMALL_TENSORS - 1) * per; /* tensor 63 first */
	return k == SMALL_TENSORS - 1 ? one : one + last + (size_t)(SMALL_TENSORS - 2 - k) * per;
}

static int small_step(float *one, float **own, size_t floats, const char *layout,
		      enum hvd_op op, int step, uint64_t *h)
{
	size_t per = floats / SMALL_TENSORS;
	hvd_handle *hs[SMALL_TENSORS];
	for (int k = 0; k < SMALL_TENSORS; k++) {
		size_t n = k == SMALL_TENSORS - 1 ? floats - (SMALL_TENSORS - 1) * per : per;
		float *t = small_place(one, own, k, per, floats, layout);
		for (size_t i = 0; i < n; i++)
			t[i] = noisy(hvd_rank() + 7 * step, (size_t)k * 1000 + i);
		char name[32];
		snprintf(name, sizeof(name), "small.%d", k);
		if (hvd_allreduce_async(name, t, n, HVD_F32, op, &hs[k]))
			return fail(name);
	}
	for (int k = 0; k < SMALL_TENSORS; k++) {
		size_t n = k == SMALL_TENSORS - 1 ? floats - (SMALL_TENSORS - 1) * per : per;
		if (hvd_wait(hs[k]))
			return fail("wait");
		*h = fnv(*h, small_place(one, own, k, per, floats, layout), n * sizeof(float));
	}
	return 0;
}

static int run_small(int steps, size_t floats, const char *layout, const char *op_name)
{
	enum hvd_op op = !strcmp(op_name, "average") ? HVD_AVERAGE : HVD_SUM;
	if (floats < SMALL_TENSORS)
		floats = SMALL_TENSORS;
	float *one = malloc(floats * sizeof(float)), *own[SMALL_TENSORS];
	for (int k = 0; k < SMALL_TENSORS; k++)
		own[k] = malloc(floats * sizeof(float)); /* room for the last, longest one */
	uint64_t h = 0xcbf29ce484222325ull;
	int bad = 0;
	for (int step = 0; step < steps && !bad; step++)
		bad = small_step(one, own, floats, layout, op, step, &h);
	for (int k = 0; k < SMALL_TENSORS; k++)
		free(own[k]);
	free(one);
	struct runtime *rt = runtime_rt;
	if (bad || !rt)
		return 1;
	pthread_mutex_lock(&rt->lock);
	printf("rank %d: %llu buckets agreed, votes by %s, %d vote names in /dev/shm\n", hvd_rank(),
	       (unsigned long long)rt->fast_buckets, rt->vote.ops ? rt->vote.ops->name : "nothing",
	       vote_names_in_dev_shm());
	pthread_mutex_unlock(&rt->lock);
	if (hvd_rank() == 0)
		printf("checksum %016llx\n", (unsigned long long)h);
	return 0;
}

/* Each refused name prints hvd_error(); a name of 127 printable bytes
 * passes (the longest there is). */
static int run_names(void)
{
	char longest[HVD_NAME_MAX], too_long[HVD_NAME_MAX + 8], long_odd[HVD_NAME_MAX + 8];
	char odd[] = "grad\tbias";
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memset(too_long, 'b', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	memcpy(long_odd, too_long, sizeof(long_odd));
	long_odd[4] = '\n'; /* too long first: and the message stays one line */
	float x[4] = { 1, 2, 3, 4 };
	const char *bad[] = { "", too_long, odd, long_odd };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		hvd_handle *h = NULL;
		if (hvd_allreduce_async(bad[k], x, 4, HVD_F32, HVD_SUM, &h) != HVD_ERR_USAGE || h)
			return fail("a bad name was taken");
		printf("refused: %s\n", hvd_error());
	}
	if (hvd_allreduce(longest, x, 4, HVD_F32, HVD_SUM))
		return fail("a name of 127 bytes");
	return 0;
}

static void busy_ms(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

static int run_backward(int layers)
{
	float **grads = calloc((size_t)layers, sizeof(*grads));
	hvd_handle **hs = calloc((size_t)layers, sizeof(*hs));
	for (int l = layers - 1; l >= 0; l--) {
		hvd_timeline_begin("compute", "backward compute");
		busy_ms(20);
		grads[l] = malloc(4096 * sizeof(float));
		fill(grads[l], 4096, HVD_F32, hvd_rank());
		hvd_timeline_end("compute");
		char name[64];
		snprintf(name, sizeof(name), "layer%d.weight.grad", l);
		if (hvd_allreduce_async(name, grads[l], 4096, HVD_F32, HVD_AVERAGE, &hs[l]))
			return fail(name);
	}
	int bad = 0;
	for (int l = 0; l < layers; l++) {
		if (hvd_wait(hs[l]))
			return fail("wait");
		bad |= verify("grad", grads[l], 4096, HVD_F32, HVD_AVERAGE);
		free(grads[l]);
	}
	free(grads);
	free(hs);
	return bad;
}

static void touch(const char *path, const char *text)
{
	char tmp[1100];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
		rename(tmp, path);
	}
}

static void wait_for(const char *path)
{
	for (int i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

/* HVD_RT_TEST_HOLD / HVD_RT_TEST_PAUSE: see the header. */
static void rendezvous(const char *var, int rank, int before_init)
{
	const char *p = getenv(var);
	if (!p || !*p)
		return;
	char path[1100], text[32];
	if (before_init && rank == 0) {
		snprintf(path, sizeof(path), "%s.pid0", p);
		snprintf(text, sizeof(text), "%d\n", (int)getpid());
		touch(path, text);
		return;
	}
	if (!before_init) {
		snprintf(path, sizeof(path), "%s.ready%d", p, rank);
		touch(path, "");
	}
	snprintf(path, sizeof(path), "%s.go", p);
	wait_for(path);
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	got_term = 1;
}

/* PMIx alone (no libhvd): rank 1 exits 3 right after PMIx_Init (and
 * PMIx_Finalize with finalize) unless `seconds` is given (> 0). The
 * others print `alive R` `seconds` (default 4) later, or, on a SIGTERM,
 * `sigterm R at MS` and wait up to 30 s for the SIGKILL that follows it
 * (how long Slurm leaves a rank to save). */
static int run_survive(int finalize, double seconds)
{
	pmix_proc_t me;
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
		return fail("PMIx_Init");
	if (finalize)
		PMIx_Finalize(NULL, 0);
	signal(SIGTERM, on_term);
	printf("pid %d rank %u\n", (int)getpid(), me.rank);
	fflush(stdout);
	if (me.rank == 1 && seconds <= 0)
		_exit(3);
	double t0 = now_s(), wait = seconds > 0 ? seconds : 4;
	for (int said = 0; now_s() - t0 < (got_term ? 30 : wait); usleep(10000))
		if (got_term && !said++) {
			printf("sigterm %u at %.0f ms\n", me.rank, (now_s() - t0) * 1e3);
			fflush(stdout);
		}
	if (!got_term)
		printf("alive %u\n", me.rank);
	if (!finalize)
		PMIx_Finalize(NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "init";
	const char *abort_env = getenv("HVD_RT_TEST_ABORT");
	abort_job_on_failure = abort_env && !strcmp(abort_env, "1");
	const char *procid = getenv("SLURM_PROCID");
	rendezvous("HVD_RT_TEST_HOLD", procid ? atoi(procid) : 0, 1);
	if (!strcmp(mode, "world") && argc > 2)
		return run_world(argv[2]);
	if (!strcmp(mode, "survive"))
		return run_survive(argc > 2 && atoi(argv[2]) == 1, argc > 3 ? atof(argv[3]) : 0);
#ifdef HAVE_CUDA
	if (!strcmp(mode, "grow") && argc > 3 && getenv("HVD_RT_TEST_JOINER"))
		return run_join(atoi(argv[2]), argv[3]);
#endif
	if (hvd_init())
		return fail("hvd_init");
	rendezvous("HVD_RT_TEST_PAUSE", hvd_rank(), 0);
	int bad = 0, rank = hvd_rank();
	if (!strcmp(mode, "init"))
		printf("rank %d/%d local %d/%d backend %s threads %d node %d/%d\n", hvd_rank(),
		       hvd_size(), hvd_local_rank(), hvd_local_size(), hvd_backend_name(),
		       hvd_compute_threads(0), hvd_node_id(), hvd_node_count());
	else if (!strcmp(mode, "exact"))
		bad = run_exact(argc > 2 ? strtoull(argv[2], NULL, 10) : (64u << 20));
	else if (!strcmp(mode, "fused"))
		bad = run_fused(argc > 2 ? atoi(argv[2]) : 300, 0);
	else if (!strcmp(mode, "slices"))
		bad = run_fused(argc > 2 ? atoi(argv[2]) : 300, 1);
	else if (!strcmp(mode, "backward-slices"))
		bad = run_fused(argc > 2 ? atoi(argv[2]) : 300, 2);
	else if (!strcmp(mode, "collect"))
		bad = run_collect();
	else if (!strcmp(mode, "mismatch"))
		bad = run_mismatch();
	else if (!strcmp(mode, "loop"))
		bad = run_loop();
	else if (!strcmp(mode, "backward"))
		bad = run_backward(argc > 2 ? atoi(argv[2]) : 12);
	else if (!strcmp(mode, "late"))
		bad = run_late(argc > 2 ? atof(argv[2]) : 1);
	else if (!strcmp(mode, "exchange"))
		bad = run_exchange(argc > 2 ? atof(argv[2]) : 0);
	else if (!strcmp(mode, "repeat"))
		bad = run_repeat(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? argv[3] : "same");
	else if (!strcmp(mode, "checksum"))
		bad = run_checksum();
	else if (!strcmp(mode, "names"))
		bad = run_names();
	else if (!strcmp(mode, "small"))
		bad = run_small(argc > 2 ? atoi(argv[2]) : 20, argc > 3 ? strtoul(argv[3], NULL, 10) : 1024,
				argc > 4 ? argv[4] : "forward", argc > 5 ? argv[5] : "sum");
#ifdef HAVE_CUDA
	else if (!strcmp(mode, "shrink") && argc > 3)
		bad = run_shrink(atoi(argv[2]), argv[3], 0);
	else if (!strcmp(mode, "grow") && argc > 3)
		bad = run_shrink(atoi(argv[2]), argv[3], 1);
#endif
	else if (!strcmp(mode, "steps"))
		bad = run_steps(argc > 2 ? atol(argv[2]) : 100, argc > 3 ? atoi(argv[3]) : 10);
	else {
		fprintf(stderr, "hvd-rt-test: '%s': unknown mode\n", mode);
		hvd_shutdown();
		return 2;
	}
	if (bad) {
		hvd_shutdown();
		return 1;
	}
	if (hvd_shutdown())
		return fail("hvd_shutdown");
	if (rank == 0)
		printf("ok %s\n", mode);
	return 0;
}
