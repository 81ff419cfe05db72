/* test_span.c - span.h (group trainer-span): the training phases reach
 * installed ranges (the GPU session installs NVTX) in begin/end order
 * with the timeline's names, nothing after they are removed, and the gpu
 * build's NVTX ranges are installable. What it does not test: the
 * timeline file (runtime tests) or Nsight itself (no GPU here).
 */
#include <string.h>

#include "backend/gpu/gpu_train.h"
#include "runner.h"
#include "train/span.h"

static char seen[256];

static void fake_push(const char *name)
{
	strncat(seen, "+", sizeof(seen) - strlen(seen) - 1);
	strncat(seen, name, sizeof(seen) - strlen(seen) - 1);
}

static void fake_pop(void)
{
	strncat(seen, "-", sizeof(seen) - strlen(seen) - 1);
}

static void test_phases_reach_installed_ranges(void)
{
	static const struct span_ranges fake = { fake_push, fake_pop };

	seen[0] = '\0';
	span_set_ranges(&fake);
	span_begin("data", "DATA_WAIT");
	span_end("data");
	span_begin("compute", "FORWARD");
	span_end("compute");
	span_begin("compute", "BACKWARD");
	span_end("compute");
	span_set_ranges(NULL);
	span_begin("compute", "OPTIMIZER");
	span_end("compute");
	CHECK_STR(seen, "+DATA_WAIT-+FORWARD-+BACKWARD-");
}

static void test_gpu_build_has_nvtx_ranges(void)
{
#ifdef HAVE_GPU_BACKEND
	const struct span_ranges *r = gpu_train_nvtx_ranges();
	CHECK(r && r->push && r->pop);
	span_set_ranges(r);
	span_begin("compute", "FORWARD");  /* no profiler attached: a no-op, must not crash */
	span_end("compute");
	span_set_ranges(NULL);
#else
	CHECK(gpu_train_nvtx_ranges() == NULL);
	SKIP("no gpu backend in this build");
#endif
}

const struct test_case span_tests[] = {
	{ "phases_reach_installed_ranges", test_phases_reach_installed_ranges },
	{ "gpu_build_has_nvtx_ranges", test_gpu_build_has_nvtx_ranges },
	{ 0 }
};
