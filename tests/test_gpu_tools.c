/* test_gpu_tools.c - the scripts a GPU lease runs cannot rot (group
 * gpu-tools, on the CPU): tests/gpu/run.sh's default selection names
 * real groups and cases of this build's hvdtest (-G: gpu-emu without
 * gpu-emulated), a selection of no case or no group fails before
 * anything runs, and tests/gpu/bundle.sh --packages finds the Debian
 * packages of the build's libraries without the node's own (glibc,
 * libstdc++, CUDA), and tests/gpu/lease.sh skips, naming it, every step
 * that does not fit in the time left. What it does not do: download packages, make a
 * bundle or use one (trainer/backend/gpu/README.md, "A GPU lease", does
 * that end to end on the emulated device), or touch a GPU.
 */
#include <stdio.h>
#include <string.h>

#include "runner.h"

/* A command line run from the repository root, into p. */
static void script(const char *cmdline, struct test_proc *p)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", test_src_dir(), cmdline);
	CHECK(test_run(cmd, 120, p) == 0);
}

static void test_run_sh_selection_is_real(void)
{
#ifdef HAVE_GPU_BACKEND
	char cmd[4200];
	struct test_proc p;
	const char *groups[] = { "gpu-unit: ", "gpu-audit: ", "gpu-train: ", "gpu-emu: ", "gpu-ops: ",
				 "gpu-layers: ", "gpu-graph: ", "trainer-loss gpu_: ", NULL };

	snprintf(cmd, sizeof(cmd), "tests/gpu/run.sh --build '%s' --list", test_build_dir());
	script(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", cmd, p.exit_code, p.err);
	for (int i = 0; groups[i]; i++)
		CHECK_CONTAINS(p.out, groups[i]);
	CHECK_CONTAINS(p.out, "\n  trainer-loss gpu_kept_loss_close_to_host_loss\n");
	CHECK_MSG(!strstr(p.out, "gpu-emulated"), "gpu-emu's selection runs gpu-emulated too");
	CHECK_MSG(!strstr(p.out, "ref_kept_loss"), "'trainer-loss gpu_' selects ref cases");
	test_proc_free(&p);
#else
	SKIP("no gpu backend in this build: run.sh's groups do not exist");
#endif
}

static void test_run_sh_refuses_a_selection_of_nothing(void)
{
	char cmd[4200];
	struct test_proc p;

	/* the old run.sh's 'slurm-e2e gpu_train', in a group every build has */
	snprintf(cmd, sizeof(cmd), "tests/gpu/run.sh --build '%s' --list --only 'trainer-loss gpu_train'",
		 test_build_dir());
	script(cmd, &p);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "run.sh: selection 'trainer-loss gpu_train': the selection matches no case");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "tests/gpu/run.sh --build '%s' --only gpu-layer", test_build_dir());
	script(cmd, &p);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "run.sh: selection 'gpu-layer': -G 'gpu-layer': no such group");
	CHECK_MSG(!strstr(p.out, "== probe"), "run.sh went on after a bad selection");
	test_proc_free(&p);
	script("tests/gpu/run.sh --prefix /nonexistent", &p);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "run.sh: '/nonexistent': no build/hvdtest: not a bundle");
	test_proc_free(&p);
}

static void test_bundle_sh_packages(void)
{
	char cmd[4200];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "tests/gpu/bundle.sh --packages '%s'", test_build_dir());
	script(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", cmd, p.exit_code, p.err);
	/* chexnet links libspng (PNG) and libcjson (run.json) */
	CHECK_CONTAINS(p.out, "libspng0\n");
	CHECK_CONTAINS(p.out, "libcjson1\n");
	const char *node[] = { "libc6\n", "libstdc++6\n", "libgcc-s1\n", "cuda", "cudnn", "nccl", NULL };
	for (int i = 0; node[i]; i++)
		CHECK_MSG(!strstr(p.out, node[i]), "bundled a library of the node: %s", node[i]);
	test_proc_free(&p);
	script("tests/gpu/bundle.sh --packages /nonexistent", &p);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "bundle.sh: --packages: '/nonexistent': not a build directory");
	test_proc_free(&p);
}

/* With no time left every selected step is skipped, said, and nothing
 * runs; LEASE_STEPS selects. */
static void test_lease_sh_skips_what_does_not_fit(void)
{
	char cmd[4200];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "d=$(mktemp -d) && mkdir \"$d/b\" && echo commit x > \"$d/b/MANIFEST\" && "
		 "LEASE_S=0 tests/gpu/lease.sh \"$d/b\" \"$d/out\"; echo \"exit $?\"; "
		 "LEASE_STEPS='nccl loader' LEASE_S=0 tests/gpu/lease.sh \"$d/b\" \"$d/out2\"; "
		 "ls \"$d/out\"; rm -rf \"$d\"");
	script(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, p.err);
	const char *want[] = { "== device groups: skipped (0 s left, needs 60)\n", "== NCCL calls: skipped",
			       "== reference run: skipped", "== bench beside PyTorch: skipped",
			       "== device time by kernel: skipped", "== loader: skipped",
			       "== torch.compile: skipped", "not all passed", "exit 1\n",
			       "lease.txt\n", NULL };
	for (int i = 0; want[i]; i++)
		CHECK_CONTAINS(p.out, want[i]);
	/* the second run: two steps, in the first run's order */
	const char *second = strstr(p.out, "exit 1\n");
	CHECK(second && strstr(second, "== NCCL calls: skipped") && strstr(second, "== loader: skipped") &&
	      !strstr(second, "== device groups") && !strstr(second, "== reference run"));
	test_proc_free(&p);
}

const struct test_case gpu_tools_tests[] = {
	{ "lease_sh_skips_what_does_not_fit", test_lease_sh_skips_what_does_not_fit },
	{ "run_sh_selection_is_real", test_run_sh_selection_is_real },
	{ "run_sh_refuses_a_selection_of_nothing", test_run_sh_refuses_a_selection_of_nothing },
	{ "bundle_sh_packages", test_bundle_sh_packages },
	{ 0 }
};
