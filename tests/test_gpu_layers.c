/* test_gpu_layers.c - the gpu backend against the ref backend (the
 * oracle), on a GPU (group gpu-layers): each layer kind as a one-layer
 * model (forward training and eval output, input gradient, parameter
 * gradients, BN running statistics) in fp32 (atol/rtol 1e-4), bf16
 * (2^-6 of the largest |ref| plus 2^-6 relative, as the cpu tests) and
 * fp16 (2^-8 likewise, loss scaling on); the convolutions and the linear
 * layer in tf32 (2^-10 likewise: layer_cases.c derives it); on the
 * emulated device (HVD_GPU_EMU, which rounds TF32 inputs), that fp32 work
 * asked for FMA math and CUBLAS_COMPUTE_32F only and tf32 work for
 * CUDNN_TENSOR_OP_MATH and CUBLAS_COMPUTE_32F_FAST_TF32 only (emu_math.h:
 * a real GPU's libraries count nothing); a dense-block model whose layers
 * read and write channel slices of one buffer (accumulated gradients);
 * uint8 image input normalised on the GPU; the device Adam and SGD
 * updates against trainer/train/optim.c. The one-layer fixture and the shapes
 * shared with the cpu tests are in layer_cases.c. Without a CUDA device every
 * case reports `skip ...: no CUDA device`. What it does not test: speed
 * (bench/, tests/gpu/run.sh).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/backend.h"
#include "model/input_norm.h"
#include "layer_cases.h"
#include "model/model.h"
#include "train/optim.h"
#include "base/rng.h"
#include "backend/gpu/gpu_kernels.h"
#include "backend/gpu/gpu_train.h"
#ifdef HVD_GPU_EMU
#include <cudnn.h>

#include "gpu_emu/emu_math.h"
#endif

static const struct layer_fill gpu_fill = { .seed = 11, .dy_scale = 1.f / 16 };
/* fp16 runs backward at the initial loss scale 2^16: an input gradient of
 * 1 would already be 65536 > fp16's 65504 (inf, then a skipped step in
 * training). Found by running this group on the emulated GPU (gpu-emu
 * build): the conv cases overflowed. dy stays small enough here. */
static const struct layer_fill gpu_fill_fp16 = { .seed = 11, .dy_scale = 1.f / 1024 };

static int have_device(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define NEED_DEVICE() do { if (!have_device()) SKIP("no CUDA device"); } while (0)

#ifdef HVD_GPU_EMU
/* What the layer's fp32 convolutions and GEMMs asked the emulated
 * libraries for: in fp32 FMA math and CUBLAS_COMPUTE_32F only (TF32
 * never), in tf32 CUDNN_TENSOR_OP_MATH and CUBLAS_COMPUTE_32F_FAST_TF32
 * only, and a conv or linear layer asked at all. */
static void check_math(enum layer_kind kind, enum precision p, const struct emu_math_requests *m)
{
	long conv_right = p == PRECISION_TF32 ? m->conv_tf32 : m->conv_fma;
	long conv_wrong = m->conv_other + (p == PRECISION_TF32 ? m->conv_fma : m->conv_tf32);
	long gemm_right = p == PRECISION_TF32 ? m->gemm_tf32 : m->gemm_32f;
	long gemm_wrong = m->gemm_other + (p == PRECISION_TF32 ? m->gemm_32f : m->gemm_tf32);
	if (p != PRECISION_FP32 && p != PRECISION_TF32)
		return;
	CHECK_MSG(conv_wrong == 0 && gemm_wrong == 0, "%s: convolutions: %ld FMA, %ld TF32, %ld "
		  "other; GEMMs: %ld COMPUTE_32F, %ld FAST_TF32, %ld other", precision_name(p),
		  m->conv_fma, m->conv_tf32, m->conv_other, m->gemm_32f, m->gemm_tf32, m->gemm_other);
	if (kind == LAYER_CONV)
		CHECK_MSG(conv_right >= 3, "%s: %ld convolutions asked for its math", precision_name(p),
			  conv_right);
	if (kind == LAYER_LINEAR)
		CHECK_MSG(gemm_right >= 3, "%s: %ld GEMMs asked for its compute type",
			  precision_name(p), gemm_right);
}

/* The layout cuDNN saw: under nhwc every convolution had a KRSC filter
 * and channels-last tensors, under nchw none. */
static void check_layout(enum layer_kind kind, enum gpu_layout layout,
			 const struct emu_math_requests *m)
{
	long convs = m->conv_kcrs + m->conv_krsc;
	int nhwc = layout == GPU_LAYOUT_NHWC;

	if (kind != LAYER_CONV)
		return;
	CHECK_MSG(convs >= 3 && (nhwc ? m->conv_krsc : m->conv_kcrs) == convs &&
		  (nhwc ? m->conv_nhwc : m->conv_nchw) == convs,
		  "%s: %ld convolutions: filters KCRS %ld, KRSC %ld; inputs NCHW %ld, NHWC %ld",
		  nhwc ? "nhwc" : "nchw", convs, m->conv_kcrs, m->conv_krsc, m->conv_nchw,
		  m->conv_nhwc);
}
#endif

/* The --gpu-layout of the case running (the _nhwc cases set it). */
static enum gpu_layout case_layout = GPU_LAYOUT_NCHW;

static void gpu_vs_ref(struct model_layer l, enum precision p, int n, int ci, int hi, int wi,
		       int co, int ho, int wo)
{
	struct layer_pair t;

	NEED_DEVICE();
#ifdef HVD_GPU_EMU
	struct emu_math_requests m;
	emu_math_requests_take(&m);
#endif
	if (layer_pair_one(&t, l, n, ci, hi, wi, co, ho, wo, p,
			   p == PRECISION_FP16 ? &gpu_fill_fp16 : &gpu_fill) == 0) {
		t.gpu_layout = case_layout;
		layer_vs_ref(&t, &backend_gpu_ops, p, NULL);
#ifdef HVD_GPU_EMU
		emu_math_requests_take(&m);
		check_math(l.kind, p, &m);
		check_layout(l.kind, case_layout, &m);
#endif
	}
}

static void gpu_vs_ref_nhwc(struct model_layer l, enum precision p, int n, int ci, int hi, int wi,
			    int co, int ho, int wo)
{
	case_layout = GPU_LAYOUT_NHWC;
	gpu_vs_ref(l, p, n, ci, hi, wi, co, ho, wo);
	case_layout = GPU_LAYOUT_NCHW;
}

/* the shapes the cpu tests share, and a conv with bias */
#define CASES(VS, P, SUFFIX) \
LAYER_CASES_BOTH(VS, P, SUFFIX) \
static void test_conv_bias_##SUFFIX(void) \
{ struct model_layer l = layer_proto(LAYER_CONV, 3, 1, 1, 0); l.has_bias = 1; \
  VS(l, P, 2, 16, 6, 6, 8, 6, 6); }

#define ROWS(SUFFIX) \
	{ "conv_7x7_stride2_" #SUFFIX, test_conv_7x7_stride2_##SUFFIX }, \
	{ "conv_3x3_" #SUFFIX, test_conv_3x3_##SUFFIX }, \
	{ "conv_1x1_stride2_" #SUFFIX, test_conv_1x1_stride2_##SUFFIX }, \
	{ "conv_bias_" #SUFFIX, test_conv_bias_##SUFFIX }, \
	{ "batchnorm_" #SUFFIX, test_batchnorm_##SUFFIX }, \
	{ "batchnorm_relu_" #SUFFIX, test_batchnorm_relu_##SUFFIX }, \
	{ "relu_" #SUFFIX, test_relu_##SUFFIX }, \
	{ "maxpool_" #SUFFIX, test_maxpool_##SUFFIX }, \
	{ "avgpool_" #SUFFIX, test_avgpool_##SUFFIX }, \
	{ "global_avgpool_" #SUFFIX, test_global_avgpool_##SUFFIX }, \
	{ "linear_" #SUFFIX, test_linear_##SUFFIX }, \
	{ "add_relu_" #SUFFIX, test_add_relu_##SUFFIX }

CASES(gpu_vs_ref, PRECISION_FP32, fp32)
CASES(gpu_vs_ref, PRECISION_BF16, bf16)
CASES(gpu_vs_ref, PRECISION_FP16, fp16)
/* the same under --gpu-layout nhwc */
CASES(gpu_vs_ref_nhwc, PRECISION_FP32, fp32_nhwc)
CASES(gpu_vs_ref_nhwc, PRECISION_BF16, bf16_nhwc)
CASES(gpu_vs_ref_nhwc, PRECISION_FP16, fp16_nhwc)

/* tf32 changes only the convolutions and GEMMs (fp32 storage): those. */
static void test_conv_7x7_stride2_tf32(void)
{ gpu_vs_ref(layer_proto(LAYER_CONV, 7, 2, 3, 0), PRECISION_TF32, 2, 3, 32, 32, 64, 16, 16); }
static void test_conv_3x3_tf32(void)
{ gpu_vs_ref(layer_proto(LAYER_CONV, 3, 1, 1, 0), PRECISION_TF32, 2, 128, 8, 8, 32, 8, 8); }
static void test_conv_1x1_stride2_tf32(void)
{ gpu_vs_ref(layer_proto(LAYER_CONV, 1, 2, 0, 0), PRECISION_TF32, 2, 64, 8, 8, 128, 4, 4); }
static void test_conv_3x3_tf32_nhwc(void)
{ gpu_vs_ref_nhwc(layer_proto(LAYER_CONV, 3, 1, 1, 0), PRECISION_TF32, 2, 128, 8, 8, 32, 8, 8); }
static void test_linear_tf32(void)
{ struct model_layer l = layer_proto(LAYER_LINEAR, 0, 0, 0, 0); l.has_bias = 1;
  gpu_vs_ref(l, PRECISION_TF32, 3, 64, 1, 1, 14, 1, 1); }

/* BN+ReLU over 8 images of 48x48: 18432 elements a channel, split over
 * 4 blocks per channel in both training kernels (gpu_k_bn.cu). */
static void test_batchnorm_split_over_parts_fp32(void)
{
	gpu_vs_ref(layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), PRECISION_FP32, 8, 4, 48, 48, 4, 48, 48);
}

static void test_batchnorm_split_over_parts_bf16(void)
{
	gpu_vs_ref(layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), PRECISION_BF16, 8, 4, 48, 48, 4, 48, 48);
}

static void test_batchnorm_split_over_parts_fp32_nhwc(void)
{
	gpu_vs_ref_nhwc(layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1), PRECISION_FP32, 8, 4, 48, 48, 4, 48,
			48);
}

/* in (8, 6, 6) -1x1-> block[0, 8) -BN+ReLU-> mid (8) -3x3-> block[8, 12)
 * -BN-> tail (12) -global avg-> out (12): slices of one buffer,
 * block[0, 8)'s gradient accumulated from two readers, the second BN
 * reusing the first's statistics of block[0, 8) and computing block[8, 12)'s
 * (as a dense block's layers and transition). */
static void dense_block_desc(struct model_desc *dd)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct model_layer l;

	model_desc_init(&d, "layer");
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, 8, 6, 6, &err);
	model_desc_add_tensor(&d, "block", TENSOR_CONCAT, 12, 6, 6, &err);
	model_desc_add_tensor(&d, "mid", TENSOR_PLAIN, 8, 6, 6, &err);
	model_desc_add_tensor(&d, "tail", TENSOR_PLAIN, 12, 6, 6, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, 12, 1, 1, &err);
	l = layer_proto(LAYER_CONV, 1, 1, 0, 0);
	snprintf(l.name, sizeof(l.name), "conv0");
	l.in = (struct tensor_slice){ 0, 0, 8 };
	l.out = (struct tensor_slice){ 1, 0, 8 };
	model_desc_add_layer(&d, &l, &err);
	l = layer_proto(LAYER_BATCHNORM, 0, 0, 0, 1);
	snprintf(l.name, sizeof(l.name), "norm1");
	l.in = (struct tensor_slice){ 1, 0, 8 };
	l.out = (struct tensor_slice){ 2, 0, 8 };
	model_desc_add_layer(&d, &l, &err);
	l = layer_proto(LAYER_CONV, 3, 1, 1, 0);
	snprintf(l.name, sizeof(l.name), "conv1");
	l.in = (struct tensor_slice){ 2, 0, 8 };
	l.out = (struct tensor_slice){ 1, 8, 4 };
	model_desc_add_layer(&d, &l, &err);
	l = layer_proto(LAYER_BATCHNORM, 0, 0, 0, 0);
	snprintf(l.name, sizeof(l.name), "norm2");
	l.in = (struct tensor_slice){ 1, 0, 12 };
	l.out = (struct tensor_slice){ 3, 0, 12 };
	model_desc_add_layer(&d, &l, &err);
	l = layer_proto(LAYER_GLOBAL_AVGPOOL, 0, 0, 0, 0);
	snprintf(l.name, sizeof(l.name), "pool");
	l.in = (struct tensor_slice){ 3, 0, 12 };
	l.out = (struct tensor_slice){ 4, 0, 12 };
	model_desc_add_layer(&d, &l, &err);
	*dd = d;
}

static void dense_block_slices(enum gpu_layout layout)
{
	struct model_desc d;
	struct layer_pair t;

	NEED_DEVICE();
	memset(&t, 0, sizeof(t));
	dense_block_desc(&d);
	if (layer_pair_finish(&t, &d, 3, PRECISION_FP32, &gpu_fill) == 0) {
		t.gpu_layout = layout;
		layer_vs_ref(&t, &backend_gpu_ops, PRECISION_FP32, NULL);
	}
}

static void test_dense_block_slices_fp32(void) { dense_block_slices(GPU_LAYOUT_NCHW); }
static void test_dense_block_slices_fp32_nhwc(void) { dense_block_slices(GPU_LAYOUT_NHWC); }

/* What crosses to the host under one layout: the gradients of a
 * training step, then parameters and Adam moments after a device update
 * from moments loaded from the host. */
struct crossing {
	float *grads, *params, *m, *v;
};

/* How one side of a comparison runs. */
struct step_mode {
	enum gpu_layout layout;
	int memory_efficient;
};

static int cross(struct layer_pair *t, const float *params0, const float *m0, const float *v0,
		 struct step_mode mode, struct crossing *out)
{
	struct trainer_error err = { "" };
	enum gpu_layout layout = mode.layout;
	struct backend_options opt = { .max_batch = t->n, .precision = PRECISION_FP32,
				       .gpu_layout = layout,
				       .memory_efficient = mode.memory_efficient };
	struct optim_config cfg;
	struct optim o;
	size_t np = t->m.desc.param_count, bytes = np * sizeof(float);
	float *y = calloc(t->out_count, sizeof(float));

	memcpy(t->m.params, params0, bytes);
	optim_config_default(&cfg);
	CHECK_INT(optim_init(&o, &cfg, np, &err), 0);
	memcpy(o.m, m0, bytes);
	memcpy(o.v, v0, bytes);
	struct backend *b = backend_gpu_ops.create(&t->m, &opt, &err);
	struct backend_input in = { .x = t->x, .count = t->n };
	int rc = !b || backend_gpu_ops.forward(b, &in, 1, y, &err) ||
		 backend_gpu_ops.backward(b, t->dy, NULL, NULL, NULL, &err);
	CHECK_MSG(rc == 0, "%s: %s", layout == GPU_LAYOUT_NHWC ? "nhwc" : "nchw", err.msg);
	*out = (struct crossing){ malloc(bytes), malloc(bytes), malloc(bytes), malloc(bytes) };
	memcpy(out->grads, t->m.grads, bytes);
	struct gpu_train *g = rc ? NULL : gpu_train_open(b, &o, 1, 1, &err);
	rc = rc || !g || gpu_train_load_moments(g, &o, &err) ||
	     gpu_train_optim_step(g, &o, 1e-2, &err) || gpu_train_sync_host(g, &o, &err);
	CHECK_MSG(rc == 0, "device update: %s", err.msg);
	memcpy(out->params, t->m.params, bytes);
	memcpy(out->m, o.m, bytes);
	memcpy(out->v, o.v, bytes);
	gpu_train_close(g);
	if (b)
		backend_gpu_ops.destroy(b);
	optim_free(&o);
	free(y);
	return rc ? -1 : 0;
}

static void crossing_free(struct crossing *c)
{
	free(c->grads);
	free(c->params);
	free(c->m);
	free(c->v);
}

/* Trains t one step and updates it on the device in each mode: what
 * crosses to the host must agree, bit for bit on the emulated device
 * (the same sums in the same order), within gpu_tol of the largest on a
 * GPU (other algorithms may run). Frees t. */
static void modes_agree(struct layer_pair *t, double gpu_tol, struct step_mode one,
			struct step_mode other)
{
	struct crossing a = { 0 }, b = { 0 };
	struct rng r;
	size_t np = t->m.desc.param_count;
	float *p0 = malloc(np * sizeof(float)), *m0 = malloc(np * sizeof(float));
	float *v0 = malloc(np * sizeof(float));

	memcpy(p0, t->m.params, np * sizeof(float));
	rng_seed(&r, 8);
	for (size_t i = 0; i < np; i++) {
		m0[i] = (float)rng_normal(&r) * 0.01f;
		v0[i] = (float)rng_uniform(&r) * 1e-4f;
	}
	if (cross(t, p0, m0, v0, one, &a) == 0 && cross(t, p0, m0, v0, other, &b) == 0) {
#ifdef HVD_GPU_EMU
		double tol = 0;
#else
		double tol = gpu_tol;
#endif
		CHECK_ARRAYS("gradients", b.grads, a.grads, np, tol, tol);
		CHECK_ARRAYS("parameters", b.params, a.params, np, tol, tol);
		CHECK_ARRAYS("first moments", b.m, a.m, np, tol, tol);
		CHECK_ARRAYS("second moments", b.v, a.v, np, tol, tol);
		CHECK_MSG(memcmp(a.params, p0, np * sizeof(float)) != 0, "the update changed nothing");
	}
	crossing_free(&a);
	crossing_free(&b);
	free(p0);
	free(m0);
	free(v0);
	free(t->x);
	free(t->dy);
	model_destroy(&t->m);
}

static const struct step_mode mode_nchw = { GPU_LAYOUT_NCHW, 0 }, mode_nhwc = { GPU_LAYOUT_NHWC, 0 };

static void layouts_agree(struct layer_pair *t, double gpu_tol)
{
	modes_agree(t, gpu_tol, mode_nchw, mode_nhwc);
}

/* Host gradients, parameters and moments are torchvision's under both
 * layouts (checkpoints and the host optimizer see one layout): the
 * dense-block model (a 3x3 conv over 8 channels: a filter whose KRSC and
 * KCRS differ) agrees across layouts (1e-5 on a GPU). */
static void test_layouts_equal_at_every_host_crossing(void)
{
	struct model_desc d;
	struct layer_pair t;

	NEED_DEVICE();
	memset(&t, 0, sizeof(t));
	dense_block_desc(&d);
	if (layer_pair_finish(&t, &d, 3, PRECISION_FP32, &gpu_fill) == 0)
		layouts_agree(&t, 1e-5);
}

/* The whole networks at 32 px, batch 2, initialised as training starts
 * them: every layer kind in the places the models put it (stem, the
 * dense blocks' growing slices, transitions, bottlenecks, the residual
 * adds, the classifier) agrees across layouts (1e-4 on a GPU). */
static void whole_model_modes_agree(const char *name, struct step_mode one,
				    struct step_mode other)
{
	struct model_desc d;
	struct layer_pair t;
	struct trainer_error err = { "" };

	NEED_DEVICE();
	memset(&t, 0, sizeof(t));
	if (model_by_name(&d, name, 32, 14, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s: %s", name, err.msg);
		return;
	}
	if (layer_pair_finish(&t, &d, 2, PRECISION_FP32, &gpu_fill))
		return;
	model_init_params(&t.m, 5);
	modes_agree(&t, 1e-4, one, other);
}

static const struct step_mode mode_nhwc_rebuilt = { GPU_LAYOUT_NHWC, 1 };

static void test_densenet121_layouts_agree(void)
{
	whole_model_modes_agree("densenet121", mode_nchw, mode_nhwc);
}

/* --memory-efficient writes the BN(+ReLU) outputs again in backward from
 * the saved statistics: the same step, bit for bit on the emulated
 * device (each dense layer's norm1 and norm2, the stem's norm0 before its
 * max pool). ResNet-50, whose step costs the most to emulate, takes both
 * levers in one comparison (its BNs without ReLU before a residual add
 * rebuilt too). */
static void test_densenet121_memory_efficient_agrees(void)
{
	whole_model_modes_agree("densenet121", mode_nhwc, mode_nhwc_rebuilt);
}

static void test_resnet50_layouts_and_memory_efficient_agree(void)
{
	whole_model_modes_agree("resnet50", mode_nchw, mode_nhwc_rebuilt);
}

/* A linear layer over pixels flattens them in torchvision's (C, H, W)
 * order, which NHWC memory is not: refused at create, in one line. */
static void test_nhwc_refuses_a_linear_layer_over_pixels(void)
{
	struct layer_pair t;
	struct trainer_error err = { "" };
	struct model_layer l = layer_proto(LAYER_LINEAR, 0, 0, 0, 0);

	NEED_DEVICE();
	if (layer_pair_one(&t, l, 2, 4, 3, 3, 5, 1, 1, PRECISION_FP32, &gpu_fill))
		return;
	struct backend_options opt = { .max_batch = 2, .precision = PRECISION_FP32,
				       .gpu_layout = GPU_LAYOUT_NHWC };
	struct backend *b = backend_gpu_ops.create(&t.m, &opt, &err);
	CHECK(b == NULL);
	if (b)
		backend_gpu_ops.destroy(b);
	CHECK_CONTAINS(err.msg, "--gpu-layout nhwc: a linear layer over 3x3 pixels");
	CHECK(strchr(err.msg, '\n') == NULL);
	free(t.x);
	free(t.dy);
	model_destroy(&t.m);
}

/* uint8 images: the GPU's normalisation equals input_norm.h's. */
static void image_input_normalised(enum gpu_layout layout)
{
	struct layer_pair t;
	struct batch images = { 0 };

	NEED_DEVICE();
	if (layer_pair_one(&t, layer_proto(LAYER_CONV, 3, 2, 1, 0), 2, 3, 16, 16, 8, 8, 8,
			   PRECISION_FP32, &gpu_fill))
		return;
	images.count = images.capacity = 2;
	images.size = 16;
	images.pixels = malloc(2 * 16 * 16);
	for (int i = 0; i < 2 * 16 * 16; i++)
		images.pixels[i] = (uint8_t)(i * 29 % 256);
	t.gpu_layout = layout;
	layer_vs_ref(&t, &backend_gpu_ops, PRECISION_FP32, &images);
	free(images.pixels);
}

static void test_image_input_normalised_on_gpu(void) { image_input_normalised(GPU_LAYOUT_NCHW); }
static void test_image_input_normalised_on_gpu_nhwc(void)
{
	image_input_normalised(GPU_LAYOUT_NHWC);
}

#ifdef HVD_GPU_EMU
/* The emulated cuDNN's NHWC half: a 3x3 convolution (5 -> 4 channels,
 * 6x6, pad 1, batch 2) over channels [1, 6) of a 7-channel NHWC buffer
 * with a KRSC filter equals the packed NCHW/KCRS one bit for bit in all
 * three directions (the same sums in the same order); a KRSC filter with
 * NCHW tensors is refused, as the legacy API's NHWC-filter algorithms
 * refuse it, and so are overlapping strides. */
enum { EN = 2, EC = 5, ECT = 7, EC0 = 1, EK = 4, EH = 6, EHW = EH * EH, ER = 3 };

struct emu_conv {
	cudnnHandle_t h;
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t cv;
};

static int emu_conv_open(struct emu_conv *e, int nhwc)
{
	int ok = cudnnCreate(&e->h) == CUDNN_STATUS_SUCCESS &&
		 cudnnCreateTensorDescriptor(&e->x) == CUDNN_STATUS_SUCCESS &&
		 cudnnCreateTensorDescriptor(&e->y) == CUDNN_STATUS_SUCCESS &&
		 cudnnCreateFilterDescriptor(&e->w) == CUDNN_STATUS_SUCCESS &&
		 cudnnCreateConvolutionDescriptor(&e->cv) == CUDNN_STATUS_SUCCESS &&
		 cudnnSetConvolution2dDescriptor(e->cv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
						 CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&
		 cudnnSetConvolutionMathType(e->cv, CUDNN_FMA_MATH) == CUDNN_STATUS_SUCCESS;
	if (!ok)
		return -1;
	if (nhwc)
		ok = cudnnSetTensor4dDescriptorEx(e->x, CUDNN_DATA_FLOAT, EN, EC, EH, EH, EHW * ECT, 1,
						  EH * ECT, ECT) == CUDNN_STATUS_SUCCESS &&
		     cudnnSetTensor4dDescriptorEx(e->y, CUDNN_DATA_FLOAT, EN, EK, EH, EH, EHW * EK, 1,
						  EH * EK, EK) == CUDNN_STATUS_SUCCESS;
	else
		ok = cudnnSetTensor4dDescriptorEx(e->x, CUDNN_DATA_FLOAT, EN, EC, EH, EH, EHW * EC, EHW,
						  EH, 1) == CUDNN_STATUS_SUCCESS &&
		     cudnnSetTensor4dDescriptorEx(e->y, CUDNN_DATA_FLOAT, EN, EK, EH, EH, EHW * EK, EHW,
						  EH, 1) == CUDNN_STATUS_SUCCESS;
	return ok && cudnnSetFilter4dDescriptor(e->w, CUDNN_DATA_FLOAT, nhwc ? CUDNN_TENSOR_NHWC :
						CUDNN_TENSOR_NCHW, EK, EC, ER, ER) ==
		     CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static void emu_conv_close(struct emu_conv *e)
{
	cudnnDestroyConvolutionDescriptor(e->cv);
	cudnnDestroyFilterDescriptor(e->w);
	cudnnDestroyTensorDescriptor(e->y);
	cudnnDestroyTensorDescriptor(e->x);
	cudnnDestroy(e->h);
}

/* Forward, backward data and filter (their slowest deterministic
 * algorithms: no workspace) into y, dx, dw; stream 0 runs at the call. */
static int emu_conv_run(const struct emu_conv *e, const float *x, const float *w, const float *dy,
			float *y, float *dx, float *dw)
{
	float one = 1.0f, zero = 0.0f;
	return cudnnConvolutionForward(e->h, &one, e->x, x, e->w, w, e->cv,
				       CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, e->y,
				       y) == CUDNN_STATUS_SUCCESS &&
	       cudnnConvolutionBackwardData(e->h, &one, e->w, w, e->y, dy, e->cv,
					    CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, NULL, 0, &zero, e->x,
					    dx) == CUDNN_STATUS_SUCCESS &&
	       cudnnConvolutionBackwardFilter(e->h, &one, e->x, x, e->y, dy, e->cv,
					      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL, 0, &zero, e->w,
					      dw) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

/* (n, c, p) of a packed NCHW array, at its place in the NHWC one. */
static size_t nhwc_at(int n, int c, int p, int c_total, int c0)
{
	return ((size_t)n * EHW + p) * c_total + c0 + c;
}

static void test_emulated_cudnn_nhwc_krsc_equals_nchw(void)
{
	enum { X = EN * EC * EHW, Y = EN * EK * EHW, W = EK * EC * ER * ER, XB = EN * ECT * EHW };
	static float x[X], w[W], dy[Y], y[Y], dx[X], dw[W];
	static float xb[XB], wk[W], dyb[Y], yb[Y], dxb[XB], dwk[W];
	struct emu_conv a, b;
	struct rng r;

	rng_seed(&r, 3);
	for (int i = 0; i < X; i++)
		x[i] = (float)rng_normal(&r);
	for (int i = 0; i < W; i++)
		w[i] = (float)rng_normal(&r);
	for (int i = 0; i < Y; i++)
		dy[i] = (float)rng_normal(&r);
	for (int n = 0; n < EN; n++)
		for (int p = 0; p < EHW; p++) {
			for (int c = 0; c < EC; c++)
				xb[nhwc_at(n, c, p, ECT, EC0)] = x[((size_t)n * EC + c) * EHW + p];
			for (int k = 0; k < EK; k++)
				dyb[nhwc_at(n, k, p, EK, 0)] = dy[((size_t)n * EK + k) * EHW + p];
		}
	for (int k = 0; k < EK; k++)
		for (int c = 0; c < EC; c++)
			for (int t = 0; t < ER * ER; t++)
				wk[((size_t)k * ER * ER + t) * EC + c] = w[((size_t)k * EC + c) * ER * ER + t];
	struct emu_math_requests m;
	emu_math_requests_take(&m);
	CHECK_INT(emu_conv_open(&a, 0), 0);
	CHECK_INT(emu_conv_open(&b, 1), 0);
	CHECK_INT(emu_conv_run(&a, x, w, dy, y, dx, dw), 0);
	CHECK_INT(emu_conv_run(&b, xb + EC0, wk, dyb, yb, dxb + EC0, dwk), 0);
	emu_math_requests_take(&m);
	CHECK_MSG(m.conv_kcrs == 3 && m.conv_krsc == 3 && m.conv_nchw == 3 && m.conv_nhwc == 3,
		  "filters KCRS %ld, KRSC %ld; tensors NCHW %ld, NHWC %ld (3 each)", m.conv_kcrs,
		  m.conv_krsc, m.conv_nchw, m.conv_nhwc);
	for (int n = 0; n < EN; n++)
		for (int p = 0; p < EHW; p++) {
			for (int k = 0; k < EK; k++)
				CHECK(yb[nhwc_at(n, k, p, EK, 0)] == y[((size_t)n * EK + k) * EHW + p]);
			for (int c = 0; c < EC; c++)
				CHECK(dxb[nhwc_at(n, c, p, ECT, EC0)] == dx[((size_t)n * EC + c) * EHW + p]);
		}
	for (int k = 0; k < EK; k++)
		for (int c = 0; c < EC; c++)
			for (int t = 0; t < ER * ER; t++)
				CHECK(dwk[((size_t)k * ER * ER + t) * EC + c] == dw[((size_t)k * EC + c) * ER * ER + t]);
	/* a KRSC filter over NCHW tensors; then (n, c, h, w) strides that overlap */
	int got = 0;
	cudnnConvolutionFwdAlgoPerf_t perf[8];
	CHECK(cudnnSetFilter4dDescriptor(a.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, EK, EC, ER, ER) ==
	      CUDNN_STATUS_SUCCESS);
	CHECK(cudnnGetConvolutionForwardAlgorithm_v7(a.h, a.x, a.w, a.cv, a.y, 8, &got, perf) ==
	      CUDNN_STATUS_NOT_SUPPORTED);
	CHECK(cudnnSetTensor4dDescriptorEx(a.x, CUDNN_DATA_FLOAT, EN, EC, EH, EH, EHW * EC, 2, EH, 1) ==
	      CUDNN_STATUS_BAD_PARAM);
	CHECK(cudnnSetFilter4dDescriptor(a.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW_VECT_C, EK, EC, ER,
					 ER) == CUDNN_STATUS_NOT_SUPPORTED);
	emu_conv_close(&a);
	emu_conv_close(&b);
}
#else
static void test_emulated_cudnn_nhwc_krsc_equals_nchw(void)
{
	SKIP("the emulated cuDNN's own case: gpu-emulated runs this group there");
}
#endif

/* Three device updates (gpu_k_adam / gpu_k_sgd) against optim_step. */
static void optimizer_vs_host(enum optim_kind kind)
{
	enum { COUNT = 1000, STEPS = 3 };
	struct optim_config cfg;
	struct optim o;
	struct trainer_error err = { "" };
	float p[COUNT], g[COUNT], got[COUNT];
	float *dp = NULL, *dg = NULL, *dm = NULL, *dv = NULL, *dvalues = NULL, values[2];
	struct rng r;

	NEED_DEVICE();
	optim_config_default(&cfg);
	cfg.kind = kind;
	cfg.momentum = 0.9;
	cfg.weight_decay = 1e-4;
	CHECK_INT(optim_init(&o, &cfg, COUNT, &err), 0);
	rng_seed(&r, 5);
	for (int i = 0; i < COUNT; i++) {
		p[i] = (float)rng_normal(&r);
		g[i] = (float)rng_normal(&r) * 0.1f;
	}
	CHECK(cudaMalloc((void **)&dp, sizeof(p)) == cudaSuccess &&
	      cudaMalloc((void **)&dg, sizeof(g)) == cudaSuccess &&
	      cudaMalloc((void **)&dm, sizeof(p)) == cudaSuccess &&
	      cudaMalloc((void **)&dv, sizeof(p)) == cudaSuccess &&
	      cudaMalloc((void **)&dvalues, sizeof(values)) == cudaSuccess);
	CHECK(cudaMemcpy(dp, p, sizeof(p), cudaMemcpyHostToDevice) == cudaSuccess);
	CHECK(cudaMemcpy(dg, g, sizeof(g), cudaMemcpyHostToDevice) == cudaSuccess);
	CHECK(cudaMemset(dm, 0, sizeof(p)) == cudaSuccess && cudaMemset(dv, 0, sizeof(p)) == cudaSuccess);
	for (int step = 1; step <= STEPS; step++) {
		struct gpu_adam_args a = { 1e-3f, (float)cfg.beta1, (float)cfg.beta2, (float)cfg.eps,
					   (float)cfg.weight_decay, step };
		if (kind == OPTIM_ADAM)
			CHECK_INT(gpu_adam_values(a, values), 0);
		else
			gpu_sgd_values(1e-3f, step == 1, values);
		CHECK(cudaMemcpy(dvalues, values, sizeof(values), cudaMemcpyHostToDevice) == cudaSuccess);
		cudaError_t rc = kind == OPTIM_ADAM ? gpu_k_adam(0, dp, dg, dm, dv, COUNT, a, dvalues)
			: gpu_k_sgd(0, dp, dg, dm, COUNT, (float)cfg.momentum, (float)cfg.weight_decay,
				    dvalues);
		CHECK_MSG(rc == cudaSuccess, "step %d: %s", step, cudaGetErrorString(rc));
		optim_step(&o, p, g, 1e-3);
	}
	CHECK(cudaMemcpy(got, dp, sizeof(got), cudaMemcpyDeviceToHost) == cudaSuccess);
	CHECK_ARRAYS("parameters", got, p, COUNT, 1e-6, 1e-5);
	cudaFree(dp);
	cudaFree(dg);
	cudaFree(dm);
	cudaFree(dv);
	cudaFree(dvalues);
	optim_free(&o);
}

static void test_adam_kernel_matches_host(void) { optimizer_vs_host(OPTIM_ADAM); }
static void test_sgd_kernel_matches_host(void) { optimizer_vs_host(OPTIM_SGD); }

const struct test_case gpu_layers_tests[] = {
	ROWS(fp32),
	ROWS(bf16),
	ROWS(fp16),
	ROWS(fp32_nhwc),
	ROWS(bf16_nhwc),
	ROWS(fp16_nhwc),
	{ "conv_3x3_tf32_nhwc", test_conv_3x3_tf32_nhwc },
	{ "dense_block_slices_fp32_nhwc", test_dense_block_slices_fp32_nhwc },
	{ "batchnorm_split_over_parts_fp32_nhwc", test_batchnorm_split_over_parts_fp32_nhwc },
	{ "image_input_normalised_on_gpu_nhwc", test_image_input_normalised_on_gpu_nhwc },
	{ "layouts_equal_at_every_host_crossing", test_layouts_equal_at_every_host_crossing },
	{ "densenet121_layouts_agree", test_densenet121_layouts_agree },
	{ "densenet121_memory_efficient_agrees", test_densenet121_memory_efficient_agrees },
	{ "resnet50_layouts_and_memory_efficient_agree",
	  test_resnet50_layouts_and_memory_efficient_agree },
	{ "nhwc_refuses_a_linear_layer_over_pixels", test_nhwc_refuses_a_linear_layer_over_pixels },
	{ "conv_7x7_stride2_tf32", test_conv_7x7_stride2_tf32 },
	{ "conv_3x3_tf32", test_conv_3x3_tf32 },
	{ "conv_1x1_stride2_tf32", test_conv_1x1_stride2_tf32 },
	{ "linear_tf32", test_linear_tf32 },
	{ "dense_block_slices_fp32", test_dense_block_slices_fp32 },
	{ "batchnorm_split_over_parts_fp32", test_batchnorm_split_over_parts_fp32 },
	{ "batchnorm_split_over_parts_bf16", test_batchnorm_split_over_parts_bf16 },
	{ "image_input_normalised_on_gpu", test_image_input_normalised_on_gpu },
	{ "emulated_cudnn_nhwc_krsc_equals_nchw", test_emulated_cudnn_nhwc_krsc_equals_nchw },
	{ "adam_kernel_matches_host", test_adam_kernel_matches_host },
	{ "sgd_kernel_matches_host", test_sgd_kernel_matches_host },
	{ 0 }
};
