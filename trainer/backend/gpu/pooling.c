/* backend/gpu/pooling.c - LAYER_MAXPOOL, LAYER_AVGPOOL and LAYER_GLOBAL_AVGPOOL on
 * the GPU with the backend's own kernels (gpu_k_pool.cu): the tie and
 * padding rules of ref/ exactly, on strided slices, which cuDNN's
 * deprecated pooling calls do not promise. What it does not do: ceil
 * mode or dilation (no model uses them).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

static struct gpu_pool_shape shape_of(const struct model_layer *ml)
{
	return (struct gpu_pool_shape){ ml->kernel, ml->stride, ml->pad };
}

static int maxpool_forward(struct backend *b, struct gpu_layer *l, int training,
			   struct trainer_error *err)
{
	GPU_CUDA(gpu_k_maxpool_fwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0), shape_of(l->ml),
				   gpu_slice(b, &l->ml->out, 0)));
	return 0;
}

static int maxpool_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			    struct trainer_error *err)
{
	if (!want_dx)
		return 0;
	GPU_CUDA(gpu_k_maxpool_bwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0),
				   gpu_slice(b, &l->ml->out, 1), shape_of(l->ml),
				   gpu_slice(b, &l->ml->in, 1), l->ml->accumulate_dx));
	return 0;
}

static int avgpool_forward(struct backend *b, struct gpu_layer *l, int training,
			   struct trainer_error *err)
{
	GPU_CUDA(gpu_k_avgpool_fwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0), shape_of(l->ml),
				   gpu_slice(b, &l->ml->out, 0)));
	return 0;
}

static int avgpool_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			    struct trainer_error *err)
{
	if (!want_dx)
		return 0;
	GPU_CUDA(gpu_k_avgpool_bwd(b->stream, b->dt, gpu_slice(b, &l->ml->out, 1), shape_of(l->ml),
				   gpu_slice(b, &l->ml->in, 1), l->ml->accumulate_dx));
	return 0;
}

static int gap_forward(struct backend *b, struct gpu_layer *l, int training,
		       struct trainer_error *err)
{
	GPU_CUDA(gpu_k_gap_fwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0),
			       gpu_slice(b, &l->ml->out, 0)));
	return 0;
}

static int gap_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			struct trainer_error *err)
{
	if (!want_dx)
		return 0;
	GPU_CUDA(gpu_k_gap_bwd(b->stream, b->dt, gpu_slice(b, &l->ml->out, 1),
			       gpu_slice(b, &l->ml->in, 1), l->ml->accumulate_dx));
	return 0;
}

const struct gpu_layer_ops gpu_maxpool_ops = {
	.name = "maxpool", .forward = maxpool_forward, .backward = maxpool_backward,
};
const struct gpu_layer_ops gpu_avgpool_ops = {
	.name = "avgpool", .forward = avgpool_forward, .backward = avgpool_backward,
};
const struct gpu_layer_ops gpu_gap_ops = {
	.name = "global_avgpool", .forward = gap_forward, .backward = gap_backward,
};
