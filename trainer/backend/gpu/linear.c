/* backend/gpu/linear.c - LAYER_LINEAR on the GPU through cuBLAS (cublasGemmEx,
 * fp32 accumulation; the compute type is the precision's, b->gemm_compute:
 * fp32 without TF32 so it matches ref/, tf32 on TF32 tensor cores). Row-major
 * (N, K) activations with an image stride are column-major (K, N)
 * matrices with that leading dimension, so no transposes are copied:
 *   y(out, N)  = W^T(out, K) x(K, N)          (W row-major (out, K) = col-major (K, out))
 *   dx(K, N)   = W(K, out) dy(out, N)         (+= when accumulate_dx)
 *   dW(K, out) = x(K, N) dy^T(N, out)         (fp32, straight into the gradients)
 * Bias and its gradient run as small kernels (gpu_kernels.h).
 * What it does not do: anything but the linear layer.
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

cudaDataType_t gpu_cublas_type(enum gpu_dtype dt)
{
	return dt == GPU_F16 ? CUDA_R_16F : dt == GPU_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static int in_features(const struct model_layer *ml)
{
	return ml->in.channels * ml->in_h * ml->in_w;
}

static int linear_forward(struct backend *b, struct gpu_layer *l, int training,
			  struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), y = gpu_slice(b, &ml->out, 0);
	cudaDataType_t t = gpu_cublas_type(b->dt);
	float one = 1.0f, zero = 0.0f;
	int k = in_features(ml);

	GPU_CUBLAS_RUN(cublasGemmEx(b->cublas, CUBLAS_OP_T, CUBLAS_OP_N, ml->out.channels, b->count, k,
		&one, gpu_weights(b, ml->weight_offset), t, k, x.data, t, (int)x.image_stride,
		&zero, y.data, t, (int)y.image_stride, b->gemm_compute, CUBLAS_GEMM_DEFAULT));
	GPU_CUDA(gpu_k_bias_add(b->stream, b->dt, y, gpu_params(b) + ml->bias_offset));
	return 0;
}

static int linear_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			   struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), dy = gpu_slice(b, &ml->out, 1);
	cudaDataType_t t = gpu_cublas_type(b->dt);
	float one = 1.0f, zero = 0.0f, keep = ml->accumulate_dx ? 1.0f : 0.0f;
	int k = in_features(ml), out = ml->out.channels;

	GPU_CUBLAS_RUN(cublasGemmEx(b->cublas, CUBLAS_OP_N, CUBLAS_OP_T, k, out, b->count, &one,
		x.data, t, (int)x.image_stride, dy.data, t, (int)dy.image_stride, &zero,
		gpu_grads(b) + ml->weight_offset, CUDA_R_32F, k, b->gemm_compute,
		CUBLAS_GEMM_DEFAULT));
	GPU_CUDA(gpu_k_bias_grad(b->stream, b->dt, dy, gpu_grads(b) + ml->bias_offset));
	if (!want_dx)
		return 0;
	struct gpu_view dx = gpu_slice(b, &ml->in, 1);
	GPU_CUBLAS_RUN(cublasGemmEx(b->cublas, CUBLAS_OP_N, CUBLAS_OP_N, k, b->count, out, &one,
		gpu_weights(b, ml->weight_offset), t, k, dy.data, t, (int)dy.image_stride, &keep,
		dx.data, t, (int)dx.image_stride, b->gemm_compute, CUBLAS_GEMM_DEFAULT));
	return 0;
}

const struct gpu_layer_ops gpu_linear_ops = {
	.name = "linear", .forward = linear_forward, .backward = linear_backward,
};
