/* gpu_launches.h - how much work the gpu backend puts on the device, as
 * calls: each kernel launch of its own kernels (gpu_k_*.cu, counted at
 * the launch), each cuDNN and cuBLAS call that runs on the stream, each
 * asynchronous copy or fill (GPU_COPY, GPU_CUDNN_RUN, GPU_CUBLAS_RUN in
 * gpu_check.h), each CUDA graph launch, and each call that times
 * convolution algorithms (GPU_CUDNN_FIND: at create, never in a step);
 * and beside them the batch-norm channels whose statistics a step computed.
 * `chexnet bench` prints them
 * per step; on the emulated device a test holds them against what the
 * device itself received (tests/gpu_emu). Process-wide counters, safe from
 * any thread.
 * What this is not: the runtime's NCCL calls (a single process makes
 * none), or event records and waits (ordering, not work).
 */
#ifndef HVD_TRAINER_GPU_LAUNCHES_H
#define HVD_TRAINER_GPU_LAUNCHES_H

#ifdef __cplusplus
extern "C" {
#endif

enum gpu_launch_kind {
	GPU_LAUNCH_KERNEL,
	GPU_LAUNCH_CUDNN,
	GPU_LAUNCH_CUBLAS,
	GPU_LAUNCH_COPY,
	GPU_LAUNCH_GRAPH,
	GPU_LAUNCH_TIMING,           /* cuDNN's Find calls (algorithm timing, at create) */
	GPU_LAUNCH_KINDS
};

/* One more call of kind k. */
void gpu_launch_note(enum gpu_launch_kind k);
/* The counts so far, by kind. */
void gpu_launches_read(unsigned long counts[GPU_LAUNCH_KINDS]);

/* One training BN forward over `normalised` channels that computed the
 * statistics of `computed` of them (batchnorm.c), and the sums so far. */
void gpu_bn_channels_note(unsigned long computed, unsigned long normalised);
void gpu_bn_channels_read(unsigned long *computed, unsigned long *normalised);

#ifdef __cplusplus
}
#endif

#endif
