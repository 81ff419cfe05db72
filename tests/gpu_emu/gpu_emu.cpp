/* gpu_emu.cpp - runs trainer/backend/gpu's kernel files on the CPU (see
 * gpu_emu.h). The build rewrites each `K<<<grid, block, shm, s>>>(args)`
 * of a .cu file into `emu_launch_at(grid, block, shm, s).run(K, args)`
 * (and drops `extern "C"`, so these copies live in namespace emu and
 * never clash with the real kernels' symbols); everything else is the
 * kernel source as nvcc sees it, with CUDA's qualifiers defined away and
 * threadIdx/blockIdx/blockDim/gridDim/__syncthreads emulated.
 * Built twice: into the test runner of every CUDA build (namespace emu,
 * the gpu_emu table), and with GPU_EMU_DEVICE as the emulated device's
 * gpu_k_* in `make GPU_EMU=1` (tests/gpu_emu/fake_cuda.cpp).
 * What it does not do: streams (every launch completes before it
 * returns) or device memory (pointers are host memory).
 */
#include <cuda_runtime_api.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu_emu.h"

/* Internal linkage for the whole emulator: the runner links this file
 * twice over in the emulated-device build (the gpu_emu table and the
 * device's kernels), and run<>'s instantiations must not merge across the
 * two (each must set the threadIdx its own kernels read). */
namespace {

struct emu_dim3 {
	unsigned x, y, z;
};

static thread_local emu_dim3 emu_thread_idx, emu_block_idx;
static emu_dim3 emu_block_dim, emu_grid_dim;
static pthread_barrier_t emu_barrier;
static std::atomic<unsigned long> emu_started{0};
static std::atomic<int> emu_synced{0};

/* CUDA's device math that the C library lacks (rsqrtf: 2 ulp on a GPU). */
static inline float rsqrtf(float x)
{
	return 1.0f / sqrtf(x);
}

static void emu_syncthreads(void)
{
	emu_synced = 1;
	pthread_barrier_wait(&emu_barrier);
}

/* A block's threads as real threads, kept between launches: the block
 * runs when every worker below `active` has run `job` once. */
struct emu_pool {
	std::vector<std::thread> workers;
	std::mutex mu;
	std::condition_variable start, done;
	std::function<void()> job;
	unsigned generation = 0, active = 0, finished = 0, block = 0;

	void ensure(unsigned n)
	{
		while (workers.size() < n) {
			unsigned t = (unsigned)workers.size();
			workers.emplace_back([this, t] { work(t); });
			workers.back().detach();  /* lives as long as the process */
		}
	}

	void work(unsigned t)
	{
		unsigned seen = 0;
		for (;;) {
			std::unique_lock<std::mutex> lock(mu);
			start.wait(lock, [&] { return generation != seen; });
			seen = generation;
			if (t >= active)
				continue;
			emu_thread_idx = { t, 0, 0 };
			emu_block_idx = { block, 0, 0 };
			lock.unlock();
			job();
			lock.lock();
			if (++finished == active)
				done.notify_one();
		}
	}

	void run_block(unsigned b, unsigned n, const std::function<void()> &fn)
	{
		ensure(n);
		pthread_barrier_init(&emu_barrier, NULL, n);
		std::unique_lock<std::mutex> lock(mu);
		job = fn;
		active = n;
		finished = 0;
		block = b;
		generation++;
		start.notify_all();
		done.wait(lock, [&] { return finished == active; });
		pthread_barrier_destroy(&emu_barrier);
		emu_started += n;
	}
};

static emu_pool pool;
/* Per kernel (its address): 1 if it met __syncthreads in its first block. */
static std::map<const void *, int> uses_barrier;

struct emu_launch_at {
	unsigned grid, block;
	emu_launch_at(unsigned g, unsigned b, int, cudaStream_t) : grid(g), block(b) {}

	/* Blocks one after another. A kernel's first block runs on real
	 * threads (they may meet at __syncthreads and share the kernel's
	 * static arrays); a kernel that did not synchronise there runs its
	 * threads one after another from then on (the grid-stride kernels). */
	template <typename F, typename... A> void run(F kernel, A... args)
	{
		const void *key = (const void *)kernel;
		std::function<void()> fn = [=] { kernel(args...); };
		emu_grid_dim = { grid, 1, 1 };
		emu_block_dim = { block, 1, 1 };
		for (unsigned b = 0; b < grid; b++) {
			auto known = uses_barrier.find(key);
			if (known == uses_barrier.end() || known->second) {
				emu_synced = 0;
				pool.run_block(b, block, fn);
				if (known == uses_barrier.end())
					uses_barrier[key] = emu_synced;
				continue;
			}
			emu_block_idx = { b, 0, 0 };
			for (unsigned t = 0; t < block; t++) {
				emu_thread_idx = { t, 0, 0 };
				fn();
			}
			emu_started += block;
		}
	}
};

} /* namespace */

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

#ifdef GPU_EMU_DEVICE
/* The emulated device build (make GPU_EMU=1): these are the backend's
 * gpu_k_* (C linkage from gpu_kernels.h's declarations). */
#include "gpu_k_elt.emu.inc"
#include "gpu_k_layers.emu.inc"
#include "gpu_k_loss.emu.inc"
#else
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
#endif

#ifndef GPU_EMU_DEVICE
extern "C" unsigned long gpu_emu_threads_started(void)
{
	return emu_started;
}
#endif
