/* test_cpu_layers.c - every cpu (oneDNN) layer against the ref backend:
 * each layer kind as a one-layer model, forward output, input gradient,
 * parameter gradients and BN running statistics; fp32 within atol/rtol
 * 1e-4, bf16 within the documented bf16 tolerance (2^-6 of the largest
 * |ref| plus 2^-6 relative: bf16 keeps 8 significant bits and the convs
 * accumulate in fp32); the fixture and the shapes shared with the gpu
 * tests are in layer_cases.c. bf16 cases skip, with the backend's reason,
 * where oneDNN has no bf16 kernels. Also: the reference-kernel check
 * refuses a strided view; a DenseNet 3x3 at batch 16 asks for the direct
 * algorithm in fp32 (never Winograd), and in tf32 leaves it to oneDNN,
 * which runs Winograd on AVX-512, equal to ref at the fp32 tolerance.
 * What it does not test: whole networks (test_cpu_models.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/backend.h"
#include "layer_cases.h"
#include "backend/cpu/dnnl_ctx.h"
#include "backend/cpu/backend_cpu.h"
#include "backend/cpu/cpu_isa.h"
#include "cpu_isa_caps.h"

static const struct layer_fill cpu_fill = { .seed = 7, .dy_scale = 1.f };

static void cpu_vs_ref_at(struct model_layer l, enum precision p, int fp32_tol, int n, int ci,
			  int hi, int wi, int co, int ho, int wo)
{
	struct layer_pair t;

	if (p == PRECISION_BF16)
		SKIP_WITHOUT_BF16();
	if (layer_pair_one(&t, l, n, ci, hi, wi, co, ho, wo, p, &cpu_fill) == 0) {
		t.fp32_tol = fp32_tol;
		layer_vs_ref(&t, &backend_cpu_ops, p, NULL);
	}
}

static void cpu_vs_ref(struct model_layer l, enum precision p, int n, int ci, int hi, int wi,
		       int co, int ho, int wo)
{
	cpu_vs_ref_at(l, p, 0, n, ci, hi, wi, co, ho, wo);
}

/* the shapes the gpu tests share, and three more */
#define CASES(P, SUFFIX) \
LAYER_CASES_BOTH(cpu_vs_ref, P, SUFFIX) \
static void test_conv_3x3_stride2_##SUFFIX(void) \
{ cpu_vs_ref(layer_proto(LAYER_CONV, 3, 2, 1, 0), P, 2, 64, 8, 8, 64, 4, 4); } \
static void test_conv_1x1_##SUFFIX(void) \
{ cpu_vs_ref(layer_proto(LAYER_CONV, 1, 1, 0, 0), P, 3, 96, 7, 7, 128, 7, 7); } \
static void test_add_##SUFFIX(void) \
{ cpu_vs_ref(layer_proto(LAYER_ADD, 0, 0, 0, 0), P, 2, 32, 4, 4, 32, 4, 4); }

CASES(PRECISION_FP32, fp32)
CASES(PRECISION_BF16, bf16)

/* The check itself: BN on a channel-prefix view of a blocked buffer (in
 * the ISA's own block) is accepted by oneDNN with a reference kernel; we
 * must refuse and name it. */
static void test_reference_kernel_is_refused(void)
{
	struct dnnl_ctx c;
	CHECK(dnnl_ctx_init(&c, 0) == 0);
	md_t whole;
	md_blocked(&whole, 4, 64, 8, 8, dnnl_f32, c.isa.block);
	dnnl_dims_t dims = { 4, 32, 8, 8 }, offs = { 0, 0, 0, 0 };
	struct op_desc bd = { .kind = OP_BNORM_FWD, .prop = dnnl_forward_training,
			      .flags = dnnl_use_scale, .eps = 1e-5f };
	CHECK(md_submemory(&bd.src, &whole, dims, offs) == 0);
	dnnl_primitive_desc_t pd = NULL;
	CHECK(dnnl_ctx_pd(&c, &pd, &bd, NULL, NULL, "batch norm on a view") == -1);
	CHECK(pd == NULL);
	CHECK_CONTAINS(c.err, "batch norm on a view");
	/* the reference batch norm's name: 2.x "bnorm_ref:any", 3.x "ref:any" */
	CHECK_CONTAINS(c.err, DNNL_VERSION_MAJOR < 3 ? "'bnorm_ref:any'" : "'ref:any'");
	CHECK_CONTAINS(c.err, "reference kernel");
	/* and the dense tensor passes */
	md_blocked(&bd.src, 4, 32, 8, 8, dnnl_f32, c.isa.block);
	CHECK_MSG(dnnl_ctx_pd(&c, &pd, &bd, NULL, NULL, "dense") == 0, "%s", c.err);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	CHECK(dnnl_impl_is_reference("ref:any"));
	CHECK(dnnl_impl_is_reference("bnorm_ref:any"));
	CHECK(!dnnl_impl_is_reference("jit:avx512_core"));
	CHECK(!dnnl_impl_is_reference("brgconv_1x1:avx512_core_amx_bf16"));
	dnnl_ctx_free(&c);
}

/* One training step (forward, backward) of t on the cpu backend in
 * precision p, then fn(what, impl, user) for every primitive it made;
 * frees t. Returns 0 when the step ran. */
static int step_then_scan(struct layer_pair *t, enum precision p,
			  void (*fn)(const char *what, const char *impl, void *user), void *user)
{
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = t->n, .precision = p };
	struct backend *b = backend_cpu_ops.create(&t->m, &opt, &err);
	float *y = malloc(t->out_count * sizeof(float)), *dx = malloc(t->in_count * sizeof(float));
	struct backend_input in = { .x = t->x, .count = t->n };
	int rc = -1;
	CHECK_MSG(b, "%s", err.msg);
	if (b && y && dx) {
		rc = backend_cpu_ops.forward(b, &in, 1, y, &err) ||
		     backend_cpu_ops.backward(b, t->dy, dx, NULL, NULL, &err) ? -1 : 0;
		CHECK_MSG(rc == 0, "%s", err.msg);
		cpu_backend_primitives(b, fn, user);
	}
	if (b)
		backend_cpu_ops.destroy(b);
	free(y);
	free(dx);
	free(t->x);
	free(t->dy);
	model_destroy(&t->m);
	return rc;
}

/* The conv primitives of a step: Winograd kernels forward and backward
 * data, and how many asked for the direct algorithm and how many left it
 * to oneDNN (the primitive's `what` ends "direct)" or "auto)", conv.c). */
struct wino_scan { int fwd, bwd_data, direct, any, convs; };

static void on_conv(const char *what, const char *impl, void *user)
{
	struct wino_scan *s = user;
	if (strncmp(what, "conv ", 5))
		return;
	s->convs++;
	s->direct += strstr(what, " direct)") != NULL;
	s->any += strstr(what, " auto)") != NULL;
	if (!strstr(impl, "wino"))
		return;
	s->fwd += strncmp(what, "conv fwd", 8) == 0;
	s->bwd_data += strncmp(what, "conv bwd_data", 13) == 0;
}

/* DenseNet-121's 3x3 convolution of block 3 (128 -> 32 channels, 14x14)
 * at batch 16, the shape oneDNN 2.x runs as Winograd on AVX-512 when
 * left to choose: fp32 asks for the direct algorithm for all three
 * primitives (fp32 is exact on every backend: Winograd made DenseNet-121's
 * gradients 20x less exact against torchvision), so no Winograd kernel on
 * any ISA; equal to ref at the fp32 tolerance. */
static void test_conv_3x3_fp32_asks_direct(void)
{
	struct model_layer l = layer_proto(LAYER_CONV, 3, 1, 1, 0);
	struct layer_pair t;
	struct wino_scan s = { 0 };
	cpu_vs_ref(l, PRECISION_FP32, 16, 128, 14, 14, 32, 14, 14);
	if (layer_pair_one(&t, l, 16, 128, 14, 14, 32, 14, 14, PRECISION_FP32, &cpu_fill) ||
	    step_then_scan(&t, PRECISION_FP32, on_conv, &s))
		return;
	CHECK_INT(s.convs, 3);
	CHECK_INT(s.direct, 3);
	CHECK_INT(s.fwd + s.bwd_data, 0);
}

/* The same convolution in tf32 leaves the algorithm to oneDNN
 * (convolution_auto): the kernels are Winograd forward and backward data
 * on AVX-512 (oneDNN 2.x has none below, 3.x none at all), and the values
 * still equal ref's within the fp32 tolerance (Winograd's error here is
 * about 1e-5), tighter than tf32's own. */
static void test_conv_3x3_winograd_tf32(void)
{
	struct model_layer l = layer_proto(LAYER_CONV, 3, 1, 1, 0);
	struct layer_pair t;
	struct wino_scan s = { 0 };
	cpu_vs_ref_at(l, PRECISION_TF32, 1, 16, 128, 14, 14, 32, 14, 14);
	if (layer_pair_one(&t, l, 16, 128, 14, 14, 32, 14, 14, PRECISION_TF32, &cpu_fill) ||
	    step_then_scan(&t, PRECISION_TF32, on_conv, &s))
		return;
	CHECK_INT(s.convs, 3);
	CHECK_INT(s.any, 3);
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	if (DNNL_VERSION_MAJOR >= 3) {
		CHECK_INT(s.fwd + s.bwd_data, 0);
		printf("  measured: oneDNN %d.%d: no CPU Winograd kernel (removed in 3.0), direct\n",
		       DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
	} else if (cpu_isa_has(isa, dnnl_cpu_isa_avx512_core)) {
		CHECK_INT(s.fwd, 1);
		CHECK_INT(s.bwd_data, 1);
	} else {
		CHECK_INT(s.fwd + s.bwd_data, 0);
		printf("  measured: %s: no Winograd kernel below AVX-512, direct\n", cpu_isa_name(isa));
	}
}

struct bn_scan { int jit, other; char impl[64]; };

static void on_bn(const char *what, const char *impl, void *user)
{
	struct bn_scan *s = user;
	if (strncmp(what, "batch norm", 10))
		return;
	if (strncmp(impl, "bnorm_jit:", 10) == 0)
		s->jit++;
	else if (!s->other++)
		snprintf(s->impl, sizeof(s->impl), "%s", impl);
}

/* BN+ReLU in training runs oneDNN's jit batch norm on every ISA: where
 * 2.6 has no jit BN fused with a ReLU (SSE4.1, AVX) the ReLU runs as its
 * own primitive, not the whole layer on the generic NHWC kernel (about
 * 20 times slower: 3.1 of a DenseNet-121 step's 5.3 s capped to AVX). */
static void test_batchnorm_relu_runs_jit_fp32(void)
{
	struct layer_pair t;
	struct bn_scan s = { 0, 0, "" };
	if (layer_pair_one(&t, layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), 2, 64, 6, 6, 64, 6, 6,
			   PRECISION_FP32, &cpu_fill) ||
	    step_then_scan(&t, PRECISION_FP32, on_bn, &s))
		return;
	CHECK_MSG(s.jit >= 2 && s.other == 0, "%s: %d jit batch norms, %d other (%s)",
		  cpu_isa_name(dnnl_get_effective_cpu_isa()), s.jit, s.other, s.impl);
}

#define ROW(name) { #name, test_##name }
const struct test_case cpu_layers_tests[] = {
	ROW(reference_kernel_is_refused),
	ROW(conv_7x7_stride2_fp32), ROW(conv_3x3_fp32), ROW(conv_3x3_stride2_fp32),
	ROW(conv_1x1_fp32), ROW(conv_1x1_stride2_fp32), ROW(conv_3x3_fp32_asks_direct),
	ROW(conv_3x3_winograd_tf32),
	ROW(batchnorm_fp32),
	ROW(batchnorm_relu_fp32), ROW(batchnorm_relu_runs_jit_fp32), ROW(relu_fp32),
	ROW(maxpool_fp32), ROW(avgpool_fp32),
	ROW(global_avgpool_fp32), ROW(linear_fp32), ROW(add_fp32), ROW(add_relu_fp32),
	ROW(conv_7x7_stride2_bf16), ROW(conv_3x3_bf16), ROW(conv_3x3_stride2_bf16),
	ROW(conv_1x1_bf16), ROW(conv_1x1_stride2_bf16), ROW(batchnorm_bf16),
	ROW(batchnorm_relu_bf16), ROW(relu_bf16), ROW(maxpool_bf16), ROW(avgpool_bf16),
	ROW(global_avgpool_bf16), ROW(linear_bf16), ROW(add_bf16), ROW(add_relu_bf16),
	{ 0 }
};
