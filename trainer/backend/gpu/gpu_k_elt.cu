/* gpu_k_elt.cu - element-wise kernels of the GPU backend: the input step
 * (uint8 crop/flip/normalise, P3), type conversions and loss (un)scaling,
 * conv filters between KCRS and KRSC,
 * ReLU, ADD, linear bias, and the Adam/SGD updates. One thread per output
 * element, grid-stride loops. What it does not do: reductions over
 * channels (gpu_k_bn.cu) or windows (gpu_k_pool.cu).
 */
#include "backend/gpu/gpu_k_common.cuh"

template <typename T>
__global__ void input_images_kernel(const uint8_t *src, struct gpu_input_geometry g,
				    const struct gpu_crop *crops, struct gpu_norm_consts k,
				    struct gpu_view dst)
{
	long long plane = (long long)g.out_size * g.out_size;

	GPU_K_FOR(i, (long long)g.count * plane) {
		int n = (int)(i / plane), p = (int)(i - n * plane);
		int oy = p / g.out_size, ox = p - oy * g.out_size;
		struct gpu_crop c = crops ? crops[n] : gpu_crop{ 0, 0, 0 };
		int sx = c.x0 + (c.flip ? g.out_size - 1 - ox : ox), sy = c.y0 + oy;
		float v = src[(size_t)n * g.src_image_bytes + (size_t)sy * g.src_size + sx] / 255.0f;
		for (int ch = 0; ch < 3; ch++)
			((T *)dst.data)[view_at(dst, n, ch, p)] = from_f32<T>((v - k.mean[ch]) / k.std[ch]);
	}
}

extern "C" cudaError_t gpu_k_input_images(cudaStream_t s, enum gpu_dtype dt, const uint8_t *src,
					  const struct gpu_input_geometry *g,
					  const struct gpu_crop *crops, struct gpu_norm_consts k,
					  struct gpu_view dst)
{
	GPU_K_DISPATCH(dt, (input_images_kernel<T><<<g->blocks, g->threads, 0, s>>>(src, *g, crops, k, dst)));
	return cudaGetLastError();
}

template <typename T>
__global__ void to_view_kernel(const float *src, float scale, struct gpu_view dst, int accumulate)
{
	GPU_K_FOR(i, view_elems(dst))
		view_store<T>(dst, view_nchw(dst, i), scale * src[i], accumulate);
}

extern "C" cudaError_t gpu_k_to_view(cudaStream_t s, enum gpu_dtype dt, const float *src,
				     float scale, struct gpu_view dst, int accumulate)
{
	GPU_K_DISPATCH(dt, (to_view_kernel<T><<<grid_for(view_elems(dst)), GPU_K_THREADS, 0, s>>>(src, scale, dst, accumulate)));
	return cudaGetLastError();
}

template <typename T>
__global__ void from_view_kernel(struct gpu_view src, float scale, float *dst)
{
	GPU_K_FOR(i, view_elems(src))
		dst[i] = scale * view_load<T>(src, view_nchw(src, i));
}

extern "C" cudaError_t gpu_k_from_view(cudaStream_t s, enum gpu_dtype dt, struct gpu_view src,
				       float scale, float *dst)
{
	GPU_K_DISPATCH(dt, (from_view_kernel<T><<<grid_for(view_elems(src)), GPU_K_THREADS, 0, s>>>(src, scale, dst)));
	return cudaGetLastError();
}

template <typename T>
__global__ void cast_kernel(const float *src, T *dst, long long count)
{
	GPU_K_FOR(i, count)
		dst[i] = from_f32<T>(src[i]);
}

extern "C" cudaError_t gpu_k_cast(cudaStream_t s, enum gpu_dtype dt, const float *src,
				  void *dst, size_t count)
{
	GPU_K_DISPATCH(dt, (cast_kernel<T><<<grid_for((long long)count), GPU_K_THREADS, 0, s>>>(src, (T *)dst, (long long)count)));
	return cudaGetLastError();
}

template <typename T>
__global__ void widen_kernel(const T *src, float scale, float *dst, long long count)
{
	GPU_K_FOR(i, count)
		dst[i] = scale * to_f32(src[i]);
}

extern "C" cudaError_t gpu_k_widen(cudaStream_t s, enum gpu_dtype dt, const void *src,
				   float scale, float *dst, size_t count)
{
	GPU_K_DISPATCH(dt, (widen_kernel<T><<<grid_for((long long)count), GPU_K_THREADS, 0, s>>>((const T *)src, scale, dst, (long long)count)));
	return cudaGetLastError();
}

/* One thread per dst element, gathering from src. */
__global__ void filter_layout_kernel(const float *src, float *dst, int k, int c, int rs,
				     int to_krsc)
{
	GPU_K_FOR(i, (long long)k * c * rs) {
		long long kk = i / ((long long)c * rs), r = i - kk * c * rs, cc, t;
		if (to_krsc) {         /* dst (kk, t, cc) */
			t = r / c;
			cc = r - t * c;
		} else {               /* dst (kk, cc, t) */
			cc = r / rs;
			t = r - cc * rs;
		}
		dst[i] = to_krsc ? src[(kk * c + cc) * rs + t] : src[(kk * rs + t) * c + cc];
	}
}

extern "C" cudaError_t gpu_k_filter_layout(cudaStream_t s, const float *src, float *dst, int k,
					   int c, int rs, int to_krsc)
{
	filter_layout_kernel<<<grid_for((long long)k * c * rs), GPU_K_THREADS, 0, s>>>(src, dst, k, c, rs, to_krsc);
	gpu_launch_note(GPU_LAUNCH_KERNEL);
	return cudaGetLastError();
}

__global__ void unscale_check_kernel(float *g, long long count, float scale, int *found_inf)
{
	GPU_K_FOR(i, count) {
		float v = g[i] * scale;
		g[i] = v;
		if (!isfinite(v))
			*found_inf = 1;  /* benign race: every writer stores 1 */
	}
}

extern "C" cudaError_t gpu_k_unscale_check(cudaStream_t s, float *g, size_t count, float scale,
					   int *found_inf)
{
	unscale_check_kernel<<<grid_for((long long)count), GPU_K_THREADS, 0, s>>>(g, (long long)count, scale, found_inf);
	gpu_launch_note(GPU_LAUNCH_KERNEL);
	return cudaGetLastError();
}

template <typename T>
__global__ void relu_fwd_kernel(struct gpu_view x, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(y)) {
		struct view_pos q = view_walk(y, i);
		float v = view_load<T>(x, q);
		view_store<T>(y, q, v < 0.0f ? 0.0f : v, 0);
	}
}

extern "C" cudaError_t gpu_k_relu_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
				      struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (relu_fwd_kernel<T><<<grid_for(view_elems(y)), GPU_K_THREADS, 0, s>>>(x, y)));
	return cudaGetLastError();
}

/* dx (=/+=) dy where y > 0, as torch's threshold_backward. */
template <typename T>
__global__ void relu_bwd_kernel(struct gpu_view y, struct gpu_view dy, struct gpu_view dx,
				int accumulate)
{
	GPU_K_FOR(i, view_elems(dx)) {
		struct view_pos q = view_walk(dx, i);
		float g = view_load<T>(y, q) > 0.0f ? view_load<T>(dy, q) : 0.0f;
		view_store<T>(dx, q, g, accumulate);
	}
}

extern "C" cudaError_t gpu_k_relu_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
				      struct gpu_view dy, struct gpu_view dx, int accumulate)
{
	if (!dx.data)
		return cudaSuccess;
	GPU_K_DISPATCH(dt, (relu_bwd_kernel<T><<<grid_for(view_elems(dx)), GPU_K_THREADS, 0, s>>>(y, dy, dx, accumulate)));
	return cudaGetLastError();
}

template <typename T>
__global__ void add_fwd_kernel(struct gpu_view a, struct gpu_view b, int relu, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(y)) {
		struct view_pos q = view_walk(y, i);
		float v = view_load<T>(a, q) + view_load<T>(b, q);
		view_store<T>(y, q, relu && v < 0.0f ? 0.0f : v, 0);
	}
}

extern "C" cudaError_t gpu_k_add_fwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view a,
				     struct gpu_view b, int relu, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (add_fwd_kernel<T><<<grid_for(view_elems(y)), GPU_K_THREADS, 0, s>>>(a, b, relu, y)));
	return cudaGetLastError();
}

template <typename T>
__global__ void add_bwd_kernel(struct gpu_view y, struct gpu_view dy, int relu,
			       struct gpu_view da, int acc_a, struct gpu_view db, int acc_b)
{
	GPU_K_FOR(i, view_elems(dy)) {
		struct view_pos q = view_walk(dy, i);
		float g = view_load<T>(dy, q);
		if (relu && view_load<T>(y, q) <= 0.0f)
			g = 0.0f;
		if (da.data)
			view_store<T>(da, q, g, acc_a);
		if (db.data)
			view_store<T>(db, q, g, acc_b);
	}
}

extern "C" cudaError_t gpu_k_add_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
				     struct gpu_view dy, int relu, struct gpu_view da,
				     int accumulate_a, struct gpu_view db, int accumulate_b)
{
	if (!da.data && !db.data)
		return cudaSuccess;
	GPU_K_DISPATCH(dt, (add_bwd_kernel<T><<<grid_for(view_elems(dy)), GPU_K_THREADS, 0, s>>>(y, dy, relu, da, accumulate_a, db, accumulate_b)));
	return cudaGetLastError();
}

/* y: (N, C, H, W) view += bias[c]. */
template <typename T>
__global__ void bias_add_kernel(struct gpu_view y, const float *bias)
{
	GPU_K_FOR(i, view_elems(y)) {
		struct view_pos q = view_walk(y, i);
		view_store<T>(y, q, bias[q.c], 1);
	}
}

extern "C" cudaError_t gpu_k_bias_add(cudaStream_t s, enum gpu_dtype dt, struct gpu_view y,
				      const float *bias)
{
	GPU_K_DISPATCH(dt, (bias_add_kernel<T><<<grid_for(view_elems(y)), GPU_K_THREADS, 0, s>>>(y, bias)));
	return cudaGetLastError();
}

/* One thread per channel: images, then pixels, summed in order. */
template <typename T>
__global__ void bias_grad_kernel(struct gpu_view dy, float *db)
{
	long long hw = (long long)dy.h * dy.w;

	GPU_K_FOR(c, dy.c) {
		float sum = 0.0f;
		for (int n = 0; n < dy.n; n++)
			for (long long p = 0; p < hw; p++)
				sum += view_load<T>(dy, view_pos{ n, (int)c, p });
		db[c] = sum;
	}
}

extern "C" cudaError_t gpu_k_bias_grad(cudaStream_t s, enum gpu_dtype dt, struct gpu_view dy,
				       float *db)
{
	GPU_K_DISPATCH(dt, (bias_grad_kernel<T><<<grid_for(dy.c), GPU_K_THREADS, 0, s>>>(dy, db)));
	return cudaGetLastError();
}

/* As trainer/train/optim.c: p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps),
 * values = { lr/bc1, sqrt(bc2) } (gpu_adam_values). */
__global__ void adam_kernel(float *p, const float *g, float *m, float *v, long long count,
			    struct gpu_adam_args a, const float *values)
{
	float step = values[0], sqrt_bc2 = values[1];

	GPU_K_FOR(i, count) {
		float grad = g[i] + a.weight_decay * p[i];
		m[i] = a.beta1 * m[i] + (1.0f - a.beta1) * grad;
		v[i] = a.beta2 * v[i] + (1.0f - a.beta2) * grad * grad;
		p[i] -= step * m[i] / (sqrtf(v[i]) / sqrt_bc2 + a.eps);
	}
}

extern "C" cudaError_t gpu_k_adam(cudaStream_t s, float *param, const float *grad, float *m,
				  float *v, size_t count, struct gpu_adam_args a,
				  const float *values)
{
	if (!values)
		return cudaErrorInvalidValue;
	adam_kernel<<<grid_for((long long)count), GPU_K_THREADS, 0, s>>>(param, grad, m, v, (long long)count, a, values);
	gpu_launch_note(GPU_LAUNCH_KERNEL);
	return cudaGetLastError();
}

/* torch.optim.SGD: the first step sets buf = g (no dampening);
 * values = { lr, first step } (gpu_sgd_values). */
__global__ void sgd_kernel(float *p, const float *g, float *buf, long long count,
			   float momentum, float weight_decay, const float *values)
{
	float lr = values[0];
	int first_step = values[1] != 0.0f;

	GPU_K_FOR(i, count) {
		float grad = g[i] + weight_decay * p[i];
		if (momentum != 0.0f) {
			buf[i] = first_step ? grad : momentum * buf[i] + grad;
			grad = buf[i];
		}
		p[i] -= lr * grad;
	}
}

extern "C" cudaError_t gpu_k_sgd(cudaStream_t s, float *param, const float *grad,
				 float *momentum_buf, size_t count, float momentum,
				 float weight_decay, const float *values)
{
	if ((momentum != 0.0f && !momentum_buf) || !values)
		return cudaErrorInvalidValue;
	sgd_kernel<<<grid_for((long long)count), GPU_K_THREADS, 0, s>>>(param, grad, momentum_buf, (long long)count, momentum, weight_decay, values);
	gpu_launch_note(GPU_LAUNCH_KERNEL);
	return cudaGetLastError();
}
