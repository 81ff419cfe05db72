/* nccl_calls.c - the NCCL calls runtime/transport/comm_nccl.c makes, on one
 * rank and one device, each printed as one line: what it returned, the
 * communicator's state after it (ncclCommGetAsyncError) and how long the
 * state took to leave ncclInProgress. Run against the real library on a
 * GPU node and against the emulated NCCL (make GPU_EMU=1), the two
 * outputs differ exactly where the emulation does not behave like NCCL.
 *
 *   hvd-nccl-calls          every sequence below, in order
 * Sequences: a non-blocking communicator's init, all-reduce (f32 sum,
 * bf16 average), broadcast and all-gather with their results checked;
 * revoke, waiting for quiescence; a second revoke, a collective and a
 * shrink on the revoked communicator; abort. Then a shrink issued before
 * a revoke has quiesced, and a revoke of a blocking communicator.
 * Exit status: 1 when a collective's result is wrong or a state never
 * leaves ncclInProgress within 30 s; what a call returns is reported,
 * not judged (that is the point of comparing the two runs).
 * ncclCommRevoke and ncclCommShrink are weak references: a library
 * without them (NCCL before 2.28's revoke) is said in one line and those
 * calls are left out.
 * What it does not do: more than one rank (a node's one GPU cannot hold
 * two ranks of a communicator), timing of anything but state changes.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 256
#define WAIT_S 30.0

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The state after a call, polled while ncclInProgress (at most WAIT_S). */
static ncclResult_t settle(ncclComm_t comm, double *ms)
{
	double t0 = now_ms();
	ncclResult_t state = ncclInProgress;
	while (comm && ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress &&
	       now_ms() - t0 < WAIT_S * 1e3) {
		struct timespec pause = { 0, 1000000 };
		nanosleep(&pause, NULL);
	}
	*ms = now_ms() - t0;
	return state;
}

static int stuck;
/* Weak: NULL where the loaded NCCL lacks them. */
#pragma weak ncclCommRevoke
#pragma weak ncclCommShrink

/* One line: the call, what it returned, the state after it settled. */
static ncclResult_t report(const char *call, ncclResult_t rc, ncclComm_t comm)
{
	double ms = 0;
	ncclResult_t state = comm ? settle(comm, &ms) : ncclSuccess;
	printf("%-34s returned %-20s state %-20s after %.1f ms\n", call, ncclGetErrorString(rc),
	       comm ? ncclGetErrorString(state) : "-", ms);
	stuck |= comm && state == ncclInProgress;
	fflush(stdout);
	return state;
}

static ncclComm_t make_comm(int blocking, const char *name)
{
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	config.blocking = blocking;
	ncclResult_t rc = ncclGetUniqueId(&id);
	if (rc != ncclSuccess) {
		report("ncclGetUniqueId", rc, NULL);
		return NULL;
	}
	rc = ncclCommInitRankConfig(&comm, 1, id, 0, &config);
	report(name, rc, comm);
	return comm;
}

/* A collective's result against what one rank must get. */
static int expect_rows(const char *what, const float *dev, float want)
{
	float host[N];
	if (cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost) != cudaSuccess) {
		printf("%s: cudaMemcpy failed\n", what);
		return 1;
	}
	for (int i = 0; i < N; i++)
		if (host[i] != want + (float)i) {
			printf("%s: element %d is %g, want %g\n", what, i, host[i], want + (float)i);
			return 1;
		}
	return 0;
}

static int fill(float *dev, float base)
{
	float host[N];
	for (int i = 0; i < N; i++)
		host[i] = base + (float)i;
	return cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice) != cudaSuccess;
}

static int collectives(ncclComm_t comm, cudaStream_t s, float *a, float *b, uint16_t *h)
{
	int bad = fill(a, 1) || fill(b, 0);
	report("ncclAllReduce f32 sum in place", ncclAllReduce(a, a, N, ncclFloat32, ncclSum, comm, s), comm);
	cudaStreamSynchronize(s);
	bad |= expect_rows("allreduce", a, 1);
	uint16_t host[N], back[N]; /* bf16: a float's upper half, exact here */
	for (int i = 0; i < N; i++) {
		float f = (float)(i % 64);
		uint32_t bits;
		memcpy(&bits, &f, sizeof(bits));
		host[i] = (uint16_t)(bits >> 16);
	}
	bad |= cudaMemcpy(h, host, sizeof(host), cudaMemcpyHostToDevice) != cudaSuccess;
	report("ncclAllReduce bf16 avg in place", ncclAllReduce(h, h, N, ncclBfloat16, ncclAvg, comm, s), comm);
	cudaStreamSynchronize(s);
	bad |= cudaMemcpy(back, h, sizeof(back), cudaMemcpyDeviceToHost) != cudaSuccess;
	bad |= memcmp(host, back, sizeof(host)) != 0;
	report("ncclBroadcast f32 root 0", ncclBroadcast(a, b, N, ncclFloat32, 0, comm, s), comm);
	cudaStreamSynchronize(s);
	bad |= expect_rows("broadcast", b, 1);
	bad |= fill(b, 0);
	report("ncclAllGather f32", ncclAllGather(a, b, N, ncclFloat32, comm, s), comm);
	cudaStreamSynchronize(s);
	bad |= expect_rows("allgather", b, 1);
	return bad;
}

int main(void)
{
	int version = 0, runtime = 0, devices = 0;
	char bus[32] = "";
	ncclGetVersion(&version);
	cudaRuntimeGetVersion(&runtime);
	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1 ||
	    cudaDeviceGetPCIBusId(bus, sizeof(bus), 0) != cudaSuccess) {
		fprintf(stderr, "hvd-nccl-calls: no CUDA device 0\n");
		return 1;
	}
	printf("NCCL %d, CUDA runtime %d, device 0 of %d at %s\n", version, runtime, devices, bus);
	cudaSetDevice(0);
	cudaStream_t s;
	float *a = NULL, *b = NULL;
	uint16_t *h = NULL;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc((void **)&a, N * sizeof(float)) != cudaSuccess ||
	    cudaMalloc((void **)&b, N * sizeof(float)) != cudaSuccess ||
	    cudaMalloc((void **)&h, N * sizeof(*h)) != cudaSuccess) {
		fprintf(stderr, "hvd-nccl-calls: cudaMalloc failed\n");
		return 1;
	}

	int has_revoke = ncclCommRevoke != NULL, has_shrink = ncclCommShrink != NULL;
	printf("ncclCommRevoke %s, ncclCommShrink %s in this NCCL\n", has_revoke ? "found" : "absent",
	       has_shrink ? "found" : "absent");
	if (!has_revoke || !has_shrink) {
		ncclComm_t comm = make_comm(0, "ncclCommInitRankConfig blocking=0");
		int bad = !comm || collectives(comm, s, a, b, h);
		report("ncclCommAbort", ncclCommAbort(comm), NULL);
		printf("hvd-nccl-calls: %s\n", bad ? "a collective's result was wrong" : "done (no revoke, no shrink)");
		return bad || stuck;
	}
	printf("-- a non-blocking communicator, revoked and aborted\n");
	ncclComm_t comm = make_comm(0, "ncclCommInitRankConfig blocking=0");
	if (!comm)
		return 1;
	int bad = collectives(comm, s, a, b, h);
	report("ncclCommRevoke", ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), comm);
	report("ncclCommRevoke again", ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), comm);
	report("ncclAllReduce after revoke", ncclAllReduce(a, a, N, ncclFloat32, ncclSum, comm, s), comm);
	ncclComm_t child = NULL;
	int self = 0;
	report("ncclCommShrink excluding none", ncclCommShrink(comm, NULL, 0, &child, NULL, 0), comm);
	report("ncclCommShrink excluding rank 0", ncclCommShrink(comm, &self, 1, &child, NULL, 0), comm);
	printf("%-34s %s\n", "  the shrink's new communicator", child ? "made" : "none");
	if (child)
		ncclCommAbort(child);
	report("ncclCommAbort", ncclCommAbort(comm), NULL);

	printf("-- a shrink before the revoke has quiesced\n");
	comm = make_comm(0, "ncclCommInitRankConfig blocking=0");
	if (!comm)
		return 1;
	bad |= fill(a, 1);
	report("ncclAllReduce f32 sum", ncclAllReduce(a, a, N, ncclFloat32, ncclSum, comm, s), NULL);
	ncclResult_t rc = ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT);
	child = NULL;
	ncclResult_t shrunk = ncclCommShrink(comm, &self, 1, &child, NULL, 0);
	report("ncclCommRevoke (not waited for)", rc, NULL);
	report("ncclCommShrink at once", shrunk, comm);
	if (child)
		ncclCommAbort(child);
	report("ncclCommAbort", ncclCommAbort(comm), NULL);
	cudaStreamSynchronize(s);

	printf("-- a blocking communicator, revoked\n");
	comm = make_comm(1, "ncclCommInitRankConfig blocking=1");
	if (!comm)
		return 1;
	report("ncclCommRevoke", ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), comm);
	report("ncclCommDestroy after revoke", ncclCommDestroy(comm), NULL);

	printf("hvd-nccl-calls: %s\n", bad ? "a collective's result was wrong" :
				       stuck ? "a state stayed ncclInProgress" : "done");
	return bad || stuck;
}
