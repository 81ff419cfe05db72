/* test_gpu_emulated.c - the gpu backend's host code run end to end on
 * the emulated GPU (group gpu-emulated, CUDA builds): builds the tree
 * again into BUILD-emu with `make GPU_EMU=1 WITH_FUZZER=0` (the backend as
 * is; its kernels from tests/gpu_emu's CPU emulation of the launch model,
 * the CUDA runtime, cuDNN and cuBLAS from tests/gpu_emu/fake_cuda.cpp),
 * then runs that build's gpu-ops, gpu-layers (every layer kind against
 * ref in fp32, bf16 and fp16), gpu-graph (the step as a CUDA graph),
 * trainer-loss (the loss kept on the
 * device), slurm-e2e-gpu (2 ranks on 2 emulated GPUs over the emulated
 * NCCL on that build's own test cluster) and env-launch's NCCL shrink
 * cases (shrink, a spare's grow) and hvdrun -n 4 on an emulated 4-GPU
 * node there, where they find devices instead of skipping.
 * What this does not show: anything about a real GPU's libraries,
 * numerics or speed (tests/gpu/run.sh on a GPU node does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static char emu_dir[4096];

static const char *emu_build(void)
{
	snprintf(emu_dir, sizeof(emu_dir), "%s-emu", test_build_dir());
	return emu_dir;
}

static void test_emulated_device_builds(void)
{
	char cmd[8192];
	struct test_proc p;
#ifdef __SANITIZE_ADDRESS__
	const char *san = "SAN=1";
#else
	const char *san = "";
#endif
	/* The fuzzers (one uncacheable clang compile of ~17 sources each,
	 * 40 CPU-seconds in all) run in the main build only. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && make --no-print-directory -j2 B='%s' GPU_EMU=1 "
		 "WITH_FUZZER=0 %s all", test_src_dir(), emu_build(), san);
	CHECK(test_run(cmd, 1500, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %.1500s", cmd, p.exit_code, p.err);
	test_proc_free(&p);
}

/* `tests/check.sh BUILD-emu -g GROUP`: every case passed, and (gpu
 * groups) none was skipped for want of a device. */
static void emulated_group(const char *group, int want_passed)
{
	char cmd[8192], summary[64];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "test -x '%s/hvdtest'", emu_build());
	if (test_run(cmd, 10, &p) || p.exit_code != 0) {
		test_proc_free(&p);
		SKIP("the emulated build is missing (see emulated_device_builds)");
	}
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/tests/check.sh' '%s' -g %s", test_src_dir(), emu_build(),
		 group);
	CHECK(test_run(cmd, 1200, &p) == 0);
	/* At least want_passed: -g NAME also runs the group's ISA-capped
	 * variants (trainer-loss@avx2) where the cap lowers something. The
	 * summary is the last line: "N passed, 0 failed[, M skipped]". */
	int passed = -1;
	const char *end = strstr(p.out, " passed, 0 failed");
	for (const char *k = end; k; k = strstr(k + 1, " passed, 0 failed"))
		end = k;
	if (end) {
		const char *start = end;
		while (start > p.out && start[-1] != '\n')
			start--;
		passed = atoi(start);
	}
	snprintf(summary, sizeof(summary), "%d passed, 0 failed", want_passed);
	CHECK_MSG(p.exit_code == 0 && passed >= want_passed, "%s on the emulated GPU: want '%s'"
		  " or more in: ...%.1500s", group, summary, p.out + (strlen(p.out) > 1500 ?
								 strlen(p.out) - 1500 : 0));
	CHECK_MSG(!strstr(p.out, "no CUDA device"), "%s skipped cases on the emulated GPU", group);
	test_proc_free(&p);
}

static void test_gpu_ops_on_emulated_device(void) { emulated_group("gpu-ops", 4); }
static void test_gpu_layers_on_emulated_device(void) { emulated_group("gpu-layers", 46); }
static void test_gpu_graph_on_emulated_device(void) { emulated_group("gpu-graph", 5); }
static void test_trainer_loss_on_emulated_device(void) { emulated_group("trainer-loss", 13); }

/* The distributed GPU path on the emulated build's own test cluster:
 * NCCL between ranks, checkpoints (slurm-e2e-gpu). Its two failure cases
 * run under stress only (below), as a whole run leaves the cases that
 * time something to their stress re-run. */
static void test_slurm_gpu_on_emulated_device(void)
{
#ifdef __SANITIZE_ADDRESS__
	SKIP("the emulated DenseNet runs take too long under ASan: the plain make check runs them");
#else
	emulated_group("slurm-e2e-gpu readme_command gpu_runs_equal gpu_sigterm", 3);
#endif
}

/* A lost rank's NCCL communicator shrunk to the ranks left, a spare
 * taking its place in a new one, and a world that lost nobody started
 * anew (env-launch, hvd-rt-test shrink and grow): the emulated NCCL's
 * ncclCommRevoke, ncclCommShrink and a new communicator beside them. */
static void test_nccl_shrink_on_emulated_device(void)
{
	emulated_group("env-launch nccl_world_", 3);
}

/* hvdrun -n 4 on an emulated 4-GPU node: a GPU each, NCCL on it. */
static void test_hvdrun_on_emulated_gpus(void)
{
	emulated_group("hvdrun-local emulated_gpus", 1);
}

/* The two failure cases, beside two busy loops and a listener on port
 * 6006 (the runner's stress mode): their timing assumptions show up
 * there. The equality and stop-and-resume cases time nothing and would
 * only add minutes. */
static void test_slurm_gpu_on_emulated_device_under_stress(void)
{
#ifdef __SANITIZE_ADDRESS__
	SKIP("the emulated DenseNet runs take too long under ASan: the plain make check runs them");
#else
	emulated_group("slurm-e2e-gpu@stress gpu_sigkill gpu_sigstop", 2);
#endif
}

const struct test_case gpu_emulated_tests[] = {
	{ "emulated_device_builds", test_emulated_device_builds },
	{ "gpu_ops_on_emulated_device", test_gpu_ops_on_emulated_device },
	{ "gpu_layers_on_emulated_device", test_gpu_layers_on_emulated_device },
	{ "gpu_graph_on_emulated_device", test_gpu_graph_on_emulated_device },
	{ "trainer_loss_on_emulated_device", test_trainer_loss_on_emulated_device },
	{ "slurm_gpu_on_emulated_device", test_slurm_gpu_on_emulated_device },
	{ "slurm_gpu_on_emulated_device_under_stress", test_slurm_gpu_on_emulated_device_under_stress },
	{ "nccl_shrink_on_emulated_device", test_nccl_shrink_on_emulated_device },
	{ "hvdrun_on_emulated_gpus", test_hvdrun_on_emulated_gpus },
	{ 0 }
};
