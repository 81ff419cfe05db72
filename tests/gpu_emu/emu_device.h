/* emu_device.h - what the emulated device's parts share (make GPU_EMU=1):
 * emu_runtime.cpp (the CUDA runtime: devices, memory, streams, events)
 * gives the kernels (gpu_emu.cpp), cuDNN/cuBLAS (fake_cuda.cpp) and NCCL
 * (fake_nccl.cpp) one way to run work in stream order.
 * A stream is a worker thread running its queue in order; the host only
 * enqueues. Work that touches the emulator's shared kernel state takes
 * the device lock; work that waits (an event, a peer over a socket) must
 * not. An error inside queued work is sticky: every later runtime call
 * returns it, as a failed kernel poisons a real CUDA context.
 * What this is not: an API for the product; only the emulator includes it.
 */
#ifndef HVD_TESTS_EMU_DEVICE_H
#define HVD_TESTS_EMU_DEVICE_H

#include <cuda_runtime_api.h>

#include <functional>

enum emu_lock { EMU_NO_LOCK, EMU_DEVICE_LOCK };

/* Runs op on stream s after everything queued there before (the NULL
 * stream: now, on the calling thread). */
void emu_enqueue(cudaStream_t s, enum emu_lock lock, std::function<void()> op);
/* The device a stream was created on (the current device for NULL). */
int emu_stream_device(cudaStream_t s);
/* The device whose memory p points into, or -1 for host memory. */
int emu_pointer_device(const void *p);
/* Makes err the device's sticky error (the first one stays). */
void emu_fail(cudaError_t err, const char *why);

/* The calls that put work on a stream, as the device received them:
 * counted at the call (a zero-byte copy too), so that a test can hold
 * them against the backend's own count (gpu_launches.h). With
 * HVD_EMU_COUNTS=1 in the environment they are printed when the process
 * exits: "emu: calls: kernels K, cudnn C, cublas B, copies M, finds F,
 * graphs G" (finds: cuDNN's algorithm-timing Find calls, which run at
 * create; graphs: cudaGraphLaunch calls; work recorded by a capture is
 * counted once, when it is recorded). */
enum emu_call { EMU_CALL_KERNEL, EMU_CALL_CUDNN, EMU_CALL_CUBLAS, EMU_CALL_COPY, EMU_CALL_FIND,
		EMU_CALL_GRAPH, EMU_CALL_KINDS };
void emu_count(enum emu_call k);

#endif
