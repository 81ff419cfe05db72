/* gpu_k_bn.cu - the GPU backend's batch-norm kernels: training forward,
 * evaluation forward and backward, each with an optional fused ReLU.
 * Training splits each channel over blocks of whole images, reduces each
 * part in fp32 in two passes (mean, then squared deviations, as ref/
 * does in double), and combines the parts in a fixed order in a second
 * kernel that also writes the output (no atomics: the same bits every
 * run). Both layouts read memory in order (channels-last: neighbouring
 * threads on neighbouring channels) and give the same bits. What it does
 * not do: pooling (gpu_k_pool.cu), convolutions (cuDNN).
 */
#include "backend/gpu/gpu_k_common.cuh"

/* A channel's N*H*W elements are split into `parts` runs of whole
 * images, each reduced by its own block (block b: channel, or tile of
 * channels, b / parts; part b % parts), so that a layer of few channels
 * still fills the GPU.
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

/* Where a training kernel's thread works. NCHW: a block per (channel,
 * part), thread t its lane t of GPU_K_THREADS. Channels-last (NHWC), where
 * a channel's elements lie a pixel stride apart: a block per (tile of
 * BN_TILE_C neighbouring channels, part), thread t on channel
 * t % BN_TILE_C of the tile, so neighbouring threads read neighbouring
 * memory, playing lanes t / BN_TILE_C, + BN_TILE_ROWS, ... of the NCHW
 * block's. Each lane adds the same elements in the same order in both
 * layouts and each channel's lanes fold in one tree (tile_fold): the two
 * give the same bits. One kernel per pass takes both (cl: the view is
 * channels-last), its shared lanes sized for a tile. */
#define BN_TILE_C 16
#define BN_TILE_ROWS (GPU_K_THREADS / BN_TILE_C)
#define BN_SLOTS(cl) ((cl) ? BN_TILE_C : 1)    /* channels a block sums */

struct bn_place {
	int c, part, first, end;   /* channel, part, its images [first, end) */
	int k;                     /* slot of c in the block's lanes (0: NCHW) */
	int lane, lane_step;       /* lanes lane, + lane_step, ... < GPU_K_THREADS */
	int live;                  /* c < the view's channels */
};

__device__ __forceinline__ struct bn_place place_of(const struct gpu_view &x, int parts, int cl)
{
	struct bn_place q;
	int t = (int)threadIdx.x, group = (int)blockIdx.x / parts;
	q.k = cl ? t % BN_TILE_C : 0;
	q.lane = cl ? t / BN_TILE_C : t;
	q.lane_step = cl ? BN_TILE_ROWS : GPU_K_THREADS;
	q.c = cl ? group * BN_TILE_C + q.k : group;
	q.live = q.c < x.c;
	q.part = (int)blockIdx.x % parts;
	part_images(x.n, parts, q.part, &q.first, &q.end);
	return q;
}

static inline int channels_last(const struct gpu_view &x)
{
	return x.channel_stride < x.pixel_stride;
}

/* Blocks of a training kernel over x. */
static inline unsigned bn_blocks(const struct gpu_view &x, int parts)
{
	unsigned groups = channels_last(x) ? (unsigned)(x.c + BN_TILE_C - 1) / BN_TILE_C : (unsigned)x.c;
	return groups * (unsigned)parts;
}

/* A walk over channel c of images [first, end): elements lane, lane +
 * step, ... in (n, y*w+x) order, with no division per element; none
 * when the channel is not live. */
struct chan_walk {
	int n, end, j, hw, c, step;
};

__device__ __forceinline__ void walk_wrap(struct chan_walk &w)
{
	while (w.j >= w.hw && w.n < w.end) {
		w.j -= w.hw;
		w.n++;
	}
}

__device__ __forceinline__ struct chan_walk walk_lane(const struct gpu_view &v,
						      const struct bn_place &q, int lane, int step)
{
	struct chan_walk w = { q.first, q.live ? q.end : q.first, lane, v.h * v.w, q.c, step };
	walk_wrap(w);
	return w;
}

__device__ __forceinline__ void walk_next(struct chan_walk &w)
{
	w.j += w.step;
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

/* lanes[k*GPU_K_THREADS + l]: lane l of the block's channel slot k, for
 * slots [0, slots). Folds each slot's lanes in block_sum's tree, leaving
 * the sum in lane 0, which every thread may read on return (the lanes
 * are not written again in the kernel). On the emulated device thread 0
 * makes the same additions in the same order after the first barrier,
 * before any other thread resumes from it (as block_sum: GPU_K_EMU_FOLD). */
__device__ void tile_fold(float *lanes, int slots)
{
	__syncthreads();
#ifdef GPU_K_EMU_FOLD
	if (GPU_K_EMU_FOLD) {
		if (threadIdx.x == 0)
			for (int k = 0; k < slots; k++)
				for (int half = GPU_K_THREADS / 2; half > 0; half /= 2)
					for (int t = 0; t < half; t++)
						lanes[k * GPU_K_THREADS + t] +=
							lanes[k * GPU_K_THREADS + t + half];
		return;
	}
#endif
	for (int half = GPU_K_THREADS / 2; half > 0; half /= 2) {
		for (int i = threadIdx.x; i < slots * half; i += GPU_K_THREADS) {
			int k = i / half, t = i - k * half;
			lanes[k * GPU_K_THREADS + t] += lanes[k * GPU_K_THREADS + t + half];
		}
		__syncthreads();
	}
}

/* Part statistics: mean and sum of squared deviations from it. */
template <typename T>
__global__ void bn_stats_kernel(struct gpu_view x, int parts, int cl, float *part)
{
	__shared__ float sums[BN_TILE_C * GPU_K_THREADS], squares[BN_TILE_C * GPU_K_THREADS];
	struct bn_place q = place_of(x, parts, cl);
	float *my_sums = sums + q.k * GPU_K_THREADS, *my_squares = squares + q.k * GPU_K_THREADS;
	float count = (float)((long long)(q.end - q.first) * x.h * x.w);

	for (int l = q.lane; l < GPU_K_THREADS; l += q.lane_step) {
		float sum = 0.0f;
		for (struct chan_walk w = walk_lane(x, q, l, GPU_K_THREADS); w.n < w.end; walk_next(w))
			sum += walk_load<T>(x, w);
		my_sums[l] = sum;
	}
	tile_fold(sums, BN_SLOTS(cl));
	float mean = my_sums[0] / count;
	for (int l = q.lane; l < GPU_K_THREADS; l += q.lane_step) {
		float sq = 0.0f;
		for (struct chan_walk w = walk_lane(x, q, l, GPU_K_THREADS); w.n < w.end; walk_next(w)) {
			float d = walk_load<T>(x, w) - mean;
			sq += d * d;
		}
		my_squares[l] = sq;
	}
	tile_fold(squares, BN_SLOTS(cl));
	if (q.live && q.lane == 0) {
		long long at = 2 * ((long long)q.c * parts + q.part);
		part[at] = mean;
		part[at + 1] = my_squares[0];
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

/* Channels below `known` take their statistics from `stats` (mean and
 * squared deviations per channel, computed by an earlier layer that
 * normalised the same channels this step); the others combine their
 * parts (part channel c - known) and leave theirs in `stats`. */
template <typename T>
__global__ void bn_normalize_kernel(struct gpu_view x, const float *gamma, const float *beta,
				    struct gpu_bn_args a, int parts, int cl, const float *part, int known,
				    float *stats, struct gpu_view y, float *saved_mean,
				    float *saved_invstd, float *running_mean, float *running_var)
{
	struct bn_place q = place_of(x, parts, cl);
	long long count = (long long)x.n * x.h * x.w;
	float mean, sq_total;
	int c = q.c, first = q.part == 0 && q.lane == 0;

	if (!q.live)
		return;
	if (c < known) {
		mean = stats[2 * c];
		sq_total = stats[2 * c + 1];
	} else {
		bn_combine(x, parts, part, c - known, &mean, &sq_total);
		if (first) {
			stats[2 * c] = mean;
			stats[2 * c + 1] = sq_total;
		}
	}
	float invstd = rsqrtf(sq_total / (float)count + a.eps);
	if (first) {
		saved_mean[c] = mean;
		saved_invstd[c] = invstd;
		float unbiased = count > 1 ? sq_total / (float)(count - 1) : sq_total / (float)count;
		running_mean[c] = (1.0f - a.momentum) * running_mean[c] + a.momentum * mean;
		running_var[c] = (1.0f - a.momentum) * running_var[c] + a.momentum * unbiased;
	}
	float scale = gamma[c] * invstd, shift = beta[c] - mean * scale;
	for (struct chan_walk w = walk_lane(x, q, q.lane, q.lane_step); w.n < w.end; walk_next(w)) {
		float v = walk_load<T>(x, w) * scale + shift;
		*walk_at<T>(y, w) = from_f32<T>(a.relu && v < 0.0f ? 0.0f : v);
	}
}

/* Channels [k, C) of x. */
static inline struct gpu_view channels_from(struct gpu_view x, int k, enum gpu_dtype dt)
{
	x.data = (char *)x.data + (size_t)k * (size_t)x.channel_stride * (dt == GPU_F32 ? 4 : 2);
	x.c -= k;
	return x;
}

extern "C" cudaError_t gpu_k_bn_fwd_train(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					  const float *gamma, const float *beta,
					  struct gpu_bn_args a, struct gpu_view y, float *saved_mean,
					  float *saved_invstd, float *running_mean,
					  float *running_var, float *stats, int known, float *part,
					  int max_parts)
{
	int parts = bn_parts(x, max_parts);

	if (known < x.c) {
		struct gpu_view fresh = channels_from(x, known, dt);
		GPU_K_DISPATCH(dt, (bn_stats_kernel<T><<<bn_blocks(fresh, parts), GPU_K_THREADS, 0, s>>>(fresh, parts, channels_last(fresh), part)));
	}
	GPU_K_DISPATCH(dt, (bn_normalize_kernel<T><<<bn_blocks(x, parts), GPU_K_THREADS, 0, s>>>(x, gamma, beta, a, parts, channels_last(x), part, known, stats, y, saved_mean, saved_invstd, running_mean, running_var)));
	return cudaGetLastError();
}

/* y = x normalised by a per-channel mean and a second statistic: the
 * running variance (evaluation: 1/std computed here) or a training
 * forward's saved 1/std (rebuilding its output): the forward's expression. */
template <typename T>
__global__ void bn_apply_kernel(struct gpu_view x, const float *gamma, const float *beta,
				const float *mean, const float *second, int second_is_var,
				struct gpu_bn_args a, struct gpu_view y)
{
	GPU_K_FOR(i, view_elems(x)) {
		struct view_pos q = view_walk(x, i);
		int c = q.c;
		float invstd = second_is_var ? rsqrtf(second[c] + a.eps) : second[c];
		float scale = gamma[c] * invstd, shift = beta[c] - mean[c] * scale;
		float v = view_load<T>(x, q) * scale + shift;
		view_store<T>(y, q, a.relu && v < 0.0f ? 0.0f : v, 0);
	}
}

extern "C" cudaError_t gpu_k_bn_fwd_eval(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
					 const float *gamma, const float *beta,
					 const float *running_mean, const float *running_var,
					 struct gpu_bn_args a, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (bn_apply_kernel<T><<<grid_for(view_elems(x)), GPU_K_THREADS, 0, s>>>(x, gamma, beta, running_mean, running_var, 1, a, y)));
	return cudaGetLastError();
}

extern "C" cudaError_t gpu_k_bn_apply(cudaStream_t s, enum gpu_dtype dt, struct gpu_view x,
				      const float *gamma, const float *beta,
				      const float *saved_mean, const float *saved_invstd,
				      struct gpu_bn_args a, struct gpu_view y)
{
	GPU_K_DISPATCH(dt, (bn_apply_kernel<T><<<grid_for(view_elems(x)), GPU_K_THREADS, 0, s>>>(x, gamma, beta, saved_mean, saved_invstd, 0, a, y)));
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
				    int parts, int cl, float *part)
{
	__shared__ float lanes_g[BN_TILE_C * GPU_K_THREADS], lanes_gx[BN_TILE_C * GPU_K_THREADS];
	struct bn_place q = place_of(x, parts, cl);
	float *mine_g = lanes_g + q.k * GPU_K_THREADS, *mine_gx = lanes_gx + q.k * GPU_K_THREADS;
	float mean = q.live ? saved_mean[q.c] : 0.0f, invstd = q.live ? saved_invstd[q.c] : 0.0f;

	for (int l = q.lane; l < GPU_K_THREADS; l += q.lane_step) {
		float sum_g = 0.0f, sum_gx = 0.0f;
		for (struct chan_walk w = walk_lane(x, q, l, GPU_K_THREADS); w.n < w.end; walk_next(w)) {
			float g = bn_grad_out<T>(y, dy, relu, w);
			sum_g += g;
			sum_gx += g * (walk_load<T>(x, w) - mean) * invstd;
		}
		mine_g[l] = sum_g;
		mine_gx[l] = sum_gx;
	}
	tile_fold(lanes_g, BN_SLOTS(cl));
	tile_fold(lanes_gx, BN_SLOTS(cl));
	if (q.live && q.lane == 0) {
		long long at = 2 * ((long long)q.c * parts + q.part);
		part[at] = mine_g[0];
		part[at + 1] = mine_gx[0];
	}
}

/* dx = gamma*invstd * (g - mean(g) - xhat*mean(g*xhat)), as ref/; the
 * channel's sums added up in part order. */
template <typename T>
__global__ void bn_bwd_kernel(struct gpu_view x, struct gpu_view y, struct gpu_view dy,
			      const float *gamma, int relu, const float *saved_mean,
			      const float *saved_invstd, int parts, int cl, const float *part,
			      struct gpu_view dx, int accumulate, float *dgamma, float *dbeta)
{
	struct bn_place q = place_of(x, parts, cl);
	long long count = (long long)x.n * x.h * x.w;
	int c = q.c;

	if (!q.live)
		return;
	const float *pc = part + 2 * (long long)c * parts;
	float mean = saved_mean[c], invstd = saved_invstd[c], sum_g = pc[0], sum_gx = pc[1];
	for (int p = 1; p < parts; p++) {
		sum_g += pc[2 * p];
		sum_gx += pc[2 * p + 1];
	}
	if (q.part == 0 && q.lane == 0) {
		dgamma[c] = sum_gx;
		dbeta[c] = sum_g;
	}
	if (!dx.data)
		return;
	float k = gamma[c] * invstd, mean_g = sum_g / (float)count, mean_gx = sum_gx / (float)count;
	for (struct chan_walk w = walk_lane(x, q, q.lane, q.lane_step); w.n < w.end; walk_next(w)) {
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
	int parts = bn_parts(x, max_parts), cl = channels_last(x);

	GPU_K_DISPATCH(dt, (bn_grad_sums_kernel<T><<<bn_blocks(x, parts), GPU_K_THREADS, 0, s>>>(x, y, dy, relu, saved_mean, saved_invstd, parts, cl, part)));
	GPU_K_DISPATCH(dt, (bn_bwd_kernel<T><<<bn_blocks(x, parts), GPU_K_THREADS, 0, s>>>(x, y, dy, gamma, relu, saved_mean, saved_invstd, parts, cl, part, dx, accumulate, dgamma, dbeta)));
	return cudaGetLastError();
}
