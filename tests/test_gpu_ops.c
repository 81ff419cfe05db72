/* test_gpu_ops.c - the GPU backend is complete and refuses cleanly, on
 * the CPU (group gpu-ops): every layer kind of model.h has a GPU
 * implementation with both directions, backend_gpu_ops has every op of
 * backend.h and is what backend_find("gpu") returns, every layer of the
 * real networks maps to an implementation, and without a device create
 * fails with one clear line instead of crashing; cuBLAS is not linked but
 * opened on the first call (gpu_cublas.c); on the emulated device, the
 * launches `chexnet bench` counts per step are those the device received.
 * What it does not test: numbers (test_gpu_layers.c, needs a GPU).
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "backend/backend.h"
#include "model/model.h"
#include "backend/gpu/gpu_internal.h"

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
static int launch_counts(int steps, double per_step[4], unsigned long device[4])
{
	char cmd[4400];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && HVD_EMU_COUNTS=1 '%s/chexnet' bench --backend gpu --model "
		 "densenet121 --size 32 --batch 2 --threads 1 --steps %d", test_tmpdir(), test_build_dir(), steps);
	if (test_run(cmd, 300, &p))
		return -1;
	const char *b = strstr(p.out, "launches per step: "), *e = strstr(p.err, "emu: calls: ");
	int ok = p.exit_code == 0 && b && e &&
		 sscanf(b, "launches per step: %*f (kernels %lf, cuDNN %lf, cuBLAS %lf, copies %lf)",
			&per_step[0], &per_step[1], &per_step[2], &per_step[3]) == 4 &&
		 sscanf(e, "emu: calls: kernels %lu, cudnn %lu, cublas %lu, copies %lu", &device[0],
			&device[1], &device[2], &device[3]) == 4;
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
	double one[4], three[4];
	unsigned long d1[4], d3[4];
	if (launch_counts(1, one, d1) || launch_counts(3, three, d3))
		return;
	for (int k = 0; k < 4; k++) {
		CHECK_MSG(one[k] == three[k], "%s per step: %.1f over 1 step, %.1f over 3", kind[k], one[k],
			  three[k]);
		CHECK_MSG((double)(d3[k] - d1[k]) == 2 * three[k], "%s: the device received %lu more "
			  "over 2 more steps; bench counted %.1f a step", kind[k], d3[k] - d1[k], three[k]);
		CHECK_MSG(three[k] > 0, "no %s in a step", kind[k]);
	}
	printf("  measured: launches per step (DenseNet-121, 32 px, batch 2, fp32): kernels %.0f, "
	       "cuDNN %.0f, cuBLAS %.0f, copies %.0f\n", three[0], three[1], three[2], three[3]);
#endif
}

const struct test_case gpu_ops_tests[] = {
	{ "every_layer_kind_has_gpu_ops", test_every_layer_kind_has_gpu_ops },
	{ "backend_ops_table_complete", test_backend_ops_table_complete },
	{ "networks_fully_covered", test_networks_fully_covered },
	{ "create_without_device_is_one_clear_error", test_create_without_device_is_one_clear_error },
	{ "cublas_is_opened_on_first_call", test_cublas_is_opened_on_first_call },
	{ "bench_counts_what_the_device_received", test_bench_counts_what_the_device_received },
	{ 0 }
};
