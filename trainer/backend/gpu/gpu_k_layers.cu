/* gpu_k_layers.cu - the GPU backend's per-channel and windowed kernels:
 * batch norm (training, evaluation, backward; optional fused ReLU), max
 * and average pooling, global average pooling. Batch norm uses one block
 * per channel and reduces in fp32 over (N, H, W) in two passes (mean,
 * then squared deviations) as ref/ does in double; pools use one thread
 * per output (forward) or per input element (backward, gathering every
 * window that contains it). What it does not do: convolutions (cuDNN).
 */
#include "backend/gpu/gpu_k_common.cuh"

/* Element j of channel c over (N, H*W) in view v. */
__device__ __forceinline__ long long channel_offset(const struct gpu_view &v, int c, long long j)
{
	long long hw = (long long)v.h * v.w, n = j / hw;
	return n * v.image_stride + c * hw + (j - n * hw);
}

template <typename T>
__device__ __forceinline__ float channel_load(const struct gpu_view &v, int c, long long j)
{
	return to_f32(((const T *)v.data)[channel_offset(v, c, j)]);
}

template <typename T>
__global__ void bn_fwd_train_kernel(struct gpu_view x, const float *gamma, const float *beta,
				    struct gpu_bn_args a, struct gpu_view y, float *saved_mean,
				    float *saved_invstd, float *running_mean, float *running_var)
{
	__shared__ float shared[GPU_K_THREADS];
	int c = blockIdx.x;
	long long count = (long long)x.n * x.h * x.w;
	float sum = 0.0f;

	for (long long j = threadIdx.x; j < count; j += blockDim.x)
		sum += channel_load<T>(x, c, j);
	float mean = block_sum(sum, shared) / (float)count;
	float sq = 0.0f;
	for (long long j = threadIdx.x; j < count; j += blockDim.x) {
		float d = channel_load<T>(x, c, j) - mean;
		sq += d * d;
	}
	float sq_total = block_sum(sq, shared);
	float invstd = rsqrtf(sq_total / (float)count + a.eps);
	if (threadIdx.x == 0) {
		saved_mean[c] = mean;
		saved_invstd[c] = invstd;
		float unbiased = count > 1 ? sq_total / (float)(count - 1) : sq_total / (float)count;
		running_mean[c] = (1.0f - a.momentum) * running_mean[c] + a.momentum * mean;
		running_var[c] = (1.0f - a.momentum) * running_var[c] + a.momentum * unbiased;
	}
	float scale = gamma[c] * invstd, shift = beta[c] - mean * scale;
	for (long long j = threadIdx.x; j < count; j += blockDim.x) {
		float v = channel_load<T>(x, c, j) * scale + shift;
		((T *)y.data)[channel_offset(y, c, j)] = from_f32<T>(a.relu && v < 0.0f ? 0.0f : v);
	}
}

extern "C" cudaError_t gpu_k_bn_fwd_train(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					  const float *gamma, const float *beta,
					  struct gpu_bn_args a, struct gpu_view y, float *saved_mean,
					  float *saved_invstd, float *running_mean,
					  float *running_var)
{
	GPU_K_DISPATCH(dt, (bn_fwd_train_kernel<T><<<x.c, GPU_K_THREADS, 0, s>>>(x, gamma, beta, a, y, saved_mean, saved_invstd, running_mean, running_var)));
	return cudaGetLastError();
}

template <typename T>
__global__ void bn_fwd_eval_kernel(struct gpu_view x, const float *gamma, const float *beta,
				   const float *running_mean, const float *running_var,
				   struct gpu_bn_args a, struct gpu_view y)
{
	long long hw = (long long)x.h * x.w;

	GPU_K_FOR(i, view_elems(x)) {
		int c = (int)((i / hw) % x.c);
		float invstd = rsqrtf(running_var[c] + a.eps);
		float scale = gamma[c] * invstd, shift = beta[c] - running_mean[c] * scale;
		float v = view_load<T>(x, i) * scale + shift;
		view_store<T>(y, i, a.relu && v < 0.0f ? 0.0f : v, 0);
	}
}

extern "C" cudaError_t gpu_k_bn_fwd_eval(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					 const float *gamma, const float *beta,
					 const float *running_mean, const float *running_var,
					 struct gpu_bn_args a, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (bn_fwd_eval_kernel<T><<<grid_for(view_elems(x)), GPU_K_THREADS, 0, s>>>(x, gamma, beta, running_mean, running_var, a, y)));
	return cudaGetLastError();
}

/* dy masked by the fused ReLU (y > 0). */
template <typename T>
__device__ __forceinline__ float bn_grad_out(const struct gpu_view &y, const struct gpu_view &dy,
					     int relu, int c, long long j)
{
	float g = channel_load<T>(dy, c, j);
	return relu && channel_load<T>(y, c, j) <= 0.0f ? 0.0f : g;
}

/* dx = gamma*invstd * (g - mean(g) - xhat*mean(g*xhat)), as ref/. */
template <typename T>
__global__ void bn_bwd_kernel(struct gpu_view x, struct gpu_view y, struct gpu_view dy,
			      const float *gamma, int relu, const float *saved_mean,
			      const float *saved_invstd, struct gpu_view dx, int accumulate,
			      float *dgamma, float *dbeta)
{
	__shared__ float shared[GPU_K_THREADS];
	int c = blockIdx.x;
	long long count = (long long)x.n * x.h * x.w;
	float mean = saved_mean[c], invstd = saved_invstd[c], sum_g = 0.0f, sum_gx = 0.0f;

	for (long long j = threadIdx.x; j < count; j += blockDim.x) {
		float g = bn_grad_out<T>(y, dy, relu, c, j);
		sum_g += g;
		sum_gx += g * (channel_load<T>(x, c, j) - mean) * invstd;
	}
	sum_g = block_sum(sum_g, shared);
	sum_gx = block_sum(sum_gx, shared);
	if (threadIdx.x == 0) {
		dgamma[c] = sum_gx;
		dbeta[c] = sum_g;
	}
	if (!dx.data)
		return;
	float k = gamma[c] * invstd, mean_g = sum_g / (float)count, mean_gx = sum_gx / (float)count;
	for (long long j = threadIdx.x; j < count; j += blockDim.x) {
		float xhat = (channel_load<T>(x, c, j) - mean) * invstd;
		float v = k * (bn_grad_out<T>(y, dy, relu, c, j) - mean_g - xhat * mean_gx);
		T *p = (T *)dx.data + channel_offset(dx, c, j);
		*p = from_f32<T>(accumulate ? to_f32(*p) + v : v);
	}
}

extern "C" cudaError_t gpu_k_bn_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
				    struct gpu_view y, struct gpu_view dy, const float *gamma,
				    int relu, const float *saved_mean, const float *saved_invstd,
				    struct gpu_view dx, int accumulate, float *dgamma, float *dbeta)
{
	GPU_K_DISPATCH(dt, (bn_bwd_kernel<T><<<x.c, GPU_K_THREADS, 0, s>>>(x, y, dy, gamma, relu, saved_mean, saved_invstd, dx, accumulate, dgamma, dbeta)));
	return cudaGetLastError();
}

/* Pixel (n, c, py, px) of v. */
template <typename T>
__device__ __forceinline__ float pixel(const struct gpu_view &v, int n, int c, int py, int px)
{
	return to_f32(((const T *)v.data)[n * v.image_stride + ((long long)c * v.h + py) * v.w + px]);
}

/* Window maximum's input position for output (oy, ox): padding never
 * wins, ties go to the first element in row-major order (ref/). */
template <typename T>
__device__ void window_argmax(const struct gpu_view &x, int n, int c, int oy, int ox,
			      struct gpu_pool_shape p, int *by, int *bx, float *best)
{
	int found = 0;

	*by = *bx = -1;
	*best = 0.0f;
	for (int ky = 0; ky < p.kernel; ky++)
		for (int kx = 0; kx < p.kernel; kx++) {
			int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
			if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w)
				continue;
			float v = pixel<T>(x, n, c, iy, ix);
			if (!found || v > *best) {
				*best = v;
				*by = iy;
				*bx = ix;
				found = 1;
			}
		}
}

/* Decomposes element i of (N, C, H, W) view v. */
__device__ __forceinline__ void nchw_of(const struct gpu_view &v, long long i, int *n, int *c,
					int *py, int *px)
{
	*px = (int)(i % v.w);
	i /= v.w;
	*py = (int)(i % v.h);
	i /= v.h;
	*c = (int)(i % v.c);
	*n = (int)(i / v.c);
}

template <typename T>
__global__ void maxpool_fwd_kernel(struct gpu_view x, struct gpu_pool_shape p, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(y)) {
		int n, c, oy, ox, by, bx;
		float best;
		nchw_of(y, i, &n, &c, &oy, &ox);
		window_argmax<T>(x, n, c, oy, ox, p, &by, &bx, &best);
		view_store<T>(y, i, best, 0);
	}
}

/* The outputs whose window contains input row iy: [*lo, *hi]. */
__device__ __forceinline__ void windows_over(int i, int out, struct gpu_pool_shape p, int *lo,
					     int *hi)
{
	int a = i + p.pad - p.kernel + 1;
	*lo = a <= 0 ? 0 : (a + p.stride - 1) / p.stride;
	*hi = (i + p.pad) / p.stride;
	if (*hi > out - 1)
		*hi = out - 1;
}

template <typename T>
__global__ void maxpool_bwd_kernel(struct gpu_view x, struct gpu_view dy, struct gpu_pool_shape p,
				   struct gpu_view dx, int accumulate)
{
	GPU_K_FOR(i, view_elems(dx)) {
		int n, c, iy, ix, y0, y1, x0, x1;
		float sum = 0.0f;
		nchw_of(dx, i, &n, &c, &iy, &ix);
		windows_over(iy, dy.h, p, &y0, &y1);
		windows_over(ix, dy.w, p, &x0, &x1);
		for (int oy = y0; oy <= y1; oy++)
			for (int ox = x0; ox <= x1; ox++) {
				int by, bx;
				float best;
				window_argmax<T>(x, n, c, oy, ox, p, &by, &bx, &best);
				if (by == iy && bx == ix)
					sum += pixel<T>(dy, n, c, oy, ox);
			}
		view_store<T>(dx, i, sum, accumulate);
	}
}

extern "C" cudaError_t gpu_k_maxpool_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					 struct gpu_pool_shape p, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (maxpool_fwd_kernel<T><<<grid_for(view_elems(y)), GPU_K_THREADS, 0, s>>>(x, p, y)));
	return cudaGetLastError();
}

extern "C" cudaError_t gpu_k_maxpool_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					 struct gpu_view dy, struct gpu_pool_shape p,
					 struct gpu_view dx, int accumulate)
{
	if (!dx.data)
		return cudaSuccess;
	GPU_K_DISPATCH(dt, (maxpool_bwd_kernel<T><<<grid_for(view_elems(dx)), GPU_K_THREADS, 0, s>>>(x, dy, p, dx, accumulate)));
	return cudaGetLastError();
}

/* Divisor k*k (count_include_pad, as ref/ and torch's default). */
template <typename T>
__global__ void avgpool_fwd_kernel(struct gpu_view x, struct gpu_pool_shape p, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(y)) {
		int n, c, oy, ox;
		float sum = 0.0f;
		nchw_of(y, i, &n, &c, &oy, &ox);
		for (int ky = 0; ky < p.kernel; ky++)
			for (int kx = 0; kx < p.kernel; kx++) {
				int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
				if (iy >= 0 && iy < x.h && ix >= 0 && ix < x.w)
					sum += pixel<T>(x, n, c, iy, ix);
			}
		view_store<T>(y, i, sum / (float)(p.kernel * p.kernel), 0);
	}
}

template <typename T>
__global__ void avgpool_bwd_kernel(struct gpu_view dy, struct gpu_pool_shape p,
				   struct gpu_view dx, int accumulate)
{
	GPU_K_FOR(i, view_elems(dx)) {
		int n, c, iy, ix, y0, y1, x0, x1;
		float sum = 0.0f;
		nchw_of(dx, i, &n, &c, &iy, &ix);
		windows_over(iy, dy.h, p, &y0, &y1);
		windows_over(ix, dy.w, p, &x0, &x1);
		for (int oy = y0; oy <= y1; oy++)
			for (int ox = x0; ox <= x1; ox++)
				sum += pixel<T>(dy, n, c, oy, ox);
		view_store<T>(dx, i, sum / (float)(p.kernel * p.kernel), accumulate);
	}
}

extern "C" cudaError_t gpu_k_avgpool_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					 struct gpu_pool_shape p, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (avgpool_fwd_kernel<T><<<grid_for(view_elems(y)), GPU_K_THREADS, 0, s>>>(x, p, y)));
	return cudaGetLastError();
}

extern "C" cudaError_t gpu_k_avgpool_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
					 struct gpu_pool_shape p, struct gpu_view dx,
					 int accumulate)
{
	if (!dx.data)
		return cudaSuccess;
	GPU_K_DISPATCH(dt, (avgpool_bwd_kernel<T><<<grid_for(view_elems(dx)), GPU_K_THREADS, 0, s>>>(dy, p, dx, accumulate)));
	return cudaGetLastError();
}

/* One thread per (n, c): the H*W plane summed in order. */
template <typename T>
__global__ void gap_fwd_kernel(struct gpu_view x, struct gpu_view y)
{
	int hw = x.h * x.w;

	GPU_K_FOR(i, (long long)x.n * x.c) {
		int n = (int)(i / x.c), c = (int)(i % x.c);
		float sum = 0.0f;
		for (int j = 0; j < hw; j++)
			sum += pixel<T>(x, n, c, j / x.w, j % x.w);
		view_store<T>(y, i, sum / (float)hw, 0);
	}
}

template <typename T>
__global__ void gap_bwd_kernel(struct gpu_view dy, struct gpu_view dx, int accumulate)
{
	long long hw = (long long)dx.h * dx.w;

	GPU_K_FOR(i, view_elems(dx)) {
		long long nc = i / hw;  /* (n, c) index, the same element of dy */
		view_store<T>(dx, i, view_load<T>(dy, nc) / (float)hw, accumulate);
	}
}

extern "C" cudaError_t gpu_k_gap_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
				     struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (gap_fwd_kernel<T><<<grid_for((long long)x.n * x.c), GPU_K_THREADS, 0, s>>>(x, y)));
	return cudaGetLastError();
}

extern "C" cudaError_t gpu_k_gap_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
				     struct gpu_view dx, int accumulate)
{
	if (!dx.data)
		return cudaSuccess;
	GPU_K_DISPATCH(dt, (gap_bwd_kernel<T><<<grid_for(view_elems(dx)), GPU_K_THREADS, 0, s>>>(dy, dx, accumulate)));
	return cudaGetLastError();
}
