/* gpu_k_pool.cu - the GPU backend's windowed kernels: max and average
 * pooling, global average pooling. Pools use one thread per output
 * (forward) or per input element (backward, gathering every window that
 * contains it). What it does not do: batch norm (gpu_k_bn.cu),
 * convolutions (cuDNN).
 */
#include "backend/gpu/gpu_k_common.cuh"

/* Pixel (n, c, py, px) of v. */
template <typename T>
__device__ __forceinline__ float pixel(const struct gpu_view &v, int n, int c, int py, int px)
{
	return to_f32(((const T *)v.data)[view_at(v, n, c, (long long)py * v.w + px)]);
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

/* Element i of view v in its memory order (view_walk), as (n, c, y, x). */
__device__ __forceinline__ struct view_pos coords_of(const struct gpu_view &v, long long i, int *n,
						     int *c, int *py, int *px)
{
	struct view_pos q = view_walk(v, i);
	*n = q.n;
	*c = q.c;
	*py = (int)(q.p / v.w);
	*px = (int)(q.p - (long long)*py * v.w);
	return q;
}

template <typename T>
__global__ void maxpool_fwd_kernel(struct gpu_view x, struct gpu_pool_shape p, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(y)) {
		int n, c, oy, ox, by, bx;
		float best;
		struct view_pos q = coords_of(y, i, &n, &c, &oy, &ox);
		window_argmax<T>(x, n, c, oy, ox, p, &by, &bx, &best);
		view_store<T>(y, q, best, 0);
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
		struct view_pos q = coords_of(dx, i, &n, &c, &iy, &ix);
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
		view_store<T>(dx, q, sum, accumulate);
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
		struct view_pos q = coords_of(y, i, &n, &c, &oy, &ox);
		for (int ky = 0; ky < p.kernel; ky++)
			for (int kx = 0; kx < p.kernel; kx++) {
				int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
				if (iy >= 0 && iy < x.h && ix >= 0 && ix < x.w)
					sum += pixel<T>(x, n, c, iy, ix);
			}
		view_store<T>(y, q, sum / (float)(p.kernel * p.kernel), 0);
	}
}

template <typename T>
__global__ void avgpool_bwd_kernel(struct gpu_view dy, struct gpu_pool_shape p,
				   struct gpu_view dx, int accumulate)
{
	GPU_K_FOR(i, view_elems(dx)) {
		int n, c, iy, ix, y0, y1, x0, x1;
		float sum = 0.0f;
		struct view_pos q = coords_of(dx, i, &n, &c, &iy, &ix);
		windows_over(iy, dy.h, p, &y0, &y1);
		windows_over(ix, dy.w, p, &x0, &x1);
		for (int oy = y0; oy <= y1; oy++)
			for (int ox = x0; ox <= x1; ox++)
				sum += pixel<T>(dy, n, c, oy, ox);
		view_store<T>(dx, q, sum / (float)(p.kernel * p.kernel), accumulate);
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
		view_store<T>(y, view_pos{ n, c, 0 }, sum / (float)hw, 0);
	}
}

template <typename T>
__global__ void gap_bwd_kernel(struct gpu_view dy, struct gpu_view dx, int accumulate)
{
	long long hw = (long long)dx.h * dx.w;

	GPU_K_FOR(i, view_elems(dx)) {
		struct view_pos q = view_walk(dx, i);
		view_store<T>(dx, q, view_load<T>(dy, view_pos{ q.n, q.c, 0 }) / (float)hw, accumulate);
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
