/* gpu_emu.cpp - runs trainer/backend/gpu's kernel files on the CPU (see
 * gpu_emu.h). The build rewrites each `K<<<grid, block, shm, s>>>(args)`
 * of a .cu file into `emu_launch_at(grid, block, shm, s).run(K, args)`
 * (and drops `extern "C"`, so these copies live in namespace emu and
 * never clash with the real kernels' symbols); everything else is the
 * kernel source as nvcc sees it, with CUDA's qualifiers defined away,
 * threadIdx/blockIdx/blockDim/gridDim/__syncthreads emulated and
 * GPU_K_EMU_FOLD defined (block_sum's fold, gpu_k_common.cuh).
 * Built twice: into the test runner of every CUDA build (namespace emu,
 * the gpu_emu table), and with GPU_EMU_DEVICE as the emulated device's
 * gpu_k_* in `make GPU_EMU=1` (tests/gpu_emu/fake_cuda.cpp).
 * The emulated device queues each launch on its stream (emu_device.h)
 * and refuses pointer arguments of another device; the runner's table
 * runs a launch before it returns.
 * What it does not do: device memory (pointers are host memory).
 */
#include <cuda_runtime_api.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include <atomic>
#include <functional>
#include <map>
#include <vector>

#include "gpu_emu.h"
#ifdef GPU_EMU_DEVICE
#include "emu_device.h"
#endif

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
static std::atomic<unsigned long> emu_started{0};
static unsigned long emu_barriers;   /* __syncthreads met, per thread */
static int emu_synced;   /* launches run one at a time (the device lock) */
/* block_sum as thread 0's fold of the tree's levels (gpu_k_common.cuh's
 * GPU_K_EMU_FOLD: the same sums at 1 barrier, not 10): always on the
 * emulated device; in the runner's table the tree nvcc compiles unless a
 * test asks for the fold (gpu-emu compares the two bit for bit). */
#ifdef GPU_EMU_DEVICE
static const int emu_fold_sums = 1;
#else
static int emu_fold_sums = 0;
#endif

/* CUDA's device math that the C library lacks (rsqrtf: 2 ulp on a GPU). */
static inline float rsqrtf(float x)
{
	return 1.0f / sqrtf(x);
}

/* A block's threads as fibers on the calling thread, stacks kept between
 * launches: each runs until __syncthreads or its end and switches straight
 * to the next in thread order; after the last, the next round starts - CUDA's barrier semantics at the cost of a
 * user-space switch (callee-saved registers and the stack pointer; no
 * signal-mask system call as swapcontext makes). The sanitizer calls
 * tell ASan which stack is live. */
#if !defined(__x86_64__)
#error "gpu_emu.cpp: the fiber switch is written for x86-64"
#endif
extern "C" void hvd_emu_fiber_switch(void **save_sp, void *to_sp);
__asm__(".text\n.weak hvd_emu_fiber_switch\n.type hvd_emu_fiber_switch,@function\n"
	"hvd_emu_fiber_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n.size hvd_emu_fiber_switch,.-hvd_emu_fiber_switch\n");

struct emu_fibers {
#ifdef __SANITIZE_ADDRESS__
	static constexpr size_t stack_bytes = 64 * 1024;
#else
	static constexpr size_t stack_bytes = 16 * 1024;
#endif
	void *scheduler = nullptr;
	std::vector<void *> sp;
	char *stack_region = nullptr;   /* all fibers' stacks, one mapping */
	unsigned stack_count = 0;
	std::vector<char> done;
	const std::function<void()> *job = nullptr;
	unsigned current = 0;
	const void *main_bottom = nullptr;   /* the launching thread's stack (ASan) */
	size_t main_size = 0;
	bool from_scheduler = false;         /* the fiber starting now came from it */

	/* The next fiber that has not finished, after the current one in
	 * thread order (a barrier round wraps to the first), or -1. No
	 * division: this runs once per thread per barrier. */
	int next_fiber(void)
	{
		unsigned n = (unsigned)sp.size(), t = current;
		for (unsigned k = 1; k <= n; k++) {
			if (++t == n)
				t = 0;
			if (!done[t])
				return (int)t;
		}
		return -1;
	}

	/* From a fiber at a barrier or at its end straight to the next one;
	 * to the launching thread when all have finished. */
	void leave(bool finished)
	{
		unsigned from = current;
		int to = next_fiber();
		void *target = to < 0 ? scheduler : sp[(unsigned)to];
		if (to >= 0) {
			current = (unsigned)to;
			emu_thread_idx = { current, 0, 0 };
		}
#ifdef __SANITIZE_ADDRESS__
		void *fake = nullptr;
		__sanitizer_start_switch_fiber(finished ? nullptr : &fake,
					       to < 0 ? main_bottom : stack_of((unsigned)to),
					       to < 0 ? main_size : stack_bytes);
		hvd_emu_fiber_switch(&sp[from], target);
		__sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
		hvd_emu_fiber_switch(&sp[from], target);
#endif
	}

	static void entry(void);

	char *stack_of(unsigned t) { return stack_region + (size_t)t * stack_bytes; }

	/* Room for n stacks in one mapping on huge pages where the kernel
	 * gives them (a block's 256 stacks in 2 TLB entries, not 1024). No
	 * fiber is live between blocks, so the old mapping can go. */
	void grow_stacks(unsigned n)
	{
		if (n <= stack_count)
			return;
		size_t huge = 2u << 20, bytes = ((size_t)n * stack_bytes + huge - 1) / huge * huge;
		if (stack_region)
			munmap(stack_region, (size_t)stack_count * stack_bytes);
		void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED)
			abort();
		madvise(p, bytes, MADV_HUGEPAGE);
		stack_region = (char *)p;
		stack_count = (unsigned)(bytes / stack_bytes);
	}

	/* A new fiber's stack as the switch leaves one: six saved registers,
	 * then entry as the return address, then a dummy caller's return
	 * address so entry starts with the ABI's alignment. The tops are
	 * staggered so that 256 fibers' hot frames do not share cache sets. */
	void *fresh_stack(unsigned t)
	{
#ifdef __SANITIZE_ADDRESS__
		/* a finished fiber never returns: ASan's marks of its frames stay */
		__asan_unpoison_memory_region(stack_of(t), stack_bytes);
#endif
		uintptr_t top = ((uintptr_t)stack_of(t) + stack_bytes - (t % 64) * 64) &
				~(uintptr_t)15;
		void **p = (void **)top;
		*--p = nullptr;
		*--p = (void *)entry;
		for (int r = 0; r < 6; r++)
			*--p = nullptr;
		return p;
	}

	void run_block(unsigned b, unsigned n, const std::function<void()> &fn)
	{
		job = &fn;
		grow_stacks(n);
		sp.resize(n);
		done.assign(n, 0);
		for (unsigned t = 0; t < n; t++)
			sp[t] = fresh_stack(t);
		current = 0;
		emu_thread_idx = { 0, 0, 0 };
		emu_block_idx = { b, 0, 0 };
#ifdef __SANITIZE_ADDRESS__
		void *fake = nullptr;
		from_scheduler = true;
		__sanitizer_start_switch_fiber(&fake, stack_of(0), stack_bytes);
		hvd_emu_fiber_switch(&scheduler, sp[0]);
		__sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
		hvd_emu_fiber_switch(&scheduler, sp[0]);
#endif
		emu_started += n;
	}
};

static emu_fibers fibers;

/* A fiber's first frame: runs the thread's kernel body, then leaves for
 * good (a finished fiber is never resumed). Under ASan the first fiber
 * learns the launching thread's stack, where the last one returns; the
 * others start from a fiber, whose stack is not that one. */
void emu_fibers::entry(void)
{
#ifdef __SANITIZE_ADDRESS__
	if (fibers.from_scheduler)
		__sanitizer_finish_switch_fiber(nullptr, &fibers.main_bottom, &fibers.main_size);
	else
		__sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
	fibers.from_scheduler = false;
#endif
	(*fibers.job)();
	fibers.done[fibers.current] = 1;
	fibers.leave(true);
	__builtin_unreachable();
}

static void emu_syncthreads(void)
{
	emu_synced = 1;
	emu_barriers++;
	fibers.leave(false);
}
/* Per kernel (its address): 1 if it met __syncthreads in its first block. */
static std::map<const void *, int> uses_barrier;

#ifdef GPU_EMU_DEVICE
/* A kernel's pointer arguments must be host memory or its stream's
 * device's (a real GPU faults on another device's memory). */
template <typename T> bool on_device(int, T) { return true; }
template <typename T> bool on_device(int device, T *p)
{
	int owner = emu_pointer_device(p);
	return owner < 0 || owner == device;
}
#endif

struct emu_launch_at {
	unsigned grid, block;
	cudaStream_t stream;
	emu_launch_at(unsigned g, unsigned b, int, cudaStream_t s) : grid(g), block(b), stream(s) {}

	/* The emulated device queues the launch on its stream; the test
	 * runner's table runs it at once. */
	template <typename F, typename... A> void run(F kernel, A... args)
	{
#ifdef GPU_EMU_DEVICE
		int device = emu_stream_device(stream);
		if (!(on_device(device, args) && ...)) {
			emu_fail(cudaErrorIllegalAddress, "a kernel reads memory of another device");
			return;
		}
		emu_count(EMU_CALL_KERNEL);
		emu_launch_at self = *this;
		emu_enqueue(stream, EMU_DEVICE_LOCK, [=] { self.run_now(kernel, args...); });
#else
		run_now(kernel, args...);
#endif
	}

	/* Blocks one after another. A kernel's first block runs as fibers (they may meet at __syncthreads and share the kernel's
	 * static arrays); a kernel that did not synchronise there runs its
	 * threads one after another from then on (the grid-stride kernels). */
	template <typename F, typename... A> void run_now(F kernel, A... args) const
	{
		const void *key = (const void *)kernel;
		std::function<void()> fn = [=] { kernel(args...); };
		emu_grid_dim = { grid, 1, 1 };
		emu_block_dim = { block, 1, 1 };
		for (unsigned b = 0; b < grid; b++) {
			auto known = uses_barrier.find(key);
			if (known == uses_barrier.end() || known->second) {
				emu_synced = 0;
				fibers.run_block(b, block, fn);
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
#define GPU_K_EMU_FOLD emu_fold_sums
#define cudaGetLastError() cudaSuccess

#ifdef GPU_EMU_DEVICE
/* The emulated device build (make GPU_EMU=1): these are the backend's
 * gpu_k_* (C linkage from gpu_kernels.h's declarations). */
#include "gpu_k_elt.emu.inc"
#include "gpu_k_bn.emu.inc"
#include "gpu_k_pool.emu.inc"
#include "gpu_k_loss.emu.inc"
#else
namespace emu {
#include "gpu_k_elt.emu.inc"
#include "gpu_k_bn.emu.inc"
#include "gpu_k_pool.emu.inc"
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

extern "C" unsigned long gpu_emu_barriers(void)
{
	return emu_barriers;
}

extern "C" void gpu_emu_fold_sums(int on)
{
	emu_fold_sums = on;
}
#endif
