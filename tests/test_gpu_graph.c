/* test_gpu_graph.c - the training step as one CUDA graph (--cuda-graph
 * on; group gpu-graph), on a CUDA device: the emulated one (gpu-emulated
 * runs the group in the emulated build) or a real one (tests/gpu/run.sh).
 * What stream capture refuses (an allocation, waiting for the capturing
 * stream), that a replayed graph reads what changes between steps (the
 * optimizer's values) from memory written before each launch, `chexnet
 * train` with graphs bit for bit as without, one
 * graph launch a step and nothing else but the images' upload (bench),
 * and the settings a graph cannot hold refused in one line. Two ranks
 * over NCCL (the graph ending with backward) are slurm-e2e-gpu's: its
 * SIGTERM-and-resume and SIGKILL cases run with graphs. Without a CUDA
 * device every case skips. What it does not test: speed (the lease,
 * tests/gpu/lease.sh).
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/gpu/gpu_kernels.h"

static int have_device(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define NEED_DEVICE() do { if (!have_device()) SKIP("no CUDA device"); } while (0)

/* An allocation and a wait for the capturing stream are refused, and the
 * capture then ends without a graph (CUDA's global capture mode, the
 * one the backend captures in). */
static void test_capture_refuses_allocation_and_waiting(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	void *p = NULL;

	NEED_DEVICE();
	CHECK_INT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK_INT(cudaMalloc(&p, 256), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(g == NULL);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK_INT(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(g == NULL);
	CHECK_INT(cudaStreamDestroy(s), cudaSuccess);
}

/* The optimizer's design: an SGD update captured once with its values
 * copied from pinned memory inside the graph; two launches with two
 * learning rates move the parameters by both. */
static void test_replay_reads_each_launch_values(void)
{
	enum { COUNT = 4 };
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t exec = NULL;
	float *param = NULL, *grad = NULL, *values = NULL, *host = NULL, got[COUNT];
	const float ones[COUNT] = { 1, 1, 1, 1 };

	NEED_DEVICE();
	CHECK_INT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK_INT(cudaMalloc((void **)&param, sizeof(ones)), cudaSuccess);
	CHECK_INT(cudaMalloc((void **)&grad, sizeof(ones)), cudaSuccess);
	CHECK_INT(cudaMalloc((void **)&values, 2 * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaHostAlloc((void **)&host, 2 * sizeof(float), cudaHostAllocDefault), cudaSuccess);
	CHECK_INT(cudaMemcpy(param, ones, sizeof(ones), cudaMemcpyHostToDevice), cudaSuccess);
	CHECK_INT(cudaMemcpy(grad, ones, sizeof(ones), cudaMemcpyHostToDevice), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK_INT(cudaMemcpyAsync(values, host, 2 * sizeof(float), cudaMemcpyHostToDevice, s),
		  cudaSuccess);
	CHECK_INT(gpu_k_sgd(s, param, grad, NULL, COUNT, 0.0f, 0.0f, values), cudaSuccess);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK_INT(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
	const float lrs[2] = { 0.5f, 0.25f };
	for (int i = 0; i < 2; i++) {
		gpu_sgd_values(lrs[i], i == 0, host);
		CHECK_INT(cudaGraphLaunch(exec, s), cudaSuccess);
		CHECK_INT(cudaStreamSynchronize(s), cudaSuccess);  /* host is written again */
	}
	CHECK_INT(cudaMemcpy(got, param, sizeof(got), cudaMemcpyDeviceToHost), cudaSuccess);
	for (int i = 0; i < COUNT; i++)
		CHECK_MSG(got[i] == 0.25f, "param[%d] %g after lr 0.5 then 0.25 from 1 (want 0.25)",
			  i, got[i]);
	cudaGraphExecDestroy(exec);
	cudaGraphDestroy(g);
	cudaFreeHost(host);
	cudaFree(values);
	cudaFree(grad);
	cudaFree(param);
	cudaStreamDestroy(s);
}

/* chexnet train on the small DenseNet-121 (32 px, batch 2, 16
 * synthetic images: 8 steps an epoch), into test_tmpdir()/dir; extra:
 * more options. */
static int train(const char *dir, const char *extra, struct test_proc *p)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && HVD_EMU_COUNTS=1 '%s/chexnet' train --backend gpu "
		 "--model densenet121 --size 32 --batch 2 --threads 1 --synthetic "
		 "--synthetic-images 16 --out %s %s", test_tmpdir(), test_build_dir(), dir, extra);
	return test_run(cmd, 300, p);
}

/* The tensors' bytes of a safetensors file (after its header, whose
 * metadata records the run's settings, --cuda-graph among them). */
static char *tensor_bytes(const char *rel, size_t *len)
{
	char path[4400];
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), rel);
	char *all = test_read_file(path, &n);
	uint64_t header = 0;
	if (!all || n < 8)
		goto bad;
	memcpy(&header, all, 8);
	if (header > n - 8)
		goto bad;
	*len = n - 8 - header;
	memmove(all, all + 8 + header, *len);
	return all;
bad:
	free(all);
	*len = 0;
	return NULL;
}

static void check_same_tensors(const char *a, const char *b)
{
	const char *files[] = { "last/model.safetensors", "last/training.safetensors" };

	for (int i = 0; i < 2; i++) {
		char pa[256], pb[256];
		size_t na, nb;
		snprintf(pa, sizeof(pa), "%s/%s", a, files[i]);
		snprintf(pb, sizeof(pb), "%s/%s", b, files[i]);
		char *x = tensor_bytes(pa, &na), *y = tensor_bytes(pb, &nb);
		CHECK_MSG(x && y && na == nb && memcmp(x, y, na) == 0, "%s and %s: tensors differ "
			  "(%zu and %zu bytes)", pa, pb, na, nb);
		free(x);
		free(y);
	}
}

/* The emulated device's count of graph launches in the first
 * "emu: calls: " line of text (-1: none, a real GPU). */
static long graph_launches_in(const char *text)
{
	const char *e = strstr(text, "emu: calls: ");
	long graphs = -1;

	if (e && sscanf(e, "emu: calls: kernels %*u, cudnn %*u, cublas %*u, copies %*u, finds %*u, "
			"graphs %ld", &graphs) != 1)
		graphs = -1;
	return graphs;
}

static long graph_launches(const struct test_proc *p)
{
	return graph_launches_in(p->err);
}

static int trained(const struct test_proc *p, const char *what)
{
	CHECK_MSG(p->exit_code == 0, "%s: exit %d: %s", what, p->exit_code, test_tail(p->err, 1500));
	return p->exit_code == 0;
}

/* Five steps with graphs end bit for bit where five without end:
 * parameters, BN statistics, Adam's moments. The first step runs
 * uncaptured, the next two capture each image slot's graph, the last two
 * replay them with new data: 4 graph launches. */
static void test_train_with_graphs_equals_without(void)
{
	static const char *const runs[2][2] = {
		{ "eager", "--steps 5 --cuda-graph off" },
		{ "graph", "--steps 5 --cuda-graph on" },
	};
	struct test_proc p[2];
	int ok = 1, done = 0;

	NEED_DEVICE();
	for (; done < 2 && ok; done++)
		ok = train(runs[done][0], runs[done][1], &p[done]) == 0 &&
		     trained(&p[done], runs[done][1]);
	if (ok) {
		check_same_tensors("eager", "graph");
		long g = graph_launches(&p[1]);
		if (g >= 0)  /* the emulated device counts them */
			CHECK_MSG(g == 4, "graph launches in 5 steps: %ld (want 4)", g);
		CHECK_MSG(graph_launches(&p[0]) <= 0, "graphs without --cuda-graph on");
	}
	for (int i = 0; i < done; i++)
		test_proc_free(&p[i]);
}

/* What a graph cannot hold yet is refused before the first step, in one
 * line naming the setting and the way out. */
static void test_graphs_refused_where_they_cannot_hold(void)
{
	static const struct {
		const char *extra, *says;
	} cases[] = {
		{ "--accumulate 2", "chexnet: gpu: --cuda-graph: 'on': --accumulate 2: a graph holds "
				    "one micro-batch's step (give --accumulate 1 or --cuda-graph off)" },
		{ "--precision fp16", "chexnet: gpu: --cuda-graph: 'on': fp16's loss scale is decided "
				      "on the host each step" },
	};

	NEED_DEVICE();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char extra[256];
		struct test_proc p;
		snprintf(extra, sizeof(extra), "--steps 2 --cuda-graph on %s", cases[i].extra);
		if (train("refused", extra, &p))
			return;
		CHECK_MSG(p.exit_code != 0 && strstr(p.err, cases[i].says), "%s: exit %d, want '%s' "
			  "in: %s", cases[i].extra, p.exit_code, cases[i].says, test_tail(p.err, 900));
		test_proc_free(&p);
	}
}

/* bench's timed steps with graphs (after 3 untimed: one uncaptured, each
 * slot's capture): one graph launch a step, the images' upload its one
 * copy, no kernel, cuDNN or cuBLAS call outside it. */
static void test_bench_launches_one_graph_a_step(void)
{
	char cmd[4400];
	struct test_proc p;
	double k, d, c, copies, graphs;

	NEED_DEVICE();
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' bench --backend gpu --model "
		 "densenet121 --size 32 --batch 2 --threads 1 --steps 2 --cuda-graph on",
		 test_tmpdir(), test_build_dir());
	if (test_run(cmd, 300, &p))
		return;
	const char *l = strstr(p.out, "launches per step: ");
	int ok = p.exit_code == 0 && l &&
		 sscanf(l, "launches per step: %*f (kernels %lf, cuDNN %lf, cuBLAS %lf, copies %lf), "
			"graph launches %lf", &k, &d, &c, &copies, &graphs) == 5;
	CHECK_MSG(ok, "bench: exit %d\n%s%s", p.exit_code, p.out, test_tail(p.err, 900));
	if (ok)
		CHECK_MSG(k == 0 && d == 0 && c == 0 && copies == 1 && graphs == 1, "per step: kernels "
			  "%g, cuDNN %g, cuBLAS %g, copies %g, graph launches %g (want 0, 0, 0, 1, 1)",
			  k, d, c, copies, graphs);
	test_proc_free(&p);
}

const struct test_case gpu_graph_tests[] = {
	{ "capture_refuses_allocation_and_waiting", test_capture_refuses_allocation_and_waiting },
	{ "replay_reads_each_launch_values", test_replay_reads_each_launch_values },
	{ "train_with_graphs_equals_without", test_train_with_graphs_equals_without },
	{ "graphs_refused_where_they_cannot_hold", test_graphs_refused_where_they_cannot_hold },
	{ "bench_launches_one_graph_a_step", test_bench_launches_one_graph_a_step },
	{ 0 }
};
