/* gpu_k_common.cuh - device helpers shared by the two kernel files: fp32
 * loads/stores for every activation type, strided view addressing, the
 * dtype dispatch and a block reduction. What this is not: any kernel.
 */
#ifndef HVD_TRAINER_GPU_K_COMMON_CUH
#define HVD_TRAINER_GPU_K_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/gpu/gpu_kernels.h"

#define GPU_K_THREADS 256

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}

/* Elements of a view: N*C*H*W. */
__host__ __device__ __forceinline__ long long view_elems(const struct gpu_view &v)
{
	return (long long)v.n * v.c * v.h * v.w;
}

/* Element (n, c, p) of v, p = y*w + x: its offset in elements. */
__host__ __device__ __forceinline__ long long view_at(const struct gpu_view &v, int n, int c,
						      long long p)
{
	return n * v.image_stride + c * v.channel_stride + p * v.pixel_stride;
}

/* A position in a view: image, channel, pixel (y*w + x). */
struct view_pos {
	int n, c;
	long long p;
};

/* The i-th element of v in its memory order: (n, p, c) when channels
 * are innermost (NHWC), else (n, c, p); element-wise kernels walk every
 * view of a call by the first one's positions, so neighbouring threads
 * touch neighbouring memory. */
__device__ __forceinline__ struct view_pos view_walk(const struct gpu_view &v, long long i)
{
	long long hw = (long long)v.h * v.w, per_image = v.c * hw;
	struct view_pos q;
	q.n = (int)(i / per_image);
	long long r = i - q.n * per_image;
	if (v.channel_stride < v.pixel_stride) {
		q.p = r / v.c;
		q.c = (int)(r - q.p * v.c);
	} else {
		q.c = (int)(r / hw);
		q.p = r - q.c * hw;
	}
	return q;
}

/* The i-th element in (n, c, y, x) order: packed NCHW host data. */
__device__ __forceinline__ struct view_pos view_nchw(const struct gpu_view &v, long long i)
{
	long long hw = (long long)v.h * v.w, per_image = v.c * hw;
	struct view_pos q;
	q.n = (int)(i / per_image);
	long long r = i - q.n * per_image;
	q.c = (int)(r / hw);
	q.p = r - q.c * hw;
	return q;
}

template <typename T>
__device__ __forceinline__ float view_load(const struct gpu_view &v, struct view_pos q)
{
	return to_f32(((const T *)v.data)[view_at(v, q.n, q.c, q.p)]);
}

/* dst = v, or dst += v when accumulate. */
template <typename T>
__device__ __forceinline__ void view_store(const struct gpu_view &v, struct view_pos q, float x,
					   int accumulate)
{
	T *p = (T *)v.data + view_at(v, q.n, q.c, q.p);
	*p = from_f32<T>(accumulate ? to_f32(*p) + x : x);
}

static inline unsigned grid_for(long long elems)
{
	long long blocks = (elems + GPU_K_THREADS - 1) / GPU_K_THREADS;
	return (unsigned)(blocks < 1 ? 1 : (blocks > 0x7fffffffLL ? 0x7fffffffLL : blocks));
}

/* Grid-stride loop over [0, count). */
#define GPU_K_FOR(i, count) \
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (count); \
	     i += (long long)gridDim.x * blockDim.x)

/* Runs STMT with T bound to dt's element type. */
#define GPU_K_DISPATCH(dt, STMT) do { \
	switch (dt) { \
	case GPU_F32: { typedef float T; STMT; break; } \
	case GPU_F16: { typedef __half T; STMT; break; } \
	case GPU_BF16: { typedef __nv_bfloat16 T; STMT; break; } \
	default: return cudaErrorInvalidValue; \
	} \
	gpu_launch_note(GPU_LAUNCH_KERNEL); } while (0)

/* Sum of v over the block (blockDim.x == GPU_K_THREADS) in a fixed
 * order; every thread gets it: a tree, one level per barrier.
 * GPU_K_EMU_FOLD exists only in the CPU emulator (tests/gpu_emu/gpu_emu.cpp;
 * nvcc never sees it): when it is true, thread 0 makes the tree's
 * additions itself, level by level, each level in thread order, and
 * leaves the sum in `folded`, which every thread reads before it can
 * reach the next sum's barrier. The same additions of the same operands
 * in the same order give the same sum bit for bit at 1 barrier instead
 * of 10: the emulator resumes a block's threads in thread order after a
 * barrier, so thread 0 has folded before any other thread reads
 * `folded` (a GPU gives no such order: nvcc never compiles this). The
 * emulator pays one fiber switch per thread per barrier, which made the
 * tree most of an emulated training step.
 * Group gpu-emu runs the tree (the kernels against ref) and compares the
 * two bit for bit. */
template <typename T>
__device__ __forceinline__ T block_sum(T v, T *shared)
{
	shared[threadIdx.x] = v;
	__syncthreads();
#ifdef GPU_K_EMU_FOLD
	if (GPU_K_EMU_FOLD) {
		__shared__ T folded;
		if (threadIdx.x == 0) {
			for (int half = GPU_K_THREADS / 2; half > 0; half /= 2)
				for (int t = 0; t < half; t++)
					shared[t] += shared[t + half];
			folded = shared[0];
		}
		return folded;
	}
#endif
	for (int half = GPU_K_THREADS / 2; half > 0; half /= 2) {
		if ((int)threadIdx.x < half)
			shared[threadIdx.x] += shared[threadIdx.x + half];
		__syncthreads();
	}
	T total = shared[0];
	__syncthreads();
	return total;
}

#endif
