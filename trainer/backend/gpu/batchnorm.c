/* backend/gpu/batchnorm.c - LAYER_BATCHNORM (optional fused ReLU) on the GPU with the
 * backend's own kernels (gpu_k_bn.cu), not cuDNN's: cuDNN's legacy
 * batch-norm calls are deprecated in cuDNN 9 and want packed tensors,
 * while our inputs are dense-block slices. Same numbers as ref/: eps
 * 1e-5, momentum 0.1, unbiased running variance, gamma/beta and all
 * statistics fp32 in every precision (M4). A channel's batch statistics
 * are computed once per training forward, by the first BN layer that
 * normalises it, and taken from the plan's bn_stats by every later one
 * (plan.bn_known: a dense block's earlier channels): the same bits as
 * computing them again. With --memory-efficient, backward first writes
 * an output again from the saved statistics (gpu_bn_rebuild: the same
 * expression as the forward, so the same bits). What it does not do:
 * count batches (the caller does).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

#define BN_EPS 1e-5f
#define BN_MOMENTUM 0.1f

static int bnorm_forward(struct backend *b, struct gpu_layer *l, int training,
			 struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), y = gpu_slice(b, &ml->out, 0);
	struct gpu_bn_args a = { BN_EPS, BN_MOMENTUM, ml->relu };
	const float *gamma = gpu_params(b) + ml->weight_offset, *beta = gpu_params(b) + ml->bias_offset;
	float *running = gpu_state(b) + ml->state_offset;
	float *saved = gpu_bn_saved(b) + 2 * ml->state_offset;
	float *stats = (float *)gpu_region(b, &b->plan.bn_stats[ml->in.tensor]) + 2 * ml->in.c0;
	int c = ml->in.channels, known = b->plan.bn_known[l - b->layers];

	if (training) {
		GPU_CUDA(gpu_k_bn_fwd_train(b->stream, b->dt, x, gamma, beta, a, y, saved, saved + c,
					    running, running + c, stats, known, gpu_bn_parts(b),
					    GPU_POOL_BN_PARTS));
		gpu_bn_channels_note(c - known, c);
	}
	else
		GPU_CUDA(gpu_k_bn_fwd_eval(b->stream, b->dt, x, gamma, beta, running, running + c,
					   a, y));
	return 0;
}

int gpu_bn_rebuild(struct backend *b, struct gpu_layer *l, struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_bn_args a = { BN_EPS, BN_MOMENTUM, ml->relu };
	float *saved = gpu_bn_saved(b) + 2 * ml->state_offset;

	GPU_CUDA(gpu_k_bn_apply(b->stream, b->dt, gpu_slice(b, &ml->in, 0),
				gpu_params(b) + ml->weight_offset, gpu_params(b) + ml->bias_offset,
				saved, saved + ml->in.channels, a, gpu_slice(b, &ml->out, 0)));
	return 0;
}

static int bnorm_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			  struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), y = gpu_slice(b, &ml->out, 0);
	struct gpu_view dy = gpu_slice(b, &ml->out, 1), dx = gpu_slice(b, &ml->in, 1);
	float *saved = gpu_bn_saved(b) + 2 * ml->state_offset;

	if (!want_dx)
		dx.data = NULL;
	GPU_CUDA(gpu_k_bn_bwd(b->stream, b->dt, x, y, dy, gpu_params(b) + ml->weight_offset,
			      ml->relu, saved, saved + ml->in.channels, dx, ml->accumulate_dx,
			      gpu_grads(b) + ml->weight_offset, gpu_grads(b) + ml->bias_offset,
			      gpu_bn_parts(b), GPU_POOL_BN_PARTS));
	return 0;
}

const struct gpu_layer_ops gpu_bnorm_ops = {
	.name = "batchnorm", .forward = bnorm_forward, .backward = bnorm_backward,
};
