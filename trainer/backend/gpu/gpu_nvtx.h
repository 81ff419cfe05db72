/* gpu_nvtx.h - NVTX ranges named like the timeline phases (forward,
 * backward, input, output) so Nsight Systems shows the same picture as
 * the Horovod-style timeline (O3). NVTX v3 is header-only: without a
 * profiler attached each call is a cheap no-op. What this is not: the
 * timeline itself (runtime/observe/timeline.c).
 */
#ifndef HVD_TRAINER_GPU_NVTX_H
#define HVD_TRAINER_GPU_NVTX_H

#include <nvtx3/nvToolsExt.h>

static inline void gpu_nvtx_push(const char *phase)
{
	nvtxRangePushA(phase);
}

static inline void gpu_nvtx_pop(void)
{
	nvtxRangePop();
}

#endif
