/* fake_cuda.cpp - cuDNN and cuBLAS of the emulated device (make GPU_EMU=1;
 * groups gpu-emulated and slurm-gpu-emu): the calls the gpu backend
 * makes, implemented on the host with their documented semantics, so the
 * backend's host code runs unchanged on a machine without a GPU. Each
 * convolution or GEMM is checked when called and then runs in its
 * handle's stream (emu_device.h), with the descriptors and alpha/beta
 * copied at the call as the libraries read them. Convolutions are direct
 * loops (cross-correlation) over dense fp32 copies of the strided
 * operands, each output summing its taps in a fixed order, cublasGemmEx a
 * column-major loop; fp16/bf16 elements are converted with CUDA's own
 * host conversions and accumulated in fp32. fp32 work that permits TF32
 * rounds its inputs to TF32 first and is counted by its math type
 * (emu_math.h): the tests see what the backend asked for, and its
 * numbers change as a GPU's would.
 * The algorithms (what the queries and Find calls report, what each call
 * accepts) are fake_algos.cpp's.
 * What it does not do: the CUDA runtime (emu_runtime.cpp), timing, or the
 * libraries' numerics beyond fp32 accumulation and TF32 inputs
 * (algorithms, summation orders).
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "emu_algos.h"
#include "emu_device.h"
#include "emu_math.h"

/* --- TF32: what fp32 work permitting it sees, and what it was asked --- */
static std::atomic<long> conv_fma, conv_tf32, conv_other, gemm_32f, gemm_tf32, gemm_other;
static std::atomic<long> conv_kcrs, conv_krsc, conv_nchw, conv_nhwc;

extern "C" void emu_math_requests_take(struct emu_math_requests *out)
{
	out->conv_fma = conv_fma.exchange(0);
	out->conv_tf32 = conv_tf32.exchange(0);
	out->conv_other = conv_other.exchange(0);
	out->gemm_32f = gemm_32f.exchange(0);
	out->gemm_tf32 = gemm_tf32.exchange(0);
	out->gemm_other = gemm_other.exchange(0);
	out->conv_kcrs = conv_kcrs.exchange(0);
	out->conv_krsc = conv_krsc.exchange(0);
	out->conv_nchw = conv_nchw.exchange(0);
	out->conv_nhwc = conv_nhwc.exchange(0);
}

/* v with 10 mantissa bits: to nearest, ties away from zero (cvt.rna);
 * inf and NaN as they are. */
static float tf32(float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof(u));
	if ((u & 0x7f800000u) != 0x7f800000u)
		u = (u + 0x1000u) & ~0x1fffu;
	memcpy(&v, &u, sizeof(v));
	return v;
}

static void round_tf32(std::vector<float> &v, int on)
{
	if (on)
		for (float &x : v)
			x = tf32(x);
}

/* --- element access for the three data types --- */
static float load(const void *p, size_t i, int fp16, int bf16)
{
	if (fp16)
		return __half2float(((const __half *)p)[i]);
	if (bf16)
		return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
	return ((const float *)p)[i];
}

/* p[i] = alpha * v + beta * p[i] (p[i] not read when beta is 0). */
static void store(void *p, size_t i, int fp16, int bf16, float v, float alpha, float beta)
{
	float r = alpha * v + (beta != 0.0f ? beta * load(p, i, fp16, bf16) : 0.0f);
	if (fp16)
		((__half *)p)[i] = __float2half_rn(r);
	else if (bf16)
		((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(r);
	else
		((float *)p)[i] = r;
}

/* --- cuDNN (tensors of any non-overlapping strides, filters KCRS or
 * KRSC; a KRSC filter only with channels-last tensors) --- */
struct cudnnContext { cudaStream_t stream; };
struct cudnnTensorStruct {
	cudnnDataType_t type;
	int n, c, h, w, ns, cs, hs, ws;
};
struct cudnnFilterStruct {
	cudnnDataType_t type;
	cudnnTensorFormat_t format;  /* NCHW: KCRS; NHWC: KRSC */
	int k, c, h, w;
};
struct cudnnConvolutionStruct {
	int pad_h, pad_w, u, v, dil_h, dil_w;
	cudnnConvolutionMode_t mode;
	cudnnMathType_t math;
};

static int is_half(cudnnDataType_t t) { return t == CUDNN_DATA_HALF; }
static int is_bf16(cudnnDataType_t t) { return t == CUDNN_DATA_BFLOAT16; }

/* fp32 data under any math but FMA may run on TF32 tensor cores (DEFAULT
 * permits it on Ampere and later): the emulation rounds its inputs. */
static int conv_tf32_on(const cudnnTensorStruct *x, const cudnnConvolutionStruct *cv)
{
	return x->type == CUDNN_DATA_FLOAT && cv->math != CUDNN_FMA_MATH;
}

static void count_conv(const cudnnTensorStruct *x, const cudnnConvolutionStruct *cv)
{
	if (x->type != CUDNN_DATA_FLOAT)
		return;
	(cv->math == CUDNN_FMA_MATH ? conv_fma : cv->math == CUDNN_TENSOR_OP_MATH ? conv_tf32
									  : conv_other)++;
}

static size_t at(const cudnnTensorStruct *d, int n, int c, int y, int x)
{
	return (size_t)n * d->ns + (size_t)c * d->cs + (size_t)y * d->hs + (size_t)x * d->ws;
}

static size_t wat(const cudnnFilterStruct *f, int k, int c, int y, int x)
{
	if (f->format == CUDNN_TENSOR_NHWC)
		return (((size_t)k * f->h + y) * f->w + x) * f->c + c;
	return (((size_t)k * f->c + c) * f->h + y) * f->w + x;
}

/* Channels innermost: what a KRSC filter needs of its tensors (the
 * legacy API's NHWC-filter algorithms take NHWC tensors only; a channel
 * slice of a wider NHWC buffer is still NHWC). */
static int channels_last(const cudnnTensorStruct *d)
{
	return d->c == 1 || (d->cs == 1 && d->ws >= d->c);
}

/* No two elements of (n, c, h, w) at one offset: the strides, sorted,
 * each at least the span of the dimensions inside it (extent-1
 * dimensions take any stride). Any order of the dimensions. */
static int strides_disjoint(int n, int c, int h, int w, int ns, int cs, int hs, int ws)
{
	int ext[4] = { n, c, h, w }, str[4] = { ns, cs, hs, ws }, idx[4] = { 0, 1, 2, 3 };
	long long span = 1;

	std::sort(idx, idx + 4, [&](int a, int b) { return str[a] < str[b]; });
	for (int i = 0; i < 4; i++) {
		int d = idx[i];
		if (ext[d] == 1)
			continue;
		if (str[d] < span)
			return 0;
		span = (long long)str[d] * ext[d];
	}
	return 1;
}

/* A convolution call's layouts, every data type: its filter's format and
 * whether its input tensor has channels innermost (channel stride below
 * pixel stride). */
static void count_layout(const cudnnTensorStruct *x, const cudnnFilterStruct *f)
{
	(f->format == CUDNN_TENSOR_NHWC ? conv_krsc : conv_kcrs)++;
	(x->cs < x->ws ? conv_nhwc : conv_nchw)++;
}

/* Checks what the emulation supports; CUDNN_STATUS_NOT_SUPPORTED else. */
static cudnnStatus_t conv_supported(const cudnnTensorStruct *x, const cudnnFilterStruct *f,
				    const cudnnConvolutionStruct *cv, const cudnnTensorStruct *y)
{
	if (cv->mode != CUDNN_CROSS_CORRELATION || f->c != x->c || f->k != y->c || x->n != y->n ||
	    x->type != f->type || x->type != y->type)
		return CUDNN_STATUS_NOT_SUPPORTED;
	if (f->format == CUDNN_TENSOR_NHWC && (!channels_last(x) || !channels_last(y)))
		return CUDNN_STATUS_NOT_SUPPORTED;
	int oh = (x->h + 2 * cv->pad_h - cv->dil_h * (f->h - 1) - 1) / cv->u + 1;
	int ow = (x->w + 2 * cv->pad_w - cv->dil_w * (f->w - 1) - 1) / cv->v + 1;
	return oh == y->h && ow == y->w ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

extern "C" {

const char *cudnnGetErrorString(cudnnStatus_t status)
{
	static char text[64];
	snprintf(text, sizeof(text), "emulated cuDNN status %d", (int)status);
	return status == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : text;
}

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) { *h = new cudnnContext(); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) { delete h; return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) { h->stream = s; return CUDNN_STATUS_SUCCESS; }

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
	*d = new cudnnTensorStruct();
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { delete d; return CUDNN_STATUS_SUCCESS; }

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t type, int n,
					   int c, int h, int w, int ns, int cs, int hs, int ws)
{
	if (n < 1 || c < 1 || h < 1 || w < 1 || ns < 1 || cs < 1 || hs < 1 || ws < 1 ||
	    !strides_disjoint(n, c, h, w, ns, cs, hs, ws))
		return CUDNN_STATUS_BAD_PARAM;
	*d = { type, n, c, h, w, ns, cs, hs, ws };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
	*d = new cudnnFilterStruct();
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { delete d; return CUDNN_STATUS_SUCCESS; }

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
					 cudnnTensorFormat_t format, int k, int c, int h, int w)
{
	if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
		return CUDNN_STATUS_NOT_SUPPORTED;
	if (k < 1 || c < 1 || h < 1 || w < 1)
		return CUDNN_STATUS_BAD_PARAM;
	*d = { type, format, k, c, h, w };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
	*d = new cudnnConvolutionStruct();
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
	delete d;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w,
					      int u, int v, int dil_h, int dil_w,
					      cudnnConvolutionMode_t mode, cudnnDataType_t)
{
	if (u < 1 || v < 1 || dil_h < 1 || dil_w < 1 || pad_h < 0 || pad_w < 0)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnMathType_t math = d->math;
	*d = { pad_h, pad_w, u, v, dil_h, dil_w, mode, math };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math)
{
	d->math = math;
	return CUDNN_STATUS_SUCCESS;
}

} /* extern "C" */

static emu_conv_dims dims_of(const cudnnTensorStruct *x, const cudnnFilterStruct *f,
			     const cudnnTensorStruct *y)
{
	return { x->n, x->c, x->h, x->w, f->k, f->h, y->h, y->w,
		 (size_t)(is_half(x->type) || is_bf16(x->type) ? 2 : 4) };
}

/* What the queries answer for a convolution the emulation supports
 * (emu_algos.h): the heuristics' ranking (_v7) or the timed table (Find,
 * counted: a test sees whether a run timed or read its cache; no data is
 * read, as the Find calls time on memory of their own), each at the
 * descriptor's math. in, f, out: the convolution's x, w, y. */
template <typename Perf>
static cudnnStatus_t answer(enum emu_dir dir, bool timed, const cudnnTensorStruct *in,
			    const cudnnFilterStruct *f, const cudnnConvolutionStruct *cv,
			    const cudnnTensorStruct *out, int requested, int *returned, Perf *perf)
{
	cudnnStatus_t supported = conv_supported(in, f, cv, out);
	emu_conv_dims d = dims_of(in, f, out);
	emu_algo_perf all[8];

	if (timed)
		emu_count(EMU_CALL_FIND);
	if (supported != CUDNN_STATUS_SUCCESS || requested < 1)
		return supported != CUDNN_STATUS_SUCCESS ? supported : CUDNN_STATUS_BAD_PARAM;
	int n = timed ? emu_algo_find(dir, &d, all, 8) : emu_algo_heuristic(dir, &d, all, 8);
	*returned = std::min(n, requested);
	for (int i = 0; i < *returned; i++) {
		perf[i] = {};
		perf[i].algo = (decltype(perf[i].algo))all[i].algo;
		perf[i].status = all[i].status;
		perf[i].time = all[i].time;
		perf[i].memory = all[i].memory;
		perf[i].determinism = all[i].determinism;
		perf[i].mathType = cv->math;
	}
	return CUDNN_STATUS_SUCCESS;
}

extern "C" {

#define FWD_ARGS cudnnHandle_t, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w, \
	const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y, const int requested, \
	int *returned, cudnnConvolutionFwdAlgoPerf_t *perf
#define BWD_DATA_ARGS cudnnHandle_t, const cudnnFilterDescriptor_t w, \
	const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t cv, \
	const cudnnTensorDescriptor_t dx, const int requested, int *returned, \
	cudnnConvolutionBwdDataAlgoPerf_t *perf
#define BWD_FILTER_ARGS cudnnHandle_t, const cudnnTensorDescriptor_t x, \
	const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t cv, \
	const cudnnFilterDescriptor_t dw, const int requested, int *returned, \
	cudnnConvolutionBwdFilterAlgoPerf_t *perf

/* Each direction's heuristics query (_v7) and Find call. */
#define QUERIES(V7, FIND, ARGS, DIR, IN, F, OUT) \
	cudnnStatus_t V7(ARGS) { return answer(DIR, false, IN, F, cv, OUT, requested, returned, perf); } \
	cudnnStatus_t FIND(ARGS) { return answer(DIR, true, IN, F, cv, OUT, requested, returned, perf); }
QUERIES(cudnnGetConvolutionForwardAlgorithm_v7, cudnnFindConvolutionForwardAlgorithm, FWD_ARGS,
	EMU_FWD, x, w, y)
QUERIES(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnFindConvolutionBackwardDataAlgorithm,
	BWD_DATA_ARGS, EMU_BWD_DATA, dx, w, dy)
QUERIES(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnFindConvolutionBackwardFilterAlgorithm,
	BWD_FILTER_ARGS, EMU_BWD_FILTER, x, dw, dy)

/* A tensor's elements as dense fp32 [n][c][h][w] (exact for fp16/bf16). */
static std::vector<float> dense_tensor(const cudnnTensorStruct *d, const void *p)
{
	std::vector<float> v((size_t)d->n * d->c * d->h * d->w);
	int h16 = is_half(d->type), b16 = is_bf16(d->type);
	size_t i = 0;
	for (int n = 0; n < d->n; n++)
		for (int c = 0; c < d->c; c++)
			for (int y = 0; y < d->h; y++)
				for (int x = 0; x < d->w; x++)
					v[i++] = load(p, at(d, n, c, y, x), h16, b16);
	return v;
}

/* A filter's elements as dense fp32 [k][c][r][s], whatever its format. */
static std::vector<float> dense_filter(const cudnnFilterStruct *f, const void *p)
{
	std::vector<float> v((size_t)f->k * f->c * f->h * f->w);
	size_t i = 0;
	for (int k = 0; k < f->k; k++)
		for (int c = 0; c < f->c; c++)
			for (int y = 0; y < f->h; y++)
				for (int x = 0; x < f->w; x++)
					v[i++] = load(p, wat(f, k, c, y, x), is_half(f->type), is_bf16(f->type));
	return v;
}

/* The outputs o in [*lo, *hi) whose input o * stride + off is in [0, size). */
static void valid_range(int off, int stride, int size, int outputs, int *lo, int *hi)
{
	*lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
	*hi = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
	if (*hi > outputs)
		*hi = outputs;
	if (*lo > *hi)
		*lo = *hi;
}

/* Filter tap (r, s) over an input of H x W rows: the outputs of `out`
 * whose input it reaches, [y0, y1) x [x0, x1), at input row o * u + offy
 * and column o * v + offx. */
struct tap { int y0, y1, x0, x1, offy, offx; };
static tap tap_at(const cudnnConvolutionStruct *cv, int r, int s, int H, int W,
		  const cudnnTensorStruct *out)
{
	tap t;
	t.offy = r * cv->dil_h - cv->pad_h;
	t.offx = s * cv->dil_w - cv->pad_w;
	valid_range(t.offy, cv->u, H, out->h, &t.y0, &t.y1);
	valid_range(t.offx, cv->v, W, out->w, &t.x0, &t.x1);
	return t;
}

/* Plane (n, c) of the tensor at p = alpha * acc + beta * it, where acc
 * holds the plane's elements in rows, `stride` floats apart. */
static void store_plane(void *p, const cudnnTensorStruct *d, int n, int c, const float *acc,
			size_t stride, float a, float b)
{
	int h16 = is_half(d->type), b16 = is_bf16(d->type);
	for (int y = 0; y < d->h; y++)
		for (int x = 0; x < d->w; x++)
			store(p, at(d, n, c, y, x), h16, b16, acc[((size_t)y * d->w + x) * stride],
			      a, b);
}

/* v, consecutive blocks of [a][b], with each block as [b][a]. */
static std::vector<float> transposed(const std::vector<float> &v, size_t a, size_t b)
{
	std::vector<float> t(v.size());
	for (size_t o = 0; o + a * b <= v.size(); o += a * b)
		for (size_t i = 0; i < a; i++)
			for (size_t j = 0; j < b; j++)
				t[o + j * a + i] = v[o + i * b + j];
	return t;
}

/* Adds x * w[i] to each out[i], i < n: one step of n sums at once. */
static inline void axpy(float *out, float x, const float *w, int n)
{
	for (int i = 0; i < n; i++)
		out[i] += x * w[i];
}

/* y = alpha * conv(x, w) + beta * y. Each output sums its taps in (c, r,
 * s) order, from 0, in fp32. The loops run a tap over every output
 * channel at once: the filter as [c][r][s][k], the sums as [y][x][k]. */
static void conv_forward(float a, const cudnnTensorStruct *xd, const void *x,
			 const cudnnFilterStruct *wd, const void *w, const cudnnConvolutionStruct *cv,
			 float b, const cudnnTensorStruct *yd, void *y)
{
	int K = yd->c, H = xd->h, Wd = xd->w;
	size_t taps = (size_t)wd->c * wd->h * wd->w;
	std::vector<float> X = dense_tensor(xd, x);
	std::vector<float> W = transposed(dense_filter(wd, w), (size_t)K, taps);
	round_tf32(X, conv_tf32_on(xd, cv));
	round_tf32(W, conv_tf32_on(xd, cv));
	std::vector<float> acc((size_t)yd->h * yd->w * K);
	for (int n = 0; n < yd->n; n++) {
		std::fill(acc.begin(), acc.end(), 0.0f);
		for (int c = 0; c < xd->c; c++) {
			const float *xp = &X[((size_t)n * xd->c + c) * H * Wd];
			for (int r = 0; r < wd->h; r++)
				for (int s = 0; s < wd->w; s++) {
					tap t = tap_at(cv, r, s, H, Wd, yd);
					const float *wk = &W[(((size_t)c * wd->h + r) * wd->w + s) * K];
					for (int oy = t.y0; oy < t.y1; oy++) {
						const float *row = xp + (size_t)(oy * cv->u + t.offy) * Wd;
						for (int ox = t.x0; ox < t.x1; ox++)
							axpy(&acc[((size_t)oy * yd->w + ox) * K],
							     row[ox * cv->v + t.offx], wk, K);
					}
				}
		}
		for (int k = 0; k < K; k++)
			store_plane(y, yd, n, k, &acc[k], (size_t)K, a, b);
	}
}

/* The (output, input) index pairs of one filter tap along one axis of a
 * transposed convolution: o + pad - t * dil = i * stride, i in [0, size). */
static std::vector<std::pair<int, int>> tap_pairs(int outputs, int pad, int t, int dil, int stride,
						  int size)
{
	std::vector<std::pair<int, int>> v;
	for (int o = 0; o < outputs; o++) {
		int ti = o + pad - t * dil;
		if (ti >= 0 && ti % stride == 0 && ti / stride < size)
			v.emplace_back(o, ti / stride);
	}
	return v;
}

/* dx = alpha * conv^T(dy, w) + beta * dx (gathered: each dx element sums
 * its (k, r, s) taps in that order, from 0, in fp32; a tap runs over
 * every input channel at once: the filter as [k][r][s][c], the sums as
 * [y][x][c]) */
static void conv_backward_data(float a, const cudnnFilterStruct *wd, const void *w,
			       const cudnnTensorStruct *dyd, const void *dy,
			       const cudnnConvolutionStruct *cv, float b,
			       const cudnnTensorStruct *dxd, void *dx)
{
	int C = dxd->c;
	size_t rs = (size_t)wd->h * wd->w;
	std::vector<float> DY = dense_tensor(dyd, dy);
	std::vector<float> W = transposed(dense_filter(wd, w), (size_t)C, rs);   /* [k][r][s][c] */
	round_tf32(DY, conv_tf32_on(dyd, cv));
	round_tf32(W, conv_tf32_on(dyd, cv));
	std::vector<float> acc((size_t)dxd->h * dxd->w * C);
	std::vector<std::vector<std::pair<int, int>>> rows(wd->h), cols(wd->w);
	for (int r = 0; r < wd->h; r++)
		rows[r] = tap_pairs(dxd->h, cv->pad_h, r, cv->dil_h, cv->u, dyd->h);
	for (int s = 0; s < wd->w; s++)
		cols[s] = tap_pairs(dxd->w, cv->pad_w, s, cv->dil_w, cv->v, dyd->w);
	int OH = dyd->h, OW = dyd->w;
	for (int n = 0; n < dxd->n; n++) {
		std::fill(acc.begin(), acc.end(), 0.0f);
		for (int k = 0; k < dyd->c; k++) {
			const float *dyp = &DY[((size_t)n * dyd->c + k) * OH * OW];
			for (int r = 0; r < wd->h; r++)
				for (int s = 0; s < wd->w; s++) {
					const float *wc = &W[((size_t)k * rs + (size_t)r * wd->w + s) * C];
					for (const auto &yy : rows[r]) {
						const float *row = dyp + (size_t)yy.second * OW;
						for (const auto &xx : cols[s])
							axpy(&acc[((size_t)yy.first * dxd->w + xx.first) * C],
							     row[xx.second], wc, C);
					}
				}
		}
		for (int c = 0; c < C; c++)
			store_plane(dx, dxd, n, c, &acc[c], (size_t)C, a, b);
	}
}

/* dw = alpha * sum over n, oy, ox of x * dy + beta * dw, each dw element
 * summed in (n, oy, ox) order, from 0, in fp32; a tap runs over every
 * input channel at once: x as [n][y][x][c]. */
static void conv_backward_filter(float a, const cudnnTensorStruct *xd, const void *x,
				 const cudnnTensorStruct *dyd, const void *dy,
				 const cudnnConvolutionStruct *cv, float b,
				 const cudnnFilterStruct *dwd, void *dw)
{
	int h16 = is_half(xd->type), b16 = is_bf16(xd->type), H = xd->h, Wd = xd->w, C = xd->c;
	size_t plane = (size_t)dyd->h * dyd->w, in_plane = (size_t)H * Wd;
	std::vector<float> X = transposed(dense_tensor(xd, x), (size_t)C, in_plane);   /* [n][y][x][c] */
	std::vector<float> DY = dense_tensor(dyd, dy);
	round_tf32(X, conv_tf32_on(xd, cv));
	round_tf32(DY, conv_tf32_on(xd, cv));
	std::vector<float> sum((size_t)C);
	for (int r = 0; r < dwd->h; r++)
		for (int s = 0; s < dwd->w; s++) {
			tap t = tap_at(cv, r, s, H, Wd, dyd);
			for (int k = 0; k < dwd->k; k++) {
				std::fill(sum.begin(), sum.end(), 0.0f);
				for (int n = 0; n < xd->n; n++) {
					const float *xn = &X[(size_t)n * C * in_plane];
					const float *dyp = &DY[((size_t)n * dyd->c + k) * plane];
					for (int oy = t.y0; oy < t.y1; oy++) {
						size_t iy = (size_t)(oy * cv->u + t.offy);
						const float *g = dyp + (size_t)oy * dyd->w;
						for (int ox = t.x0; ox < t.x1; ox++)
							axpy(sum.data(), g[ox], &xn[(iy * Wd + (size_t)(ox * cv->v + t.offx)) * C], C);
					}
				}
				for (int c = 0; c < C; c++)
					store(dw, wat(dwd, k, c, r, s), h16, b16, sum[c], a, b);
			}
		}
}

/* The three convolutions: checked now, run in the handle's stream with
 * copies of the descriptors and scalars (CUDA reads them at the call). */
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
				      const cudnnTensorDescriptor_t xd, const void *x,
				      const cudnnFilterDescriptor_t wd, const void *w,
				      const cudnnConvolutionDescriptor_t cv, cudnnConvolutionFwdAlgo_t algo,
				      void *ws, size_t ws_bytes, const void *beta,
				      const cudnnTensorDescriptor_t yd, void *y)
{
	emu_count(EMU_CALL_CUDNN);
	cudnnStatus_t st = conv_supported(xd, wd, cv, yd);
	emu_conv_dims d = dims_of(xd, wd, yd);
	if (st != CUDNN_STATUS_SUCCESS ||
	    (st = emu_algo_check(EMU_FWD, &d, (int)algo, ws, ws_bytes)) != CUDNN_STATUS_SUCCESS)
		return st;
	count_conv(xd, cv);
	count_layout(xd, wd);
	cudnnTensorStruct X = *xd, Y = *yd;
	cudnnFilterStruct W = *wd;
	cudnnConvolutionStruct C = *cv;
	float a = *(const float *)alpha, b = *(const float *)beta;
	emu_enqueue(h->stream, EMU_DEVICE_LOCK, [=] { conv_forward(a, &X, x, &W, w, &C, b, &Y, y); });
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
					   const cudnnFilterDescriptor_t wd, const void *w,
					   const cudnnTensorDescriptor_t dyd, const void *dy,
					   const cudnnConvolutionDescriptor_t cv,
					   cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes,
					   const void *beta, const cudnnTensorDescriptor_t dxd,
					   void *dx)
{
	emu_count(EMU_CALL_CUDNN);
	cudnnStatus_t st = conv_supported(dxd, wd, cv, dyd);
	emu_conv_dims d = dims_of(dxd, wd, dyd);
	if (st != CUDNN_STATUS_SUCCESS ||
	    (st = emu_algo_check(EMU_BWD_DATA, &d, (int)algo, ws, ws_bytes)) != CUDNN_STATUS_SUCCESS)
		return st;
	count_conv(dxd, cv);
	count_layout(dxd, wd);
	cudnnTensorStruct DY = *dyd, DX = *dxd;
	cudnnFilterStruct W = *wd;
	cudnnConvolutionStruct C = *cv;
	float a = *(const float *)alpha, b = *(const float *)beta;
	emu_enqueue(h->stream, EMU_DEVICE_LOCK,
		    [=] { conv_backward_data(a, &W, w, &DY, dy, &C, b, &DX, dx); });
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
					     const cudnnTensorDescriptor_t xd, const void *x,
					     const cudnnTensorDescriptor_t dyd, const void *dy,
					     const cudnnConvolutionDescriptor_t cv,
					     cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes,
					     const void *beta, const cudnnFilterDescriptor_t dwd,
					     void *dw)
{
	emu_count(EMU_CALL_CUDNN);
	cudnnStatus_t st = conv_supported(xd, dwd, cv, dyd);
	emu_conv_dims d = dims_of(xd, dwd, dyd);
	if (st != CUDNN_STATUS_SUCCESS ||
	    (st = emu_algo_check(EMU_BWD_FILTER, &d, (int)algo, ws, ws_bytes)) != CUDNN_STATUS_SUCCESS)
		return st;
	count_conv(xd, cv);
	count_layout(xd, dwd);
	cudnnTensorStruct X = *xd, DY = *dyd;
	cudnnFilterStruct DW = *dwd;
	cudnnConvolutionStruct C = *cv;
	float a = *(const float *)alpha, b = *(const float *)beta;
	emu_enqueue(h->stream, EMU_DEVICE_LOCK,
		    [=] { conv_backward_filter(a, &X, x, &DY, dy, &C, b, &DW, dw); });
	return CUDNN_STATUS_SUCCESS;
}

} /* extern "C" */

/* --- cuBLAS --- */
struct cublasContext { cudaStream_t stream; cublasMath_t math; };

static int blas_half(cudaDataType t) { return t == CUDA_R_16F; }
static int blas_bf16(cudaDataType t) { return t == CUDA_R_16BF; }

extern "C" {

const char *cublasGetStatusString(cublasStatus_t status)
{
	static char text[64];
	snprintf(text, sizeof(text), "emulated cuBLAS status %d", (int)status);
	return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : text;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *h) { *h = new cublasContext(); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { delete h; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { h->stream = s; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { h->math = m; return CUBLAS_STATUS_SUCCESS; }

/* Column-major C (m x n) = alpha op(A) op(B) + beta C, fp32 accumulation. */
struct gemm {
	cublasOperation_t ta, tb;
	int m, n, k, lda, ldb, ldc;
	cudaDataType at_, bt, ct;
	float alpha, beta;
	int tf32;                 /* fp32 inputs rounded to TF32 */
};

/* An input element as the GEMM multiplies it. */
static float gemm_in(const gemm &g, const void *p, size_t i, cudaDataType t)
{
	float v = load(p, i, blas_half(t), blas_bf16(t));
	return g.tf32 && t == CUDA_R_32F ? tf32(v) : v;
}

static void run_gemm(const gemm &g, const void *A, const void *B, void *C)
{
	for (int j = 0; j < g.n; j++)
		for (int i = 0; i < g.m; i++) {
			float sum = 0.0f;
			for (int l = 0; l < g.k; l++) {
				size_t ai = g.ta == CUBLAS_OP_N ? (size_t)i + (size_t)l * g.lda
								: (size_t)l + (size_t)i * g.lda;
				size_t bi = g.tb == CUBLAS_OP_N ? (size_t)l + (size_t)j * g.ldb
								: (size_t)j + (size_t)l * g.ldb;
				sum += gemm_in(g, A, ai, g.at_) * gemm_in(g, B, bi, g.bt);
			}
			store(C, (size_t)i + (size_t)j * g.ldc, blas_half(g.ct), blas_bf16(g.ct), sum,
			      g.alpha, g.beta);
		}
}

/* Checked now, run in the handle's stream. */
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
			    int k, const void *alpha, const void *A, cudaDataType at_, int lda,
			    const void *B, cudaDataType bt, int ldb, const void *beta, void *C,
			    cudaDataType ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t)
{
	emu_count(EMU_CALL_CUBLAS);
	if ((compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32) ||
	    (ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) ||
	    (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T) || m < 0 || n < 0 || k < 0)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) || ldc < m)
		return CUBLAS_STATUS_INVALID_VALUE;
	/* TF32: asked by the compute type, or by the handle's math mode */
	int tf32_on = compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
		      (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH;
	gemm g = { ta, tb, m, n, k, lda, ldb, ldc, at_, bt, ct, *(const float *)alpha,
		   *(const float *)beta, tf32_on };
	if (at_ == CUDA_R_32F && bt == CUDA_R_32F)
		(compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? gemm_tf32 : h->math == CUBLAS_DEFAULT_MATH
		 ? gemm_32f : gemm_other)++;
	emu_enqueue(h->stream, EMU_DEVICE_LOCK, [=] { run_gemm(g, A, B, C); });
	return CUBLAS_STATUS_SUCCESS;
}

} /* extern "C" */
