/* test_gpu_ops.c - the GPU backend is complete and refuses cleanly, on
 * the CPU (group gpu-ops): every layer kind of model.h has a GPU
 * implementation with both directions, backend_gpu_ops has every op of
 * backend.h and is what backend_find("gpu") returns, every layer of the
 * real networks maps to an implementation, and without a device create
 * fails with one clear line instead of crashing. What it does not test:
 * numbers (test_gpu_layers.c, needs a GPU).
 */
#include <cuda_runtime_api.h>
#include <string.h>

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

const struct test_case gpu_ops_tests[] = {
	{ "every_layer_kind_has_gpu_ops", test_every_layer_kind_has_gpu_ops },
	{ "backend_ops_table_complete", test_backend_ops_table_complete },
	{ "networks_fully_covered", test_networks_fully_covered },
	{ "create_without_device_is_one_clear_error", test_create_without_device_is_one_clear_error },
	{ 0 }
};
