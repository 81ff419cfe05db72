/* gpu_k_loss.cu - the training loss on the device (M3): sigmoid + binary
 * cross-entropy of the fp32 logits with loss.c's arithmetic (softplus in
 * double, p = sigmoid in float, the gradient scaled by 1/(N*classes)),
 * summed by one block in a fixed order so the result is deterministic,
 * and added to a running sum that the host reads only every N steps.
 * What it does not do: the conversion of the logits to fp32 (the caller
 * runs gpu_k_from_view first) or any host copy.
 */
#include "backend/gpu/gpu_k_common.cuh"

__device__ __forceinline__ double softplus(double z)
{
	return z > 0.0 ? z + log1p(exp(-z)) : log1p(exp(z));
}

__device__ __forceinline__ float sigmoid(float z)
{
	if (z >= 0.0f)
		return 1.0f / (1.0f + expf(-z));
	float e = expf(z);
	return e / (1.0f + e);
}

__global__ void bce_kernel(const float *logits, const float *labels, const float *w_pos,
			   const float *w_neg, int count, int classes, float *dy, double *acc)
{
	__shared__ double shared[GPU_K_THREADS];
	long long total = (long long)count * classes;
	double scale = 1.0 / ((double)count * classes), sum = 0.0;

	for (long long i = threadIdx.x; i < total; i += GPU_K_THREADS) {
		int c = (int)(i % classes);
		double z = logits[i], y = labels[i];
		double wp = w_pos ? w_pos[c] : 1.0, wn = w_neg ? w_neg[c] : 1.0;
		sum += wp * y * softplus(-z) + wn * (1.0 - y) * softplus(z);
		double p = sigmoid((float)z);
		dy[i] = (float)(scale * (wp * y * (p - 1.0) + wn * (1.0 - y) * p));
	}
	double batch = block_sum(sum, shared);
	if (threadIdx.x == 0) {
		acc[0] += batch * scale;
		acc[1] += 1.0;
	}
}

extern "C" cudaError_t gpu_k_bce(cudaStream_t s, const float *logits, const float *labels,
				 const float *w_pos, const float *w_neg, int count, int classes,
				 float *dy, double *acc)
{
	bce_kernel<<<1, GPU_K_THREADS, 0, s>>>(logits, labels, w_pos, w_neg, count, classes, dy, acc);
	gpu_launch_note(GPU_LAUNCH_KERNEL);
	return cudaGetLastError();
}
