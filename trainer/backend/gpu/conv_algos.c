/* backend/gpu/conv_algos.c - the one place that decides which cuDNN
 * algorithm each convolution runs (--conv-algorithms; README "Conv
 * algorithms"). At create, at the largest batch, `timed` (the default)
 * and `timed-any` take each shape's fastest algorithm as cuDNN's Find
 * calls time it (PyTorch's cudnn.benchmark), measured by rank 0 only,
 * read from the per-user cache when it holds the shape (gpu_algo_file.h)
 * and written back there, and sent to every other rank (backend_share);
 * `heuristic`, and every later batch size (a last, smaller batch), take
 * the first algorithm of cuDNN's heuristics (no timing, no allocation).
 * Every choice works, fits the workspace budget, keeps the precision's
 * math (fp32: FMA or default-rated only, run with FMA math) and, unless
 * `timed-any`, is deterministic (CUDNN_DETERMINISTIC), so a resumed run
 * computes the same bits. Chosen once per key and kept in b->algos.
 * What it does not do: the descriptors (conv.c) or the file's format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_algo_file.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

static struct gpu_conv_key key_of(const struct backend *b, const struct model_layer *ml,
				  enum gpu_conv_dir dir, int n)
{
	return (struct gpu_conv_key){
		.dir = dir, .dtype = b->opt.precision, .math = b->conv_math, .layout = gpu_nhwc(b),
		.any = b->opt.conv_algorithms == CONV_ALGOS_TIMED_ANY, .n = n,
		.c = ml->in.channels, .h = ml->in_h, .w = ml->in_w, .k = ml->out.channels,
		.r = ml->kernel, .stride = ml->stride, .pad = ml->pad,
		.x_image_stride = gpu_image_stride(b, ml->in.tensor),
		.y_image_stride = gpu_image_stride(b, ml->out.tensor), .budget = (int64_t)b->budget,
	};
}

/* fp32 must not silently become TF32: only algorithms rated for FMA or
 * default math, run with FMA math (math_for). tf32 takes any and runs it
 * with CUDNN_TENSOR_OP_MATH; fp16/bf16 run with the math they were rated for. */
static int math_allowed(const struct backend *b, int math)
{
	return b->conv_math != CUDNN_FMA_MATH || math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
}

static int math_for(const struct backend *b, int rated)
{
	return b->dt == GPU_F32 ? (int)b->conv_math : rated;
}

static int usable(const struct backend *b, cudnnStatus_t status, size_t memory, int math,
		  cudnnDeterminism_t det)
{
	return status == CUDNN_STATUS_SUCCESS && memory <= b->workspace_limit &&
	       math_allowed(b, math) &&
	       (det == CUDNN_DETERMINISTIC || b->opt.conv_algorithms == CONV_ALGOS_TIMED_ANY);
}

/* Heuristics: the first usable result; timed: the usable one of least time. */
#define PICK(perf, returned, timed, out) do { \
	float best_ = 0; \
	for (int i_ = 0; i_ < (returned); i_++) { \
		if (!usable(b, (perf)[i_].status, (perf)[i_].memory, (int)(perf)[i_].mathType, \
			    (perf)[i_].determinism) || \
		    ((out)->algo >= 0 && (!(timed) || (perf)[i_].time >= best_))) \
			continue; \
		best_ = (perf)[i_].time; \
		(out)->algo = (int)(perf)[i_].algo; \
		(out)->math_type = math_for(b, (int)(perf)[i_].mathType); \
		(out)->workspace_bytes = (perf)[i_].memory; \
	} } while (0)

static int ask_fwd(struct backend *b, struct gpu_conv_state *c, int timed, struct gpu_algo_choice *out,
		   struct trainer_error *err)
{
	cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	int returned = 0;

	if (timed)
		GPU_CUDNN_FIND(cudnnFindConvolutionForwardAlgorithm(b->cudnn, c->x, c->w, c->conv, c->y,
			CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
	else
		GPU_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(b->cudnn, c->x, c->w, c->conv, c->y,
			CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
	PICK(perf, returned, timed, out);
	return 0;
}

static int ask_bwd_data(struct backend *b, struct gpu_conv_state *c, int timed,
			struct gpu_algo_choice *out, struct trainer_error *err)
{
	cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
	int returned = 0;

	if (timed)
		GPU_CUDNN_FIND(cudnnFindConvolutionBackwardDataAlgorithm(b->cudnn, c->w, c->y, c->conv,
			c->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf));
	else
		GPU_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(b->cudnn, c->w, c->y, c->conv,
			c->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf));
	PICK(perf, returned, timed, out);
	return 0;
}

static int ask_bwd_filter(struct backend *b, struct gpu_conv_state *c, int timed,
			  struct gpu_algo_choice *out, struct trainer_error *err)
{
	cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
	int returned = 0;

	if (timed)
		GPU_CUDNN_FIND(cudnnFindConvolutionBackwardFilterAlgorithm(b->cudnn, c->x, c->y,
			c->conv, c->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf));
	else
		GPU_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(b->cudnn, c->x, c->y, c->conv,
			c->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf));
	PICK(perf, returned, timed, out);
	return 0;
}

/* A choice from the cache file, if it holds one this run may use. */
static int from_file(struct backend *b, const struct gpu_conv_key *key, struct gpu_algo_choice *out)
{
	const struct gpu_algo_choice *f = b->algo_file ? gpu_algo_cache_find(b->algo_file, key) : NULL;

	if (!f || f->workspace_bytes > b->workspace_limit || !math_allowed(b, f->math_type))
		return 0;
	*out = *f;
	return 1;
}

int gpu_conv_choose(struct backend *b, struct gpu_layer *l, enum gpu_conv_dir dir, int n,
		    struct gpu_algo_choice *out, struct trainer_error *err)
{
	struct gpu_conv_key key = key_of(b, l->ml, dir, n);
	const struct gpu_algo_choice *cached = gpu_algo_cache_find(b->algos, &key);
	int timed = b->timing && b->opt.conv_algorithms != CONV_ALGOS_HEURISTIC, rc;

	if (cached && cached->workspace_bytes <= b->workspace_limit) {
		*out = *cached;
		return 0;
	}
	out->algo = -1;
	if (timed && from_file(b, &key, out)) {
		gpu_algo_cache_put(b->algos, &key, out);
		return 0;
	}
	rc = dir == GPU_CONV_FWD ? ask_fwd(b, l->conv, timed, out, err)
	   : dir == GPU_CONV_BWD_DATA ? ask_bwd_data(b, l->conv, timed, out, err)
	   : ask_bwd_filter(b, l->conv, timed, out, err);
	if (rc)
		return -1;
	if (out->algo < 0)
		return trainer_error_set(err, "gpu: conv '%s': batch %d: no %scuDNN algorithm for %s "
					 "within %zu bytes of workspace", l->ml->name, n,
					 key.any ? "" : "deterministic ",
					 precision_name(b->opt.precision), b->workspace_limit);
	gpu_algo_cache_put(b->algos, &key, out);  /* full table: just not cached */
	if (timed && b->algo_file && gpu_algo_cache_put(b->algo_file, &key, out) == 0)
		b->algo_file_dirty = 1;
	return 0;
}

void gpu_conv_remember(struct backend *b, const struct gpu_layer *l, enum gpu_conv_dir dir, int n,
		       const struct gpu_algo_choice *choice)
{
	struct gpu_conv_key key = key_of(b, l->ml, dir, n);

	gpu_algo_cache_put(b->algos, &key, choice);  /* full table: just not cached */
}
