/* test_gpu_emu.c - the GPU backend's own kernels executed on the CPU
 * (group gpu-emu; tests/gpu_emu: the .cu files compiled as host C++ under
 * an emulation of the launch model, real threads per block meeting at
 * __syncthreads) against trainer/backend/ref and the host code they mirror: the
 * loss kernel against loss.c, batch norm (train, eval, backward, ReLU,
 * strided channel slices, accumulate) against ref_batchnorm, max/avg/
 * global pooling, ReLU, ADD, bias, Adam/SGD against optim.c, the uint8
 * input step against input_norm.c (and crop windows with flips), the
 * fp16/bf16 conversions and the overflow check. What it does not test:
 * cuDNN/cuBLAS (conv, linear), streams, events or timing (gpu-layers
 * does, on a GPU).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_emu/gpu_emu.h"
#include "model/input_norm.h"
#include "model/loss.h"
#include "train/optim.h"
#include "backend/ref/layers.h"
#include "base/rng.h"
#include "runner.h"

/* A strided tensor with both views onto the same floats. */
struct tensor {
	float *data;
	struct ref_view r;
	struct gpu_view g;
};

/* (n, c, h, w) as channels c0.. of a (n, c_total, h, w) buffer. */
static void tensor_make(struct tensor *t, int n, int c_total, int c0, int c, int h, int w,
			struct rng *r)
{
	size_t total = (size_t)n * c_total * h * w;
	t->data = malloc(total * sizeof(float));
	for (size_t i = 0; i < total; i++)
		t->data[i] = (float)rng_normal(r);
	float *base = t->data + (size_t)c0 * h * w;
	t->r = (struct ref_view){ base, n, c, h, w, (size_t)c_total * h * w };
	t->g = gpu_view_nchw(t->data, sizeof(float), n, c_total, c0, c, h, w);
}

static struct tensor tensor_copy(const struct tensor *t, size_t total)
{
	struct tensor c = *t;
	c.data = malloc(total * sizeof(float));
	memcpy(c.data, t->data, total * sizeof(float));
	size_t off = (size_t)((float *)t->r.data - t->data);
	c.r.data = c.data + off;
	c.g.data = c.data + off;
	return c;
}

static size_t tensor_total(const struct tensor *t, int c_total)
{
	return (size_t)t->r.n * c_total * t->r.h * t->r.w;
}

/* Max |a-b| / max(1, |b|) over count floats. */
static double max_rel(const float *a, const float *b, size_t count)
{
	double worst = 0;
	for (size_t i = 0; i < count; i++) {
		double d = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
		if (!(d <= worst))
			worst = d;
	}
	return worst;
}

#define CHECK_CLOSE(a, b, count, tol, what) do { \
	double d_ = max_rel((a), (b), (count)); \
	CHECK_MSG(d_ <= (tol), "%s: max rel diff %.3g > %.3g", (what), d_, (double)(tol)); \
} while (0)

static void test_bce_matches_loss_c(void)
{
	enum { N = 20, C = 14 };   /* 280 values: more than one block's threads */
	float z[N * C], y[N * C], wp[C], wn[C], dy_gpu[N * C], dy_ref[N * C];
	double acc[2] = { 0, 0 };
	struct rng r;

	rng_seed(&r, 5);
	for (int i = 0; i < N * C; i++) {
		z[i] = (float)(4 * rng_normal(&r));
		y[i] = rng_uniform(&r) < 0.3 ? 1.0f : 0.0f;
	}
	for (int c = 0; c < C; c++) {
		wp[c] = 0.3f + 0.05f * c;
		wn[c] = 1.2f - 0.05f * c;
	}
	double l1 = loss_bce(z, y, N, C, wp, wn, dy_ref);
	CHECK_INT(gpu_emu.bce(0, z, y, wp, wn, N, C, dy_gpu, acc), 0);
	CHECK_NEAR(acc[0], l1, 0, 1e-12);
	CHECK(acc[1] == 1.0);
	CHECK_CLOSE(dy_gpu, dy_ref, N * C, 1e-7, "weighted dy");
	double l2 = loss_bce(z, y, N, C, NULL, NULL, dy_ref);
	CHECK_INT(gpu_emu.bce(0, z, y, NULL, NULL, N, C, dy_gpu, acc), 0);
	CHECK_NEAR(acc[0], l1 + l2, 0, 1e-12);   /* a running sum */
	CHECK(acc[1] == 2.0);
	CHECK_CLOSE(dy_gpu, dy_ref, N * C, 1e-7, "unweighted dy");
}

/* BN(+ReLU) on channels 2..6 of an 8-channel (N, H, W) tensor, train
 * forward, backward accumulating into dx, and eval forward; each channel
 * is split over `parts` blocks in both training kernels (2 kernels, C *
 * parts blocks of 256 threads each). */
static void bn_case(int relu, int N, int H, int W, int parts)
{
	enum { CT = 8, C0 = 2, C = 5 };
	struct rng r;
	struct tensor x, y, dy, dx;
	float gamma[C], beta[C], rm[C], rv[C], rm2[C], rv2[C];
	float mean_r[C], inv_r[C], mean_g[C], inv_g[C], dg_r[C], db_r[C], dg_g[C], db_g[C];
	struct gpu_bn_args a = { (float)REF_BN_EPS, (float)REF_BN_MOMENTUM, relu };

	rng_seed(&r, 9 + relu);
	tensor_make(&x, N, CT, C0, C, H, W, &r);
	tensor_make(&y, N, CT, C0, C, H, W, &r);
	tensor_make(&dy, N, CT, C0, C, H, W, &r);
	tensor_make(&dx, N, CT, C0, C, H, W, &r);
	size_t total = tensor_total(&x, CT);
	struct tensor y2 = tensor_copy(&y, total), dx2 = tensor_copy(&dx, total);
	for (int c = 0; c < C; c++) {
		gamma[c] = 0.5f + 0.1f * c;
		beta[c] = 0.2f - 0.1f * c;
		rm[c] = rm2[c] = 0.1f * c;
		rv[c] = rv2[c] = 1.0f + 0.2f * c;
	}
	ref_batchnorm_forward_train(&x.r, gamma, beta, relu, &y.r, mean_r, inv_r, rm, rv);
	float part[C * 64 * 2], stats[2 * C];
	unsigned long started = gpu_emu_threads_started();
	CHECK_INT(gpu_emu.bn_fwd_train(0, GPU_F32, x.g, gamma, beta, a, y2.g, mean_g, inv_g, rm2,
				       rv2, stats, 0, part, 64), 0);
	CHECK_MSG(gpu_emu_threads_started() - started == 2ul * C * parts * 256, "%lu threads for "
		  "%d parts", gpu_emu_threads_started() - started, parts);
	CHECK_CLOSE(y2.data, y.data, total, 1e-5, "bn forward (untouched channels too)");
	CHECK_CLOSE(mean_g, mean_r, C, 1e-6, "saved mean");
	CHECK_CLOSE(inv_g, inv_r, C, 1e-5, "saved 1/std");
	CHECK_CLOSE(rm2, rm, C, 1e-6, "running mean");
	CHECK_CLOSE(rv2, rv, C, 1e-5, "running var (unbiased)");
	ref_batchnorm_backward(&x.r, &y.r, &dy.r, gamma, relu, mean_r, inv_r, &dx.r, 1, dg_r, db_r);
	started = gpu_emu_threads_started();
	CHECK_INT(gpu_emu.bn_bwd(0, GPU_F32, x.g, y.g, dy.g, gamma, relu, mean_r, inv_r, dx2.g, 1,
				 dg_g, db_g, part, 64), 0);
	CHECK(gpu_emu_threads_started() - started == 2ul * C * parts * 256);
	CHECK_CLOSE(dx2.data, dx.data, total, 1e-4, "bn dx (accumulated)");
	CHECK_CLOSE(dg_g, dg_r, C, 1e-4, "dgamma");
	CHECK_CLOSE(db_g, db_r, C, 1e-5, "dbeta");
	ref_batchnorm_forward_eval(&x.r, gamma, beta, rm, rv, relu, &y.r);
	CHECK_INT(gpu_emu.bn_fwd_eval(0, GPU_F32, x.g, gamma, beta, rm, rv, a, y2.g), 0);
	CHECK_CLOSE(y2.data, y.data, total, 1e-5, "bn eval forward");
	free(x.data), free(y.data), free(dy.data), free(dx.data), free(y2.data), free(dx2.data);
}

static void test_bn_matches_ref(void) { bn_case(0, 3, 4, 3, 1); }
/* 10 images of 40x40: 16000 elements a channel, 3 parts of 3, 3 and 4
 * images (uneven: the combine weights each part by its size). */
static void test_bn_split_over_parts_matches_ref(void) { bn_case(1, 10, 40, 40, 3); }
static void test_bn_relu_matches_ref(void) { bn_case(1, 3, 4, 3, 1); }

/* Forward and backward (accumulating) of one pooling kind against ref. */
static void pool_case(int kind, struct ref_conv_shape s, int h_out)
{
	enum { N = 2, C = 3, H = 9 };
	struct rng r;
	struct tensor x, y, dy, dx;
	struct gpu_pool_shape p = { s.kernel, s.stride, s.pad };

	rng_seed(&r, 21 + kind);
	tensor_make(&x, N, C, 0, C, H, H, &r);
	tensor_make(&y, N, C, 0, C, h_out, h_out, &r);
	tensor_make(&dy, N, C, 0, C, h_out, h_out, &r);
	tensor_make(&dx, N, C, 0, C, H, H, &r);
	if (kind == 0)  /* ties: the first in window order wins on both */
		x.data[1] = x.data[0];
	size_t out = tensor_total(&y, C), in = tensor_total(&x, C);
	struct tensor y2 = tensor_copy(&y, out), dx2 = tensor_copy(&dx, in);
	if (kind == 0) {
		ref_maxpool_forward(&x.r, s, &y.r);
		ref_maxpool_backward(&x.r, &dy.r, s, &dx.r, 1);
		CHECK_INT(gpu_emu.maxpool_fwd(0, GPU_F32, x.g, p, y2.g), 0);
		CHECK_INT(gpu_emu.maxpool_bwd(0, GPU_F32, x.g, dy.g, p, dx2.g, 1), 0);
	} else if (kind == 1) {
		ref_avgpool_forward(&x.r, s, &y.r);
		ref_avgpool_backward(&dy.r, s, &dx.r, 1);
		CHECK_INT(gpu_emu.avgpool_fwd(0, GPU_F32, x.g, p, y2.g), 0);
		CHECK_INT(gpu_emu.avgpool_bwd(0, GPU_F32, dy.g, p, dx2.g, 1), 0);
	} else {
		ref_global_avgpool_forward(&x.r, &y.r);
		ref_global_avgpool_backward(&dy.r, &dx.r, 1);
		CHECK_INT(gpu_emu.gap_fwd(0, GPU_F32, x.g, y2.g), 0);
		CHECK_INT(gpu_emu.gap_bwd(0, GPU_F32, dy.g, dx2.g, 1), 0);
	}
	CHECK_CLOSE(y2.data, y.data, out, 1e-6, "pool forward");
	CHECK_CLOSE(dx2.data, dx.data, in, 1e-6, "pool dx (accumulated)");
	free(x.data), free(y.data), free(dy.data), free(dx.data), free(y2.data), free(dx2.data);
}

static void test_maxpool_matches_ref(void)
{
	pool_case(0, (struct ref_conv_shape){ 3, 2, 1 }, 5);
}

static void test_avgpool_matches_ref(void)
{
	pool_case(1, (struct ref_conv_shape){ 2, 2, 0 }, 4);
}

static void test_global_avgpool_matches_ref(void)
{
	pool_case(2, (struct ref_conv_shape){ 0, 0, 0 }, 1);
}

static void test_relu_and_add_match_ref(void)
{
	enum { N = 2, C = 4, H = 5 };
	struct rng r;
	struct tensor a, b, y, dy, da, db;

	rng_seed(&r, 33);
	tensor_make(&a, N, C, 0, C, H, H, &r);
	tensor_make(&b, N, C, 0, C, H, H, &r);
	tensor_make(&y, N, C, 0, C, H, H, &r);
	tensor_make(&dy, N, C, 0, C, H, H, &r);
	tensor_make(&da, N, C, 0, C, H, H, &r);
	tensor_make(&db, N, C, 0, C, H, H, &r);
	size_t n = tensor_total(&a, C);
	struct tensor y2 = tensor_copy(&y, n), da2 = tensor_copy(&da, n), db2 = tensor_copy(&db, n);
	ref_relu_forward(&a.r, &y.r);
	ref_relu_backward(&y.r, &dy.r, &da.r, 1);
	CHECK_INT(gpu_emu.relu_fwd(0, GPU_F32, a.g, y2.g), 0);
	CHECK_INT(gpu_emu.relu_bwd(0, GPU_F32, y2.g, dy.g, da2.g, 1), 0);
	CHECK_CLOSE(y2.data, y.data, n, 0, "relu forward");
	CHECK_CLOSE(da2.data, da.data, n, 0, "relu dx");
	ref_add_forward(&a.r, &b.r, 1, &y.r);
	ref_add_backward(&y.r, &dy.r, 1, &da.r, 0, &db.r, 1);
	CHECK_INT(gpu_emu.add_fwd(0, GPU_F32, a.g, b.g, 1, y2.g), 0);
	CHECK_INT(gpu_emu.add_bwd(0, GPU_F32, y2.g, dy.g, 1, da2.g, 0, db2.g, 1), 0);
	CHECK_CLOSE(y2.data, y.data, n, 0, "add+relu forward");
	CHECK_CLOSE(da2.data, da.data, n, 0, "add da (overwritten)");
	CHECK_CLOSE(db2.data, db.data, n, 0, "add db (accumulated)");
	free(a.data), free(b.data), free(y.data), free(dy.data), free(da.data), free(db.data);
	free(y2.data), free(da2.data), free(db2.data);
}

static void test_bias_add_and_grad(void)
{
	enum { N = 3, C = 4, H = 2 };
	struct rng r;
	struct tensor y, dy;
	float bias[C] = { 1, -2, 0.5f, 3 }, db[C], want[C] = { 0 };

	rng_seed(&r, 41);
	tensor_make(&y, N, C, 0, C, H, H, &r);
	tensor_make(&dy, N, C, 0, C, H, H, &r);
	size_t n = tensor_total(&y, C);
	struct tensor y2 = tensor_copy(&y, n);
	CHECK_INT(gpu_emu.bias_add(0, GPU_F32, y2.g, bias), 0);
	for (size_t i = 0; i < n; i++) {
		int c = (int)(i / (H * H) % C);
		CHECK_NEAR(y2.data[i], y.data[i] + bias[c], 1e-6, 0);
		want[c] += dy.data[i];
	}
	CHECK_INT(gpu_emu.bias_grad(0, GPU_F32, dy.g, db), 0);
	CHECK_CLOSE(db, want, C, 1e-5, "bias gradient");
	free(y.data), free(dy.data), free(y2.data);
}

/* Three steps of Adam (and SGD with momentum) with weight decay over 1000
 * values (four blocks) against optim.c. */
static void optim_case(enum optim_kind kind)
{
	enum { COUNT = 1000 };
	struct optim o;
	struct optim_config cfg;
	struct trainer_error err = { "" };
	static float p_ref[COUNT], p_gpu[COUNT], g[COUNT], m[COUNT], v[COUNT];
	struct rng r;

	optim_config_default(&cfg);
	cfg.kind = kind;
	cfg.weight_decay = 1e-2;
	cfg.momentum = 0.9;
	CHECK(optim_init(&o, &cfg, COUNT, &err) == 0);
	rng_seed(&r, 51);
	for (int i = 0; i < COUNT; i++)
		p_ref[i] = p_gpu[i] = (float)rng_normal(&r);
	memset(m, 0, sizeof(m));
	memset(v, 0, sizeof(v));
	for (int step = 1; step <= 3; step++) {
		for (int i = 0; i < COUNT; i++)
			g[i] = (float)rng_normal(&r);
		optim_step(&o, p_ref, g, 1e-2);
		float values[2];
		if (kind == OPTIM_ADAM) {
			struct gpu_adam_args a = { 1e-2f, (float)cfg.beta1, (float)cfg.beta2,
						   (float)cfg.eps, (float)cfg.weight_decay, step };
			CHECK_INT(gpu_adam_values(a, values), 0);
			CHECK_INT(gpu_emu.adam(0, p_gpu, g, m, v, COUNT, a, values), 0);
		} else {
			gpu_sgd_values(1e-2f, step == 1, values);
			CHECK_INT(gpu_emu.sgd(0, p_gpu, g, m, COUNT, (float)cfg.momentum,
					      (float)cfg.weight_decay, values), 0);
		}
	}
	CHECK_CLOSE(p_gpu, p_ref, COUNT, 1e-6, kind == OPTIM_ADAM ? "adam" : "sgd");
	CHECK_CLOSE(m, o.m, COUNT, 1e-6, "first moment / momentum buffer");
	if (kind == OPTIM_ADAM)
		CHECK_CLOSE(v, o.v, COUNT, 1e-6, "second moment");
	optim_free(&o);
}

static void test_adam_matches_optim(void) { optim_case(OPTIM_ADAM); }
static void test_sgd_matches_optim(void) { optim_case(OPTIM_SGD); }

/* uint8 gray -> normalised 3 channels, as input_norm_nchw; with a crop
 * window and a flip, the pixels the window names. */
static void test_input_images_match_input_norm(void)
{
	enum { N = 2, S = 8, OUT = 5 };
	uint8_t px[N * S * S];
	float want[N * 3 * S * S], got[N * 3 * S * S], small[N * 3 * OUT * OUT];
	struct gpu_norm_consts k;
	struct gpu_input_geometry geo;
	struct trainer_error err = { "" };
	struct batch b = { .count = N, .capacity = N, .size = S, .pixels = px };

	for (int i = 0; i < N * S * S; i++)
		px[i] = (uint8_t)(i * 37 % 256);
	memcpy(k.mean, input_norm_mean, sizeof(k.mean));
	memcpy(k.std, input_norm_std, sizeof(k.std));
	input_norm_nchw(&b, N, want);
	CHECK(gpu_input_geometry_init(&geo, N, S, S, NULL, &err) == 0);
	struct gpu_view dst = gpu_view_nchw(got, sizeof(float), N, 3, 0, 3, S, S);
	CHECK_INT(gpu_emu.input_images(0, GPU_F32, px, &geo, NULL, k, dst), 0);
	CHECK_CLOSE(got, want, (size_t)N * 3 * S * S, 0, "whole images");
	struct gpu_crop crops[N] = { { 1, 2, 0 }, { 3, 0, 1 } };
	CHECK(gpu_input_geometry_init(&geo, N, S, OUT, crops, &err) == 0);
	struct gpu_view dst_small = gpu_view_nchw(small, sizeof(float), N, 3, 0, 3, OUT, OUT);
	CHECK_INT(gpu_emu.input_images(0, GPU_F32, px, &geo, crops, k, dst_small), 0);
	for (int n = 0; n < N; n++)
		for (int c = 0; c < 3; c++)
			for (int oy = 0; oy < OUT; oy++)
				for (int ox = 0; ox < OUT; ox++) {
					int sx, sy;
					gpu_crop_source(&crops[n], OUT, ox, oy, &sx, &sy);
					float v = want[((n * 3 + c) * S + sy) * S + sx];
					CHECK(small[((n * 3 + c) * OUT + oy) * OUT + ox] == v);
				}
	CHECK(small[0 * 3 * OUT * OUT + 0] == want[(0 * 3 * S + 2) * S + 1]);  /* window (1, 2) */
	CHECK(small[1 * 3 * OUT * OUT + 0] == want[((1 * 3) * S + 0) * S + 3 + OUT - 1]);  /* flipped */
}

/* fp16/bf16 activations: to_view rounds, from_view widens (scaled), cast
 * and widen agree; unscale_check flags inf and NaN only. */
static void test_low_precision_conversions(void)
{
	enum { N = 64 };
	float x[N], back[N], scaled[N];
	uint16_t lp[N];
	struct rng r;
	int flag = 0;

	rng_seed(&r, 61);
	for (int i = 0; i < N; i++)
		x[i] = (float)rng_normal(&r);
	for (int t = GPU_F16; t <= GPU_BF16; t++) {
		double tol = t == GPU_F16 ? 1.0 / 1024 : 1.0 / 128;
		struct gpu_view v = gpu_view_nchw(lp, 2, 1, 1, 0, 1, 1, N);
		CHECK_INT(gpu_emu.to_view(0, (enum gpu_dtype)t, x, 2.0f, v, 0), 0);
		CHECK_INT(gpu_emu.from_view(0, (enum gpu_dtype)t, v, 0.5f, back), 0);
		CHECK_CLOSE(back, x, N, tol, t == GPU_F16 ? "fp16 round trip" : "bf16 round trip");
		CHECK_INT(gpu_emu.cast(0, (enum gpu_dtype)t, x, lp, N), 0);
		CHECK_INT(gpu_emu.widen(0, (enum gpu_dtype)t, lp, 1.0f, scaled, N), 0);
		CHECK_CLOSE(scaled, x, N, tol, "cast then widen");
	}
	memcpy(scaled, x, sizeof(x));
	CHECK_INT(gpu_emu.unscale_check(0, scaled, N, 0.25f, &flag), 0);
	CHECK_INT(flag, 0);
	CHECK_NEAR(scaled[7], x[7] * 0.25f, 0, 1e-7);
	scaled[5] = INFINITY;
	CHECK_INT(gpu_emu.unscale_check(0, scaled, N, 1.0f, &flag), 0);
	CHECK_INT(flag, 1);
	CHECK(gpu_emu_threads_started() > 0);
}

/* n floats as dt (fp32 copied, fp16/bf16 rounded by the cast kernel). */
static void *as_dtype(enum gpu_dtype dt, const float *f, size_t n)
{
	void *p = malloc(n * (dt == GPU_F32 ? 4 : 2));
	if (dt == GPU_F32)
		memcpy(p, f, n * 4);
	else
		CHECK_INT(gpu_emu.cast(0, dt, f, p, n), 0);
	return p;
}

#define CHECK_SAME_BITS(a, b, bytes, what, dt, count) \
	CHECK_MSG(!memcmp((a), (b), (bytes)), "%s (dtype %d, sums of %d): the fold's bits " \
		  "differ from the tree's", (what), (int)(dt), (count))

/* The block sums (gpu_k_common.cuh's block_sum, gpu_k_bn.cu's tile_fold)
 * as the emulated device runs them, thread 0 folding the tree's levels
 * after the sum's 1 barrier, give the bits of the tree nvcc compiles (9
 * barriers a batch-norm sum; what the other cases here run against ref):
 * batch norm forward and backward (ReLU, accumulating dx) in fp32, fp16
 * and bf16, NCHW and channels-last, over channels of 1 to 600 elements of
 * mixed magnitudes, and the loss (block_sum<double>). */
static void bn_fold_equals_tree(int cl, enum gpu_dtype dt, const int shape[3], struct rng *r)
{
	enum { C = 3 };
	struct gpu_bn_args a = { (float)REF_BN_EPS, (float)REF_BN_MOMENTUM, 1 };
	int n = shape[0], h = shape[1], w = shape[2], count = n * h * w;
	size_t total = (size_t)n * C * h * w, bytes = total * (dt == GPU_F32 ? 4 : 2);
	float *f = malloc(total * sizeof(float));
	void *in[3];   /* x, dy, dx before the backward adds to it */
	for (int v = 0; v < 3; v++) {
		for (size_t i = 0; i < total; i++)
			f[i] = (float)((rng_normal(r) + 1.5) * exp(3 * rng_uniform(r)));
		in[v] = as_dtype(dt, f, total);
	}
	float gamma[C], beta[C], st[2][6][C];   /* mean, invstd, rm, rv, dg, db */
	float part[C * 64 * 2], stats[2 * C];
	void *y[2], *dx[2];
	unsigned long met[2];
	for (int c = 0; c < C; c++)
		gamma[c] = 0.5f + 0.25f * c, beta[c] = 0.1f - 0.2f * c;
	for (int fold = 0; fold < 2; fold++) {
		struct gpu_view xv = cl ? gpu_view_nhwc(in[0], sizeof(float), n, C, 0, C, h, w)
					: gpu_view_nchw(in[0], sizeof(float), n, C, 0, C, h, w);
		struct gpu_view yv = xv, dyv = xv, dxv = xv;
		y[fold] = malloc(bytes);
		dx[fold] = malloc(bytes);
		memcpy(dx[fold], in[2], bytes);
		yv.data = y[fold], dyv.data = in[1], dxv.data = dx[fold];
		for (int c = 0; c < C; c++)
			st[fold][2][c] = 0.1f * c, st[fold][3][c] = 1.0f + 0.3f * c;
		gpu_emu_fold_sums(fold);
		unsigned long before = gpu_emu_barriers();
		CHECK_INT(gpu_emu.bn_fwd_train(0, dt, xv, gamma, beta, a, yv, st[fold][0], st[fold][1],
					       st[fold][2], st[fold][3], stats, 0, part, 64), 0);
		met[fold] = gpu_emu_barriers() - before;
		CHECK_INT(gpu_emu.bn_bwd(0, dt, xv, yv, dyv, gamma, 1, st[fold][0], st[fold][1], dxv,
					 1, st[fold][4], st[fold][5], part, 64), 0);
	}
	gpu_emu_fold_sums(0);
	/* C blocks (NCHW) or one tile of C channels: 2 sums, every thread at
	 * 9 barriers each (tree), 1 (fold) */
	unsigned long blocks = cl ? 1 : C;
	CHECK_MSG(met[0] == blocks * 256UL * 2 * 9 && met[1] == blocks * 256UL * 2 * 1,
		  "barriers met by the forward (%s): tree %lu, fold %lu", cl ? "nhwc" : "nchw",
		  met[0], met[1]);
	CHECK_SAME_BITS(st[0], st[1], sizeof(st[0]), "mean, invstd, running stats, dgamma, dbeta",
			dt, count);
	CHECK_SAME_BITS(y[0], y[1], bytes, "bn forward y", dt, count);
	CHECK_SAME_BITS(dx[0], dx[1], bytes, "bn dx", dt, count);
	for (int v = 0; v < 3; v++)
		free(in[v]);
	free(f), free(y[0]), free(y[1]), free(dx[0]), free(dx[1]);
}

static void test_block_sum_fold_equals_tree(void)
{
	static const int shapes[][3] = { { 1, 1, 1 }, { 1, 5, 9 }, { 4, 8, 8 }, { 3, 10, 20 } };
	struct rng r;

	rng_seed(&r, 71);
	for (int cl = 0; cl < 2; cl++)
		for (int t = GPU_F32; t <= GPU_BF16; t++)
			for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
				bn_fold_equals_tree(cl, (enum gpu_dtype)t, shapes[k], &r);

	static const int losses[][2] = { { 1, 1 }, { 7, 14 }, { 40, 14 } };
	for (size_t k = 0; k < sizeof(losses) / sizeof(losses[0]); k++) {
		int n = losses[k][0], classes = losses[k][1], total = n * classes;
		float z[40 * 14], labels[40 * 14], wp[14], wn[14], dy[2][40 * 14];
		double acc[2][2] = { { 0.5, 0 }, { 0.5, 0 } };
		for (int i = 0; i < total; i++) {
			z[i] = (float)(rng_normal(&r) * exp(2 * rng_uniform(&r)));
			labels[i] = rng_uniform(&r) < 0.3 ? 1.0f : 0.0f;
		}
		for (int c = 0; c < classes; c++)
			wp[c] = 0.2f + 0.1f * c, wn[c] = 1.3f - 0.05f * c;
		for (int fold = 0; fold < 2; fold++) {
			gpu_emu_fold_sums(fold);
			CHECK_INT(gpu_emu.bce(0, z, labels, wp, wn, n, classes, dy[fold], acc[fold]), 0);
		}
		gpu_emu_fold_sums(0);
		CHECK_SAME_BITS(acc[0], acc[1], sizeof(acc[0]), "loss sum (double)", GPU_F32, total);
		CHECK_SAME_BITS(dy[0], dy[1], total * sizeof(float), "loss dy", GPU_F32, total);
	}
}

const struct test_case gpu_emu_tests[] = {
	{ "bce_matches_loss_c", test_bce_matches_loss_c },
	{ "bn_matches_ref", test_bn_matches_ref },
	{ "bn_relu_matches_ref", test_bn_relu_matches_ref },
	{ "bn_split_over_parts_matches_ref", test_bn_split_over_parts_matches_ref },
	{ "maxpool_matches_ref", test_maxpool_matches_ref },
	{ "avgpool_matches_ref", test_avgpool_matches_ref },
	{ "global_avgpool_matches_ref", test_global_avgpool_matches_ref },
	{ "relu_and_add_match_ref", test_relu_and_add_match_ref },
	{ "bias_add_and_grad", test_bias_add_and_grad },
	{ "adam_matches_optim", test_adam_matches_optim },
	{ "sgd_matches_optim", test_sgd_matches_optim },
	{ "input_images_match_input_norm", test_input_images_match_input_norm },
	{ "low_precision_conversions", test_low_precision_conversions },
	{ "block_sum_fold_equals_tree", test_block_sum_fold_equals_tree },
	{ 0 }
};
