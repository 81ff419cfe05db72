/* gpu_emu.cpp - runs trainer/gpu's kernel files on the CPU (see
 * gpu_emu.h). The build rewrites each `K<<<grid, block, shm, s>>>(args)`
 * of a .cu file into `emu_launch_at(grid, block, shm, s).run(K, args)`
 * (and drops `extern "C"`, so these copies live in namespace emu and
 * never clash with the real kernels' symbols); everything else is the
 * kernel source as nvcc sees it, with CUDA's qualifiers defined away and
 * threadIdx/blockIdx/blockDim/gridDim/__syncthreads emulated.
 * What it does not do: streams (every launch completes before it
 * returns) or device memory (pointers are host memory).
 */
#include <cuda_runtime_api.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <pthread.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gpu_emu.h"

struct emu_dim3 {
	unsigned x, y, z;
};

static thread_local emu_dim3 emu_thread_idx, emu_block_idx;
static emu_dim3 emu_block_dim, emu_grid_dim;
static pthread_barrier_t emu_barrier;
static std::atomic<unsigned long> emu_started{0};

/* CUDA's device math that the C library lacks (rsqrtf: 2 ulp on a GPU). */
static inline float rsqrtf(float x)
{
	return 1.0f / sqrtf(x);
}

static void emu_syncthreads(void)
{
	pthread_barrier_wait(&emu_barrier);
}

struct emu_launch_at {
	unsigned grid, block;
	emu_launch_at(unsigned g, unsigned b, int, cudaStream_t) : grid(g), block(b) {}

	/* Blocks one after another; a block's threads run at once (they may
	 * meet at __syncthreads and share the kernel's static arrays). */
	template <typename F, typename... A> void run(F kernel, A... args)
	{
		emu_grid_dim = { grid, 1, 1 };
		emu_block_dim = { block, 1, 1 };
		for (unsigned b = 0; b < grid; b++) {
			std::vector<std::thread> threads;
			pthread_barrier_init(&emu_barrier, NULL, block);
			for (unsigned t = 0; t < block; t++)
				threads.emplace_back([=] {
					emu_block_idx = { b, 0, 0 };
					emu_thread_idx = { t, 0, 0 };
					kernel(args...);
				});
			emu_started += block;
			for (auto &th : threads)
				th.join();
			pthread_barrier_destroy(&emu_barrier);
		}
	}
};

#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#undef __shared__
#define __shared__ static
#define threadIdx emu_thread_idx
#define blockIdx emu_block_idx
#define blockDim emu_block_dim
#define gridDim emu_grid_dim
#define __syncthreads emu_syncthreads
#define cudaGetLastError() cudaSuccess

namespace emu {
#include "gpu_k_elt.emu.inc"
#include "gpu_k_layers.emu.inc"
#include "gpu_k_loss.emu.inc"
}

extern "C" const struct gpu_emu_kernels gpu_emu = {
	emu::gpu_k_input_images, emu::gpu_k_to_view, emu::gpu_k_from_view, emu::gpu_k_cast,
	emu::gpu_k_widen, emu::gpu_k_unscale_check, emu::gpu_k_relu_fwd, emu::gpu_k_relu_bwd,
	emu::gpu_k_add_fwd, emu::gpu_k_add_bwd, emu::gpu_k_bias_add, emu::gpu_k_bias_grad,
	emu::gpu_k_adam, emu::gpu_k_sgd, emu::gpu_k_bce, emu::gpu_k_bn_fwd_train,
	emu::gpu_k_bn_fwd_eval, emu::gpu_k_bn_bwd, emu::gpu_k_maxpool_fwd, emu::gpu_k_maxpool_bwd,
	emu::gpu_k_avgpool_fwd, emu::gpu_k_avgpool_bwd, emu::gpu_k_gap_fwd, emu::gpu_k_gap_bwd,
};

extern "C" unsigned long gpu_emu_threads_started(void)
{
	return emu_started;
}
