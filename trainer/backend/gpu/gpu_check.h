/* gpu_check.h - checked CUDA, cuDNN and cuBLAS calls for the GPU
 * backend's host code. Each macro evaluates the call once; on failure it
 * writes one line into the trainer_error `err` that must be in scope,
 * `gpu: FILE:LINE: 'CALL': LIBRARY ERROR STRING`, and makes the enclosing
 * function return -1. Library code never exits (error.h). Kernel
 * launches go through GPU_CUDA too: the gpu_k_* wrappers return
 * cudaGetLastError(). GPU_COPY, GPU_CUDNN_RUN, GPU_CUBLAS_RUN and
 * GPU_CUDNN_FIND also count the call (gpu_launches.h).
 * What this is not: NCCL (runtime/ checks its own).
 */
#ifndef HVD_TRAINER_GPU_CHECK_H
#define HVD_TRAINER_GPU_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "backend/gpu/gpu_launches.h"
#include "base/error.h"

int gpu_fail(struct trainer_error *err, const char *file, int line, const char *call,
	     const char *library, const char *reason);

#define GPU_CUDA(call) do { cudaError_t rc_ = (call); \
	if (rc_ != cudaSuccess) \
		return gpu_fail(err, __FILE__, __LINE__, #call, "cuda", cudaGetErrorString(rc_)); \
	} while (0)
#define GPU_CUDNN(call) do { cudnnStatus_t rc_ = (call); \
	if (rc_ != CUDNN_STATUS_SUCCESS) \
		return gpu_fail(err, __FILE__, __LINE__, #call, "cudnn", cudnnGetErrorString(rc_)); \
	} while (0)
#define GPU_CUBLAS(call) do { cublasStatus_t rc_ = (call); \
	if (rc_ != CUBLAS_STATUS_SUCCESS) \
		return gpu_fail(err, __FILE__, __LINE__, #call, "cublas", cublasGetStatusString(rc_)); \
	} while (0)
/* The same for the calls that put work on a stream, each counted
 * (gpu_launches.h): copies and fills, cuDNN's and cuBLAS's compute. */
#define GPU_COPY(call) do { gpu_launch_note(GPU_LAUNCH_COPY); GPU_CUDA(call); } while (0)
#define GPU_CUDNN_RUN(call) do { gpu_launch_note(GPU_LAUNCH_CUDNN); GPU_CUDNN(call); } while (0)
#define GPU_CUBLAS_RUN(call) do { gpu_launch_note(GPU_LAUNCH_CUBLAS); GPU_CUBLAS(call); } while (0)
/* cuDNN's Find calls, which run and time every algorithm (conv_algos.c). */
#define GPU_CUDNN_FIND(call) do { gpu_launch_note(GPU_LAUNCH_TIMING); GPU_CUDNN(call); } while (0)

#endif
