/* test_cpu_isa.c - the cpu backend on every x86-64 ISA: oneDNN honours
 * ONEDNN_MAX_CPU_ISA (the same convolution dispatches jit:sse41, jit:avx,
 * jit:avx2, jit:avx512_core), the backend's channel block follows the ISA,
 * bf16 is refused up front where oneDNN has no bf16 kernels, and the
 * start-up line, bench line and reference-kernel refusal name the ISA.
 * Each case sets its cap before its first oneDNN call (a case is a fresh
 * child). What it does not test: layers and models under caps (the
 * cpu-layers@... and cpu-models@... groups run those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"
#include "backend/backend.h"
#include "cpu_isa_caps.h"
#include "backend/cpu/dnnl_ctx.h"

static void test_isa_names_and_blocks(void)
{
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_sse41), "sse41");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx), "avx");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx2), "avx2");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx2_vnni), "avx2_vnni");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx512_core), "avx512_core");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx512_core_bf16), "avx512_core_bf16");
	CHECK_STR(cpu_isa_name(dnnl_cpu_isa_avx512_core_amx), "avx512_core_amx");
	CHECK_INT(cpu_isa_block_for(dnnl_cpu_isa_avx2), 8);
	CHECK_INT(cpu_isa_block_for(dnnl_cpu_isa_sse41), 8);
	/* avx2_vnni is numerically above avx512_core but has no AVX-512 */
	CHECK_INT(cpu_isa_block_for(dnnl_cpu_isa_avx2_vnni), 8);
	CHECK(!cpu_isa_has(dnnl_cpu_isa_avx2_vnni, dnnl_cpu_isa_avx512_core));
	CHECK_INT(cpu_isa_block_for(dnnl_cpu_isa_avx512_core), 16);
	CHECK_INT(cpu_isa_block_for(dnnl_cpu_isa_avx512_core_amx), 16);
	CHECK(cpu_isa_has(dnnl_cpu_isa_avx512_core_amx, dnnl_cpu_isa_avx512_core_bf16));
}

/* Under ONEDNN_MAX_CPU_ISA=cap: the context reports isa/block, and a 3x3
 * convolution on the context's blocked layout runs on jit:<isa>. */
static void dispatch_under(const char *cap, dnnl_cpu_isa_t want, const char *impl, int block)
{
	char env[64];
	snprintf(env, sizeof(env), "ONEDNN_MAX_CPU_ISA=%s", cap);
	int native = cpu_isa_effective_in_child(NULL);
	CHECK(native >= 0);
	if (native >= 0 && !cpu_isa_has((dnnl_cpu_isa_t)native, want))
		SKIP("this CPU has no %s (oneDNN's native ISA is %s): a cap cannot raise it",
		     cpu_isa_name(want), cpu_isa_name((dnnl_cpu_isa_t)native));
	setenv("ONEDNN_MAX_CPU_ISA", cap, 1);
	struct dnnl_ctx c;
	if (dnnl_ctx_init(&c, 1) != 0) {
		test_fail_at(__FILE__, __LINE__, "%s", c.err);
		return;
	}
	CHECK_INT(c.isa.isa, want);
	CHECK_INT(c.isa.block, block);
	CHECK_STR(c.isa.cap, env);
	struct op_desc cd = { .kind = OP_CONV_FWD, .prop = dnnl_forward_training,
			      .alg = dnnl_convolution_direct, .strides = { 1, 1 }, .pad = { 1, 1 } };
	md_blocked(&cd.src, 2, 64, 14, 14, dnnl_f32, c.isa.block);
	md_blocked(&cd.dst, 2, 64, 14, 14, dnnl_f32, c.isa.block);
	md_weights(&cd.wei, 64, 64, 3, 3, dnnl_f32, dnnl_format_tag_any);
	dnnl_primitive_desc_t pd = NULL;
	CHECK_MSG(dnnl_ctx_pd(&c, &pd, &cd, NULL, NULL, "3x3 conv") == 0, "%s", c.err);
	if (pd) {
		CHECK_STR(dnnl_pd_impl(pd), impl);
		dnnl_primitive_desc_destroy(pd);
	}
	dnnl_ctx_free(&c);
}

static void test_dispatch_sse41(void)
{
	dispatch_under("SSE41", dnnl_cpu_isa_sse41, "jit:sse41", 8);
}

static void test_dispatch_avx(void)
{
	dispatch_under("AVX", dnnl_cpu_isa_avx, "jit:avx", 8);
}

static void test_dispatch_avx2(void)
{
	dispatch_under("AVX2", dnnl_cpu_isa_avx2, "jit:avx2", 8);
}

static void test_dispatch_avx512_core(void)
{
	dispatch_under("AVX512_CORE", dnnl_cpu_isa_avx512_core, "jit:avx512_core", 16);
}

/* A 16-channel-blocked tensor on AVX2 gets a reference kernel: refused,
 * naming the ISA, its cap, the block it wants and the layout asked for. */
static void test_refusal_names_isa_and_layout(void)
{
	setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
	struct dnnl_ctx c;
	if (dnnl_ctx_init(&c, 1) != 0) {
		test_fail_at(__FILE__, __LINE__, "%s", c.err);
		return;
	}
	struct op_desc bd = { .kind = OP_BNORM_FWD, .prop = dnnl_forward_training,
			      .flags = dnnl_use_scale, .eps = 1e-5f };
	md_blocked(&bd.src, 4, 32, 8, 8, dnnl_f32, 16);
	dnnl_primitive_desc_t pd = NULL;
	CHECK(dnnl_ctx_pd(&c, &pd, &bd, NULL, NULL, "bn 16-blocked") == -1);
	CHECK_CONTAINS(c.err, "reference kernel");
	CHECK_CONTAINS(c.err, "oneDNN runs avx2 here (capped by ONEDNN_MAX_CPU_ISA=AVX2)");
	CHECK_CONTAINS(c.err, "8-channel blocks");
	CHECK_CONTAINS(c.err, "asked for nChw16c");
	dnnl_ctx_free(&c);
}

static int chexnet(const char *env, const char *args, struct test_proc *p)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s '%s/chexnet' %s", env, test_build_dir(), args);
	return test_run(cmd, 120, p);
}

static void test_bf16_refused_up_front_under_avx2(void)
{
	struct test_proc p;
	char args[512];
	snprintf(args, sizeof(args), "train --synthetic --precision bf16 --size 32 --batch 2 "
		 "--synthetic-images 4 --steps 1 --out '%s/run'", test_tmpdir());
	if (chexnet("ONEDNN_MAX_CPU_ISA=AVX2", args, &p))
		return;
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "chexnet: --precision bf16: oneDNN runs avx2 here (capped by "
		       "ONEDNN_MAX_CPU_ISA=AVX2): no bf16 kernels: use --precision fp32\n");
	CHECK_MSG(!strstr(p.err, "parameters"), "work began before the refusal: %s", p.err);
	struct stat st;
	char *out = test_path(test_tmpdir(), "run");
	CHECK_MSG(stat(out, &st) != 0, "'%s' was written", out);
	free(out);
	test_proc_free(&p);
}

static void test_startup_and_bench_lines_name_isa(void)
{
	struct test_proc p;
	if (chexnet("ONEDNN_MAX_CPU_ISA=AVX2", "bench --size 32 --batch 2 --steps 1", &p))
		return;
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "(backend cpu, fp32, avx2, 8-channel blocks, batch 2, 32 px)");
	CHECK_CONTAINS(p.out, "bench: densenet121 cpu fp32 (avx2, 8-channel blocks) batch 2 32 px:");
	test_proc_free(&p);
}

#define ROW(name) { #name, test_##name }
const struct test_case cpu_isa_tests[] = {
	ROW(isa_names_and_blocks),
	ROW(dispatch_sse41), ROW(dispatch_avx), ROW(dispatch_avx2), ROW(dispatch_avx512_core),
	ROW(refusal_names_isa_and_layout),
	ROW(bf16_refused_up_front_under_avx2),
	ROW(startup_and_bench_lines_name_isa),
	{ 0 }
};
