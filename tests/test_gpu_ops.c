/* test_gpu_ops.c - the GPU backend is complete and refuses cleanly, on
 * the CPU (group gpu-ops): every layer kind of model.h has a GPU
 * implementation with both directions, backend_gpu_ops has every op of
 * backend.h and is what backend_find("gpu") returns, every layer of the
 * real networks maps to an implementation, and without a device create
 * fails with one clear line instead of crashing; cuBLAS is not linked but
 * opened on the first call (gpu_cublas.c). What it does not test:
 * numbers (test_gpu_layers.c, needs a GPU).
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
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
	      o->destroy);
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

const struct test_case gpu_ops_tests[] = {
	{ "every_layer_kind_has_gpu_ops", test_every_layer_kind_has_gpu_ops },
	{ "backend_ops_table_complete", test_backend_ops_table_complete },
	{ "networks_fully_covered", test_networks_fully_covered },
	{ "create_without_device_is_one_clear_error", test_create_without_device_is_one_clear_error },
	{ "cublas_is_opened_on_first_call", test_cublas_is_opened_on_first_call },
	{ 0 }
};
