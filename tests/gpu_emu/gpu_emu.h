/* gpu_emu.h - the GPU backend's own CUDA kernels (trainer/backend/gpu/gpu_k_*.cu)
 * compiled as host C++ and run by a CPU emulation of the CUDA launch
 * model (gpu_emu.cpp): a grid of blocks run one after another, each block
 * as blockDim fibers sharing its __shared__ arrays and meeting at
 * __syncthreads. Pointers are host memory. This lets the tests execute
 * the kernels' indexing and arithmetic on a machine without a GPU and
 * compare them with trainer/backend/ref; it says nothing about cuDNN, cuBLAS,
 * streams, timing or memory coherence on a real device.
 * The table's entries have exactly gpu_kernels.h's signatures (the
 * kernels' source is the same file, rewritten only at the launch syntax).
 * What this is not: a CUDA runtime (no cudaMalloc, no streams).
 */
#ifndef HVD_TESTS_GPU_EMU_H
#define HVD_TESTS_GPU_EMU_H

#include "backend/gpu/gpu_kernels.h"

struct gpu_emu_kernels {
	__typeof__(&gpu_k_input_images) input_images;
	__typeof__(&gpu_k_to_view) to_view;
	__typeof__(&gpu_k_from_view) from_view;
	__typeof__(&gpu_k_cast) cast;
	__typeof__(&gpu_k_widen) widen;
	__typeof__(&gpu_k_unscale_check) unscale_check;
	__typeof__(&gpu_k_relu_fwd) relu_fwd;
	__typeof__(&gpu_k_relu_bwd) relu_bwd;
	__typeof__(&gpu_k_add_fwd) add_fwd;
	__typeof__(&gpu_k_add_bwd) add_bwd;
	__typeof__(&gpu_k_bias_add) bias_add;
	__typeof__(&gpu_k_bias_grad) bias_grad;
	__typeof__(&gpu_k_adam) adam;
	__typeof__(&gpu_k_sgd) sgd;
	__typeof__(&gpu_k_bce) bce;
	__typeof__(&gpu_k_bn_fwd_train) bn_fwd_train;
	__typeof__(&gpu_k_bn_fwd_eval) bn_fwd_eval;
	__typeof__(&gpu_k_bn_bwd) bn_bwd;
	__typeof__(&gpu_k_maxpool_fwd) maxpool_fwd;
	__typeof__(&gpu_k_maxpool_bwd) maxpool_bwd;
	__typeof__(&gpu_k_avgpool_fwd) avgpool_fwd;
	__typeof__(&gpu_k_avgpool_bwd) avgpool_bwd;
	__typeof__(&gpu_k_gap_fwd) gap_fwd;
	__typeof__(&gpu_k_gap_bwd) gap_bwd;
};

#ifdef __cplusplus
extern "C" {
#endif
/* The emulated kernels; every call runs to completion before it returns. */
extern const struct gpu_emu_kernels gpu_emu;
/* Threads started by all launches so far (a test can see a launch ran). */
unsigned long gpu_emu_threads_started(void);
/* __syncthreads met by all launches so far, one per thread at each. */
unsigned long gpu_emu_barriers(void);
/* block_sum (gpu_k_common.cuh) as the tree nvcc compiles (0, the
 * default) or as the emulated device runs it, thread 0 folding the
 * tree's levels in the same order (1). */
void gpu_emu_fold_sums(int on);
#ifdef __cplusplus
}
#endif

#endif
