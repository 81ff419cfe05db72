/* backend/gpu/eltwise.c - LAYER_RELU and LAYER_ADD (optional ReLU, the ResNet
 * shortcut) on the GPU (gpu_k_elt.cu). ReLU's backward masks with the
 * output, as ref/ and torch do. What it does not do: BN's fused ReLU
 * (backend/gpu/batchnorm.c).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

static int relu_forward(struct backend *b, struct gpu_layer *l, int training,
			struct trainer_error *err)
{
	GPU_CUDA(gpu_k_relu_fwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0),
				gpu_slice(b, &l->ml->out, 0)));
	return 0;
}

static int relu_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			 struct trainer_error *err)
{
	if (!want_dx)
		return 0;
	GPU_CUDA(gpu_k_relu_bwd(b->stream, b->dt, gpu_slice(b, &l->ml->out, 0),
				gpu_slice(b, &l->ml->out, 1), gpu_slice(b, &l->ml->in, 1),
				l->ml->accumulate_dx));
	return 0;
}

static int add_forward(struct backend *b, struct gpu_layer *l, int training,
		       struct trainer_error *err)
{
	GPU_CUDA(gpu_k_add_fwd(b->stream, b->dt, gpu_slice(b, &l->ml->in, 0),
			       gpu_slice(b, &l->ml->in2, 0), l->ml->relu,
			       gpu_slice(b, &l->ml->out, 0)));
	return 0;
}

/* in2 never is the model input, so its gradient is always wanted. */
static int add_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			struct trainer_error *err)
{
	struct gpu_view da = gpu_slice(b, &l->ml->in, 1), db = gpu_slice(b, &l->ml->in2, 1);

	if (!want_dx)
		da.data = NULL;
	GPU_CUDA(gpu_k_add_bwd(b->stream, b->dt, gpu_slice(b, &l->ml->out, 0),
			       gpu_slice(b, &l->ml->out, 1), l->ml->relu, da, l->ml->accumulate_dx,
			       db, l->ml->accumulate_dx2));
	return 0;
}

const struct gpu_layer_ops gpu_relu_ops = {
	.name = "relu", .forward = relu_forward, .backward = relu_backward,
};
const struct gpu_layer_ops gpu_add_ops = {
	.name = "add", .forward = add_forward, .backward = add_backward,
};
