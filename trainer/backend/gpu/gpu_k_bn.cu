/* gpu_k_bn.cu - the GPU backend's batch-norm kernels: training forward,
 * evaluation forward and backward, each with an optional fused ReLU.
 * Training splits each channel over blocks of whole images, reduces each
 * part in fp32 in two passes (mean, then squared deviations, as ref/
 * does in double), and combines the parts in a fixed order in a second
 * kernel that also writes the output (no atomics: the same bits every
 * run). What it does not do: pooling (gpu_k_pool.cu), convolutions
 * (cuDNN).
 */
#include "backend/gpu/gpu_k_common.cuh"

/* A channel's N*H*W elements are split into `parts` runs of whole
 * images, each reduced by its own block (block b: channel b / parts,
 * part b % parts), so that a layer of few channels still fills the GPU.
 * A part is at least BN_PART_ELEMS elements (one part for small layers:
 * then every sum is the one block's, as before parts existed). */
#define BN_PART_ELEMS 4096

static inline int bn_parts(const struct gpu_view &x, int max_parts)
{
	long long p = (long long)x.n * x.h * x.w / BN_PART_ELEMS;
	if (p > max_parts)
		p = max_parts;
	if (p > x.n)
		p = x.n;
	return p < 1 ? 1 : (int)p;
}

/* Images [first, end) of part p of parts. */
__device__ __forceinline__ void part_images(int n, int parts, int p, int *first, int *end)
{
	*first = (int)((long long)n * p / parts);
	*end = (int)((long long)n * (p + 1) / parts);
}

/* This thread's walk over channel c of images [first, end): elements
 * threadIdx.x, + blockDim.x, ... in (n, y*w+x) order, with no division
 * per element. */
struct chan_walk {
	int n, end, j, hw, c;
};

__device__ __forceinline__ void walk_wrap(struct chan_walk &w)
{
	while (w.j >= w.hw && w.n < w.end) {
		w.j -= w.hw;
		w.n++;
	}
}

__device__ __forceinline__ struct chan_walk walk_start(const struct gpu_view &v, int c, int first,
						       int end)
{
	struct chan_walk w = { first, end, (int)threadIdx.x, v.h * v.w, c };
	walk_wrap(w);
	return w;
}

__device__ __forceinline__ void walk_next(struct chan_walk &w)
{
	w.j += blockDim.x;
	walk_wrap(w);
}

/* The walk's element in view v (views share N, C, H, W, not strides). */
template <typename T>
__device__ __forceinline__ T *walk_at(const struct gpu_view &v, const struct chan_walk &w)
{
	return (T *)v.data + view_at(v, w.n, w.c, w.j);
}

template <typename T>
__device__ __forceinline__ float walk_load(const struct gpu_view &v, const struct chan_walk &w)
{
	return to_f32(*walk_at<T>(v, w));
}

/* Part statistics: mean and sum of squared deviations from it. */
template <typename T>
__global__ void bn_stats_kernel(struct gpu_view x, int parts, float *part)
{
	__shared__ float shared[GPU_K_THREADS];
	int c = blockIdx.x / parts, p = blockIdx.x % parts, first, end;

	part_images(x.n, parts, p, &first, &end);
	float count = (float)((long long)(end - first) * x.h * x.w), sum = 0.0f, sq = 0.0f;
	for (struct chan_walk w = walk_start(x, c, first, end); w.n < end; walk_next(w))
		sum += walk_load<T>(x, w);
	float mean = block_sum(sum, shared) / count;
	for (struct chan_walk w = walk_start(x, c, first, end); w.n < end; walk_next(w)) {
		float d = walk_load<T>(x, w) - mean;
		sq += d * d;
	}
	sq = block_sum(sq, shared);
	if (threadIdx.x == 0) {
		part[2 * blockIdx.x] = mean;
		part[2 * blockIdx.x + 1] = sq;
	}
}

/* Channel c's mean and squared deviations from its parts, in part order
 * (Chan et al.'s pairwise update; one part is taken as it is). */
__device__ __forceinline__ void bn_combine(const struct gpu_view &x, int parts, const float *part,
					   int c, float *mean, float *sq)
{
	const float *pc = part + 2 * (long long)c * parts;
	if (parts == 1) {
		*mean = pc[0];
		*sq = pc[1];
		return;
	}
	float hw = (float)x.h * x.w, total = (float)x.n * hw, m = 0.0f, s = 0.0f;
	for (int q = 0; q < parts; q++) {
		int first, end;
		part_images(x.n, parts, q, &first, &end);
		m += (float)(end - first) * hw * pc[2 * q];
	}
	m /= total;
	for (int q = 0; q < parts; q++) {
		int first, end;
		part_images(x.n, parts, q, &first, &end);
		float d = pc[2 * q] - m;
		s += pc[2 * q + 1] + (float)(end - first) * hw * d * d;
	}
	*mean = m;
	*sq = s;
}

template <typename T>
__global__ void bn_normalize_kernel(struct gpu_view x, const float *gamma, const float *beta,
				    struct gpu_bn_args a, int parts, const float *part,
				    struct gpu_view y, float *saved_mean, float *saved_invstd,
				    float *running_mean, float *running_var)
{
	int c = blockIdx.x / parts, p = blockIdx.x % parts, first, end;
	long long count = (long long)x.n * x.h * x.w;
	float mean, sq_total;

	bn_combine(x, parts, part, c, &mean, &sq_total);
	float invstd = rsqrtf(sq_total / (float)count + a.eps);
	if (p == 0 && threadIdx.x == 0) {
		saved_mean[c] = mean;
		saved_invstd[c] = invstd;
		float unbiased = count > 1 ? sq_total / (float)(count - 1) : sq_total / (float)count;
		running_mean[c] = (1.0f - a.momentum) * running_mean[c] + a.momentum * mean;
		running_var[c] = (1.0f - a.momentum) * running_var[c] + a.momentum * unbiased;
	}
	float scale = gamma[c] * invstd, shift = beta[c] - mean * scale;
	part_images(x.n, parts, p, &first, &end);
	for (struct chan_walk w = walk_start(x, c, first, end); w.n < end; walk_next(w)) {
		float v = walk_load<T>(x, w) * scale + shift;
		*walk_at<T>(y, w) = from_f32<T>(a.relu && v < 0.0f ? 0.0f : v);
	}
}

extern "C" cudaError_t gpu_k_bn_fwd_train(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					  const float *gamma, const float *beta,
					  struct gpu_bn_args a, struct gpu_view y, float *saved_mean,
					  float *saved_invstd, float *running_mean,
					  float *running_var, float *part, int max_parts)
{
	int parts = bn_parts(x, max_parts);
	unsigned blocks = (unsigned)x.c * (unsigned)parts;

	GPU_K_DISPATCH(dt, (bn_stats_kernel<T><<<blocks, GPU_K_THREADS, 0, s>>>(x, parts, part)));
	GPU_K_DISPATCH(dt, (bn_normalize_kernel<T><<<blocks, GPU_K_THREADS, 0, s>>>(x, gamma, beta, a, parts, part, y, saved_mean, saved_invstd, running_mean, running_var)));
	return cudaGetLastError();
}

template <typename T>
__global__ void bn_fwd_eval_kernel(struct gpu_view x, const float *gamma, const float *beta,
				   const float *running_mean, const float *running_var,
				   struct gpu_bn_args a, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(x)) {
		struct view_pos q = view_walk(x, i);
		int c = q.c;
		float invstd = rsqrtf(running_var[c] + a.eps);
		float scale = gamma[c] * invstd, shift = beta[c] - running_mean[c] * scale;
		float v = view_load<T>(x, q) * scale + shift;
		view_store<T>(y, q, a.relu && v < 0.0f ? 0.0f : v, 0);
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
					     int relu, const struct chan_walk &w)
{
	float g = walk_load<T>(dy, w);
	return relu && walk_load<T>(y, w) <= 0.0f ? 0.0f : g;
}

/* Part sums of g and g*xhat. */
template <typename T>
__global__ void bn_grad_sums_kernel(struct gpu_view x, struct gpu_view y, struct gpu_view dy,
				    int relu, const float *saved_mean, const float *saved_invstd,
				    int parts, float *part)
{
	__shared__ float shared[GPU_K_THREADS];
	int c = blockIdx.x / parts, p = blockIdx.x % parts, first, end;
	float mean = saved_mean[c], invstd = saved_invstd[c], sum_g = 0.0f, sum_gx = 0.0f;

	part_images(x.n, parts, p, &first, &end);
	for (struct chan_walk w = walk_start(x, c, first, end); w.n < end; walk_next(w)) {
		float g = bn_grad_out<T>(y, dy, relu, w);
		sum_g += g;
		sum_gx += g * (walk_load<T>(x, w) - mean) * invstd;
	}
	sum_g = block_sum(sum_g, shared);
	sum_gx = block_sum(sum_gx, shared);
	if (threadIdx.x == 0) {
		part[2 * blockIdx.x] = sum_g;
		part[2 * blockIdx.x + 1] = sum_gx;
	}
}

/* dx = gamma*invstd * (g - mean(g) - xhat*mean(g*xhat)), as ref/; the
 * channel's sums added up in part order. */
template <typename T>
__global__ void bn_bwd_kernel(struct gpu_view x, struct gpu_view y, struct gpu_view dy,
			      const float *gamma, int relu, const float *saved_mean,
			      const float *saved_invstd, int parts, const float *part,
			      struct gpu_view dx, int accumulate, float *dgamma, float *dbeta)
{
	int c = blockIdx.x / parts, p = blockIdx.x % parts, first, end;
	long long count = (long long)x.n * x.h * x.w;
	const float *pc = part + 2 * (long long)c * parts;
	float mean = saved_mean[c], invstd = saved_invstd[c], sum_g = pc[0], sum_gx = pc[1];

	for (int q = 1; q < parts; q++) {
		sum_g += pc[2 * q];
		sum_gx += pc[2 * q + 1];
	}
	if (p == 0 && threadIdx.x == 0) {
		dgamma[c] = sum_gx;
		dbeta[c] = sum_g;
	}
	if (!dx.data)
		return;
	float k = gamma[c] * invstd, mean_g = sum_g / (float)count, mean_gx = sum_gx / (float)count;
	part_images(x.n, parts, p, &first, &end);
	for (struct chan_walk w = walk_start(x, c, first, end); w.n < end; walk_next(w)) {
		float xhat = (walk_load<T>(x, w) - mean) * invstd;
		float v = k * (bn_grad_out<T>(y, dy, relu, w) - mean_g - xhat * mean_gx);
		T *at = walk_at<T>(dx, w);
		*at = from_f32<T>(accumulate ? to_f32(*at) + v : v);
	}
}

extern "C" cudaError_t gpu_k_bn_bwd(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
				    struct gpu_view y, struct gpu_view dy, const float *gamma,
				    int relu, const float *saved_mean, const float *saved_invstd,
				    struct gpu_view dx, int accumulate, float *dgamma, float *dbeta,
				    float *part, int max_parts)
{
	int parts = bn_parts(x, max_parts);
	unsigned blocks = (unsigned)x.c * (unsigned)parts;

	GPU_K_DISPATCH(dt, (bn_grad_sums_kernel<T><<<blocks, GPU_K_THREADS, 0, s>>>(x, y, dy, relu, saved_mean, saved_invstd, parts, part)));
	GPU_K_DISPATCH(dt, (bn_bwd_kernel<T><<<blocks, GPU_K_THREADS, 0, s>>>(x, y, dy, gamma, relu, saved_mean, saved_invstd, parts, part, dx, accumulate, dgamma, dbeta)));
	return cudaGetLastError();
}
