/* test_gpu_ops.c - the GPU backend is complete and refuses cleanly, on
 * the CPU (group gpu-ops): every layer kind of model.h has a GPU
 * implementation with both directions, backend_gpu_ops has every op of
 * backend.h and is what backend_find("gpu") returns, every layer of the
 * real networks maps to an implementation, and without a device create
 * fails with one clear line instead of crashing; cuBLAS is not linked but
 * opened on the first call (gpu_cublas.c); on the emulated device, the
 * launches `chexnet bench` counts per step are those the device received,
 * and the convolution algorithms are timed once per shape, cached per
 * user, refused when corrupt or keyed otherwise, deterministic unless
 * asked (--conv-algorithms).
 * What it does not test: numbers (test_gpu_layers.c, needs a GPU).
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "backend/backend.h"
#include "model/model.h"
#include "backend/gpu/gpu_internal.h"
#include "backend/gpu/gpu_launches.h"
#include "layer_cases.h"

static void test_every_layer_kind_has_gpu_ops(void)
{
	for (int k = 0; k < GPU_LAYER_KINDS; k++) {
		const struct gpu_layer_ops *ops = gpu_layer_table[k];
		CHECK_MSG(ops != NULL, "layer kind %d: no GPU implementation", k);
		if (!ops)
			continue;
		CHECK_MSG(ops->name && ops->forward && ops->backward,
			  "layer kind %d (%s): forward or backward missing", k,
			  ops->name ? ops->name : "?");
		CHECK(gpu_layer_ops_for((enum layer_kind)k) == ops);
	}
	/* the table's size follows the last enumerator */
	CHECK_INT(GPU_LAYER_KINDS, LAYER_ADD + 1);
}

static void test_backend_ops_table_complete(void)
{
	struct trainer_error err = { "" };
	const struct backend_ops *o = &backend_gpu_ops;

	CHECK_STR(o->name, "gpu");
	CHECK(o->create && o->load_params && o->forward && o->backward && o->store_state &&
	      o->launches && o->destroy);
	CHECK(backend_find("gpu", &err) == o);
	CHECK_CONTAINS(backend_names(), "gpu");
}

static void check_model_kinds(const char *name)
{
	struct model_desc d;
	struct trainer_error err = { "" };

	if (model_by_name(&d, name, 224, 14, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s: %s", name, err.msg);
		return;
	}
	for (int i = 0; i < d.layer_count; i++)
		CHECK_MSG(gpu_layer_ops_for(d.layers[i].kind) != NULL, "%s: layer '%s' kind %d",
			  name, d.layers[i].name, (int)d.layers[i].kind);
	model_desc_free(&d);
}

static void test_networks_fully_covered(void)
{
	check_model_kinds("densenet121");
	check_model_kinds("resnet50");
}

static void test_create_without_device_is_one_clear_error(void)
{
	int devices = 0;
	struct model_desc d;
	struct model m;
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = 2, .precision = PRECISION_FP16 };

	if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
		SKIP("a CUDA device is present: nothing to refuse");
	if (model_by_name(&d, "densenet121", 64, 14, &err) || model_create(&m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "model: %s", err.msg);
		return;
	}
	CHECK(backend_gpu_ops.create(&m, &opt, &err) == NULL);
	CHECK_CONTAINS(err.msg, "--backend: 'gpu': no CUDA device");
	CHECK(strchr(err.msg, '\n') == NULL);
	opt.max_batch = 0;
	CHECK(backend_gpu_ops.create(&m, &opt, &err) == NULL);
	CHECK_CONTAINS(err.msg, "--batch: '0'");
	model_destroy(&m);
}

/* The plain build: no libcublas among this program's NEEDED entries, and
 * the first cuBLAS call loads the real library and answers with its own
 * words. The emulated build links the emulator's cuBLAS instead. */
static void test_cublas_is_opened_on_first_call(void)
{
#ifdef HVD_GPU_EMU
	SKIP("the emulated build links the emulator's cuBLAS");
#else
	char exe[PATH_MAX], cmd[PATH_MAX + 64], line[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int needed = 0, cublas_needed = 0;

	CHECK(n > 0);
	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -d '%s'", exe);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		needed += strstr(line, "(NEEDED)") != NULL;
		cublas_needed += strstr(line, "[libcublas") != NULL;
	}
	CHECK_INT(pclose(f), 0);
	CHECK_MSG(needed > 0, "readelf -d %s: no NEEDED entries read", exe);
	CHECK_INT(cublas_needed, 0);
	CHECK_STR(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED),
		  "the requested functionality is not supported");
	char soname[32];
	snprintf(soname, sizeof(soname), "libcublas.so.%d", CUBLAS_VER_MAJOR);
	void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
	CHECK_MSG(h != NULL, "%s: not loaded after a cuBLAS call", soname);
	if (h)
		dlclose(h);
#endif
}

#ifdef HVD_GPU_EMU
/* Kernels, cuDNN, cuBLAS, copies: bench's per-step figures on stdout, the
 * emulated device's own totals on stderr; 0 when both were read. */
static int launch_counts(int steps, double per_step[4], unsigned long device[5], unsigned long *timings,
			 double bn[2])
{
	char cmd[4400];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && XDG_CACHE_HOME='%s/cache' HVD_EMU_COUNTS=1 '%s/chexnet' "
		 "bench --backend gpu --model densenet121 --size 32 --batch 2 --threads 1 --steps %d",
		 test_tmpdir(), test_tmpdir(), test_build_dir(), steps);
	if (test_run(cmd, 300, &p))
		return -1;
	const char *b = strstr(p.out, "launches per step: "), *e = strstr(p.err, "emu: calls: ");
	const char *s = strstr(p.out, "batch-norm statistics per step: ");
	int ok = p.exit_code == 0 && b && e && s &&
		 sscanf(s, "batch-norm statistics per step: computed for %lf of %lf channels "
			"normalised", &bn[0], &bn[1]) == 2 &&
		 sscanf(b, "launches per step: %*f (kernels %lf, cuDNN %lf, cuBLAS %lf, copies %lf), "
			"graph launches %*f, NCCL calls 0 (one process); algorithm timings at start %lu",
			&per_step[0], &per_step[1], &per_step[2], &per_step[3], timings) == 5 &&
		 sscanf(e, "emu: calls: kernels %lu, cudnn %lu, cublas %lu, copies %lu, finds %lu",
			&device[0], &device[1], &device[2], &device[3], &device[4]) == 5;
	CHECK_MSG(ok, "bench --steps %d: exit %d\n%s%s", steps, p.exit_code, p.out, test_tail(p.err, 900));
	test_proc_free(&p);
	return ok ? 0 : -1;
}
#endif

/* chexnet bench's launches per step are what the device received: on the
 * emulated device, which counts every call that puts work on a stream as
 * it arrives, a 3-step bench receives exactly 2 steps' worth more than a
 * 1-step one, kind by kind. The figures are today's count for the GPU
 * step (DenseNet-121, 32 px, batch 2), printed. */
static void test_bench_counts_what_the_device_received(void)
{
#ifndef HVD_GPU_EMU
	SKIP("held against the emulated device's own count: gpu-emulated runs this group there");
#else
	static const char *const kind[] = { "kernels", "cuDNN", "cuBLAS", "copies" };
	double one[4], three[4], bn[2];
	unsigned long d1[5], d3[5], t1, t3;
	if (launch_counts(1, one, d1, &t1, bn) || launch_counts(3, three, d3, &t3, bn))
		return;
	/* batch norm: each channel's statistics once a step, as the plan says */
	struct model_desc d;
	struct gpu_pool_plan plan;
	struct gpu_pool_inputs in = { 2, 4, 0, 0 };
	struct trainer_error err = { "" };
	double computed = 0, normalised = 0;
	CHECK_INT(model_densenet(&d, &densenet121_config, 32, 14, &err), 0);
	CHECK_INT(gpu_pool_plan_build(&d, &in, &plan, &err), 0);
	for (int i = 0; i < d.layer_count; i++)
		if (d.layers[i].kind == LAYER_BATCHNORM) {
			computed += d.layers[i].in.channels - plan.bn_known[i];
			normalised += d.layers[i].in.channels;
		}
	gpu_pool_plan_free(&plan);
	model_desc_free(&d);
	CHECK_MSG(bn[0] == computed && bn[1] == normalised && computed < normalised / 3,
		  "bench: BN statistics computed for %.0f of %.0f channels; the plan: %.0f of %.0f",
		  bn[0], bn[1], computed, normalised);
	/* the algorithm timings: all at create, none on the second run (its cache) */
	CHECK_MSG(t1 > 0 && t1 == d1[4], "first run: bench counted %lu timings, the device %lu", t1,
		  d1[4]);
	CHECK_MSG(t3 == 0 && d3[4] == 0, "second run: bench counted %lu timings, the device %lu; "
		  "the first run's cache held every shape", t3, d3[4]);
	for (int k = 0; k < 4; k++) {
		CHECK_MSG(one[k] == three[k], "%s per step: %.1f over 1 step, %.1f over 3", kind[k], one[k],
			  three[k]);
		CHECK_MSG((double)(d3[k] - d1[k]) == 2 * three[k], "%s: the device received %lu more "
			  "over 2 more steps; bench counted %.1f a step", kind[k], d3[k] - d1[k], three[k]);
		CHECK_MSG(three[k] > 0, "no %s in a step", kind[k]);
	}
	printf("  measured: launches per step (DenseNet-121, 32 px, batch 2, fp32): kernels %.0f, "
	       "cuDNN %.0f, cuBLAS %.0f, copies %.0f; algorithm timings at start %lu, then 0\n",
	       three[0], three[1], three[2], three[3], t1);
	printf("  measured: batch-norm statistics computed for %.0f of %.0f channels normalised\n",
	       bn[0], bn[1]);
#endif
}

/* Plan bytes of densenet121 at 224 px, bf16, batch n, with the 1 GiB
 * workspace cap. */
static size_t plan_bytes_at(const struct model_desc *d, int n, int memory_efficient)
{
	struct gpu_pool_inputs in = { n, 2, (size_t)1 << 30, memory_efficient };
	struct gpu_pool_plan plan;
	struct trainer_error err = { "" };
	size_t bytes = 0;

	if (gpu_pool_plan_build(d, &in, &plan, &err) == 0) {
		bytes = plan.total_bytes;
		gpu_pool_plan_free(&plan);
	}
	CHECK_MSG(bytes > 0, "plan at batch %d: %s", n, err.msg);
	return bytes;
}

/* Any backend's bench (here cpu: no device) prints the largest
 * DenseNet-121 batch an 80 GiB GPU takes at 224 px in bf16, without and
 * with --memory-efficient: the pool plan at that batch, with the 1 GiB
 * workspace cap, fits in 80 GiB less the 512 MiB left outside the pool,
 * and one image more does not. */
static void test_bench_prints_the_largest_batch_of_an_80_gib_gpu(void)
{
	struct test_proc p;
	struct model_desc d;
	struct trainer_error err = { "" };
	char cmd[4400];
	long n[2] = { -1, -1 };

	if (!backend_find("cpu", &err))
		SKIP("no cpu backend in this build: bench needs one that runs here");
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' bench --backend cpu --model densenet121 "
		 "--size 32 --batch 2 --threads 1 --steps 1", test_tmpdir(), test_build_dir());
	if (test_run(cmd, 120, &p))
		return;
	const char *line = strstr(p.out, "bench: largest batch of densenet121 on an 80 GiB GPU at "
				  "224 px, bf16: ");
	CHECK_MSG(p.exit_code == 0 && line && sscanf(strchr(line, ':') + 1,
						      "%*[^:]: %ld, %ld with --memory-efficient",
						      &n[0], &n[1]) == 2,
		  "exit %d:\n%s%s", p.exit_code, p.out, test_tail(p.err, 600));
	test_proc_free(&p);
	if (n[0] < 1 || model_densenet(&d, &densenet121_config, 224, 14, &err))
		return;
	size_t budget = ((size_t)80 << 30) - ((size_t)512 << 20);
	for (int me = 0; me < 2; me++)
		CHECK_MSG(plan_bytes_at(&d, (int)n[me], me) <= budget &&
			  plan_bytes_at(&d, (int)n[me] + 1, me) > budget,
			  "memory-efficient %d: batch %ld: plan %zu bytes, %ld: %zu bytes, budget %zu",
			  me, n[me], plan_bytes_at(&d, (int)n[me], me), n[me] + 1,
			  plan_bytes_at(&d, (int)n[me] + 1, me), budget);
	CHECK_MSG(n[1] > n[0], "--memory-efficient takes %ld, without %ld", n[1], n[0]);
	printf("  measured: the largest DenseNet-121 batch on an 80 GiB GPU, 224 px, bf16: %ld, "
	       "%ld with --memory-efficient\n", n[0], n[1]);
	model_desc_free(&d);
}

#ifdef HVD_GPU_EMU
/* One 3x3 conv layer (8 -> 4 channels, 8x8, stride 1) at batch n on the
 * emulated device, created with mode and the case's cache folder (NULL:
 * none) as rank `rank` sharing through `share` (NULL: one rank): the
 * algorithms it chose and the Find calls its create made, counted by the
 * backend's own counter (gpu_launches.h). Then one training step, which
 * the emulated cuDNN refuses for an algorithm it does not have or a
 * workspace too small for it. 0 when it ran. */
struct algo_made {
	int fwd, bwd_data, bwd_filter;
	unsigned long finds;
};

static int conv_algos_made(enum conv_algorithms mode, const char *cache, int n,
			   const struct backend_share *share, struct algo_made *got)
{
	static const struct layer_fill fill = { .seed = 5, .dy_scale = 1.f / 16 };
	struct layer_pair t;
	struct trainer_error err = { "" };
	unsigned long c0[GPU_LAUNCH_KINDS], c1[GPU_LAUNCH_KINDS];

	if (layer_pair_one(&t, layer_proto(LAYER_CONV, 3, 1, 1, 0), n, 8, 8, 8, 4, 8, 8,
			   PRECISION_FP32, &fill))
		return -1;
	struct backend_options opt = { .max_batch = n, .precision = PRECISION_FP32,
				       .conv_algorithms = mode, .algo_cache_dir = cache };
	if (share)
		opt.share = *share;
	gpu_launches_read(c0);
	struct backend *b = backend_gpu_ops.create(&t.m, &opt, &err);
	gpu_launches_read(c1);
	struct backend_input in = { .x = t.x, .count = n };
	float *y = malloc(t.out_count * sizeof(float)), *dx = malloc(t.in_count * sizeof(float));
	int ok = b && y && dx && backend_gpu_ops.forward(b, &in, 1, y, &err) == 0 &&
		 backend_gpu_ops.backward(b, t.dy, dx, NULL, NULL, &err) == 0;
	CHECK_MSG(ok, "conv layer, %s: %s", mode == CONV_ALGOS_TIMED ? "timed" : "other", err.msg);
	if (b) {
		const struct gpu_conv_state *c = b->layers[0].conv;
		*got = (struct algo_made){ c->fwd.algo, c->bwd_data.algo, c->bwd_filter.algo,
					   c1[GPU_LAUNCH_TIMING] - c0[GPU_LAUNCH_TIMING] };
		backend_gpu_ops.destroy(b);
	}
	free(y);
	free(dx);
	free(t.x);
	free(t.dy);
	model_destroy(&t.m);
	return ok ? 0 : -1;
}

/* The emulated cuDNN's algorithms (tests/gpu_emu/fake_algos.cpp): timed,
 * deterministic and within the 1 GiB budget they are GEMM (2),
 * FFT_TILING (3) and ALGO_3 (3); never the faster FFTs (3 GiB) nor the
 * non-deterministic ALGO_0s; the heuristics rank ALGO_0 first backward. */
#define CHECK_ALGOS(got, f, d, w) \
	CHECK_MSG((got).fwd == (f) && (got).bwd_data == (d) && (got).bwd_filter == (w), \
		  "algorithms fwd %d, bwd-data %d, bwd-filter %d; expected %d, %d, %d", \
		  (got).fwd, (got).bwd_data, (got).bwd_filter, f, d, w)

static char *cache_dir(void)
{
	return test_path(test_tmpdir(), "cache/chexnet");
}

/* The one cache file in the case's folder, or NULL. */
static char *cache_file(void)
{
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "ls '%s'/cache/chexnet/conv-algorithms-*.txt", test_tmpdir());
	return test_output_of(cmd, 10);
}

/* Runs conv_algos_made with stderr into a file: what it printed there. */
static char *stderr_of_made(enum conv_algorithms mode, const char *cache, int n, struct algo_made *got)
{
	char *path = test_path(test_tmpdir(), "stderr.txt");
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	conv_algos_made(mode, cache, n, NULL, got);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *text = test_read_file(path, NULL);
	free(path);
	return text;
}
#endif

#define NEED_EMU() do { } while (0)
#ifndef HVD_GPU_EMU
#undef NEED_EMU
#define NEED_EMU() SKIP("needs the emulated device's algorithms: gpu-emulated runs this group there")
#endif

/* --conv-algorithms timed (the default): the first create times each
 * direction (3 Find calls), takes the fastest deterministic algorithms
 * within the budget and writes the per-user cache; the second reads them
 * there and times nothing. A step runs with them (the emulated cuDNN
 * checks algorithm and workspace). */
static void test_conv_algorithms_timed_once_then_cached(void)
{
	NEED_EMU();
#ifdef HVD_GPU_EMU
	struct algo_made first = { 0 }, second = { 0 };
	char *dir = cache_dir();
	if (conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &first) ||
	    conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &second))
		return;
	CHECK_ALGOS(first, 2, 3, 3);
	CHECK_MSG(first.finds == 3, "first create: %lu Find calls, not 3", first.finds);
	CHECK_ALGOS(second, 2, 3, 3);
	CHECK_MSG(second.finds == 0, "second create: %lu Find calls; the cache held the shape",
		  second.finds);
	char *file = cache_file();
	CHECK(file && strstr(file, "/cache/chexnet/conv-algorithms-"));
	free(file);
	free(dir);
#endif
}

/* A cache made for another batch, or for another workspace budget, is
 * not used (timed again; both batches kept); a corrupt cache is ignored
 * in one line, timed again and written anew. */
static void test_conv_algorithms_cache_of_another_key_or_corrupt_is_not_used(void)
{
	NEED_EMU();
#ifdef HVD_GPU_EMU
	struct algo_made r = { 0 };
	char *dir = cache_dir(), *file, *text;
	if (conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &r) ||
	    conv_algos_made(CONV_ALGOS_TIMED, dir, 3, NULL, &r))
		return;
	CHECK_MSG(r.finds == 3, "batch 3 after batch 2: %lu Find calls", r.finds);
	if (conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &r) == 0)
		CHECK_MSG(r.finds == 0, "batch 2 again: %lu Find calls", r.finds);
	if (!(file = cache_file()) || !(text = test_read_file(file, NULL))) {
		CHECK_MSG(0, "no cache file");
		free(file);
		return;
	}
	/* every entry's budget (field 16) one byte more: another budget's */
	char *edited = malloc(strlen(text) * 2 + 64), *o = edited;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		long long v[19];
		if (sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
			   "%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16],
			   &v[17], &v[18]) != 19) {
			o += sprintf(o, "%s\n", line);
			continue;
		}
		for (int i = 0; i < 19; i++)
			o += sprintf(o, "%s%lld", i ? " " : "", v[i] + (i == 15));
		o += sprintf(o, "\n");
	}
	CHECK(test_write_file(file, edited, strlen(edited)) == 0);
	if (conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &r) == 0)
		CHECK_MSG(r.finds == 3, "cache for another budget: %lu Find calls", r.finds);
	char *third = strchr(strchr(edited, '\n') + 1, '\n') + 1;   /* after header and device */
	strcpy(third, "0 0 0 garbage\n");
	CHECK(test_write_file(file, edited, strlen(edited)) == 0);
	char *said = stderr_of_made(CONV_ALGOS_TIMED, dir, 2, &r);
	CHECK_MSG(r.finds == 3, "corrupt cache: %lu Find calls", r.finds);
	char expected[4600];
	snprintf(expected, sizeof(expected), "chexnet: conv algorithm cache '%s': line 3: expected "
		 "19 numbers: ignored (timed again)\n", file);
	CHECK_STR(said ? said : "", expected);
	if (conv_algos_made(CONV_ALGOS_TIMED, dir, 2, NULL, &r) == 0)
		CHECK_MSG(r.finds == 0, "after the corrupt cache was replaced: %lu Find calls", r.finds);
	free(said);
	free(edited);
	free(text);
	free(file);
	free(dir);
#endif
}

/* Non-deterministic algorithms only when asked (timed-any); heuristic
 * times nothing, writes no cache and skips the heuristics' first,
 * non-deterministic answers. */
static void test_conv_algorithms_deterministic_unless_asked(void)
{
	NEED_EMU();
#ifdef HVD_GPU_EMU
	struct algo_made r = { 0 };
	char *dir = cache_dir();
	if (conv_algos_made(CONV_ALGOS_TIMED_ANY, NULL, 2, NULL, &r) == 0) {
		CHECK_ALGOS(r, 2, 0, 0);
		CHECK(r.finds == 3);
	}
	if (conv_algos_made(CONV_ALGOS_HEURISTIC, dir, 2, NULL, &r) == 0) {
		CHECK_ALGOS(r, 0, 1, 1);
		CHECK_MSG(r.finds == 0, "heuristic: %lu Find calls", r.finds);
	}
	CHECK_MSG(access(dir, F_OK) != 0, "heuristic made the cache folder '%s'", dir);
	free(dir);
#endif
}

#ifdef HVD_GPU_EMU
/* Two ranks in one process: rank 0's broadcast keeps the bytes it sends,
 * rank 1's hands them over. */
static unsigned char sent[4096];
static size_t sent_len;

static int keep_bytes(void *ctx, struct backend *b, void *bytes, size_t len)
{
	(void)ctx, (void)b;
	if (len > sizeof(sent))
		return -1;
	memcpy(sent, bytes, len);
	sent_len = len;
	return 0;
}

static int give_bytes(void *ctx, struct backend *b, void *bytes, size_t len)
{
	(void)ctx, (void)b;
	if (len != sent_len)
		return -1;
	memcpy(bytes, sent, len);
	return 0;
}
#endif

/* One rank times; another times nothing and runs what it received, even
 * where its own choice (here its site default, heuristic) differs. */
static void test_conv_algorithms_other_ranks_take_rank_0s(void)
{
	NEED_EMU();
#ifdef HVD_GPU_EMU
	struct backend_share rank0 = { .rank = 0, .broadcast = keep_bytes };
	struct backend_share rank1 = { .rank = 1, .broadcast = give_bytes };
	struct algo_made r0 = { 0 }, r1 = { 0 };
	if (conv_algos_made(CONV_ALGOS_TIMED, NULL, 2, &rank0, &r0) ||
	    conv_algos_made(CONV_ALGOS_HEURISTIC, NULL, 2, &rank1, &r1))
		return;
	CHECK_ALGOS(r0, 2, 3, 3);
	CHECK(r0.finds == 3);
	CHECK_ALGOS(r1, 2, 3, 3);
	CHECK_MSG(r1.finds == 0, "rank 1: %lu Find calls", r1.finds);
	sent[0] = 99;   /* an algorithm the device has not: refused, in one line */
	struct backend_share bad = { .rank = 1, .broadcast = give_bytes };
	struct layer_pair t;
	static const struct layer_fill fill = { .seed = 5, .dy_scale = 1.f / 16 };
	struct trainer_error err = { "" };
	if (layer_pair_one(&t, layer_proto(LAYER_CONV, 3, 1, 1, 0), 2, 8, 8, 8, 4, 8, 8,
			   PRECISION_FP32, &fill))
		return;
	struct backend_options opt = { .max_batch = 2, .precision = PRECISION_FP32, .share = bad };
	CHECK(backend_gpu_ops.create(&t.m, &opt, &err) == NULL);
	CHECK_CONTAINS(err.msg, "gpu: conv 'layer': rank 0's algorithm (99, ");
	free(t.x);
	free(t.dy);
	model_destroy(&t.m);
#endif
}

const struct test_case gpu_ops_tests[] = {
	{ "every_layer_kind_has_gpu_ops", test_every_layer_kind_has_gpu_ops },
	{ "backend_ops_table_complete", test_backend_ops_table_complete },
	{ "networks_fully_covered", test_networks_fully_covered },
	{ "create_without_device_is_one_clear_error", test_create_without_device_is_one_clear_error },
	{ "cublas_is_opened_on_first_call", test_cublas_is_opened_on_first_call },
	{ "bench_counts_what_the_device_received", test_bench_counts_what_the_device_received },
	{ "bench_prints_the_largest_batch_of_an_80_gib_gpu",
	  test_bench_prints_the_largest_batch_of_an_80_gib_gpu },
	{ "conv_algorithms_timed_once_then_cached", test_conv_algorithms_timed_once_then_cached },
	{ "conv_algorithms_cache_of_another_key_or_corrupt_is_not_used",
	  test_conv_algorithms_cache_of_another_key_or_corrupt_is_not_used },
	{ "conv_algorithms_deterministic_unless_asked", test_conv_algorithms_deterministic_unless_asked },
	{ "conv_algorithms_other_ranks_take_rank_0s", test_conv_algorithms_other_ranks_take_rank_0s },
	{ 0 }
};
