/* backend/gpu/conv.c - LAYER_CONV on the GPU through cuDNN's convolution API:
 * strided NCHW or NHWC descriptors with KCRS or KRSC filters, from the
 * views gpu_slice decides (a dense-block slice is a view, no copy),
 * algorithms chosen per shape within the pool's workspace by
 * conv_algos.c (timed or cuDNN's heuristics, --conv-algorithms). The math type is the
 * precision's (b->conv_math, gpu_backend.c): fp32 runs with FMA math only
 * (no TF32: the results must match ref/); tf32 with CUDNN_TENSOR_OP_MATH
 * (TF32 tensor cores, fp32 storage); fp16 and bf16 run on Tensor Cores
 * with fp32 accumulation (M4). Weight gradients of fp16/bf16
 * come out in the compute type and are widened into the fp32 gradients.
 * What it does not do: allocate (the pool holds the workspace).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

cudnnDataType_t gpu_cudnn_type(enum gpu_dtype dt)
{
	return dt == GPU_F16 ? CUDNN_DATA_HALF : dt == GPU_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

/* A view's strides as a 4-d descriptor of batch n. */
static int set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t type, int n, struct gpu_view v,
		      struct trainer_error *err)
{
	GPU_CUDNN(cudnnSetTensor4dDescriptorEx(d, type, n, v.c, v.h, v.w, (int)v.image_stride,
		(int)v.channel_stride, (int)(v.w * v.pixel_stride), (int)v.pixel_stride));
	return 0;
}

static int set_descriptors(struct backend *b, struct gpu_layer *l, int n,
			   struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_conv_state *c = l->conv;
	cudnnDataType_t type = gpu_cudnn_type(b->dt);

	if (set_tensor(c->x, type, n, gpu_view_at(b, &ml->in, NULL), err) ||
	    set_tensor(c->y, type, n, gpu_view_at(b, &ml->out, NULL), err))
		return -1;
	GPU_CUDNN(cudnnSetFilter4dDescriptor(c->w, type, gpu_filter_format(b), ml->out.channels,
		ml->in.channels, ml->kernel, ml->kernel));
	GPU_CUDNN(cudnnSetConvolution2dDescriptor(c->conv, ml->pad, ml->pad, ml->stride, ml->stride,
		1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
	GPU_CUDNN(cudnnSetConvolutionMathType(c->conv, b->conv_math));
	return 0;
}

int gpu_conv_setup(struct backend *b, struct gpu_layer *l, int n, struct trainer_error *err)
{
	struct gpu_conv_state *c = l->conv;

	if (!c->x) {
		GPU_CUDNN(cudnnCreateTensorDescriptor(&c->x));
		GPU_CUDNN(cudnnCreateTensorDescriptor(&c->y));
		GPU_CUDNN(cudnnCreateFilterDescriptor(&c->w));
		GPU_CUDNN(cudnnCreateConvolutionDescriptor(&c->conv));
	}
	if (c->n == n)
		return 0;
	c->n = 0;
	if (set_descriptors(b, l, n, err) || gpu_conv_choose(b, l, GPU_CONV_FWD, n, &c->fwd, err) ||
	    gpu_conv_choose(b, l, GPU_CONV_BWD_DATA, n, &c->bwd_data, err) ||
	    gpu_conv_choose(b, l, GPU_CONV_BWD_FILTER, n, &c->bwd_filter, err))
		return -1;
	c->n = n;
	return 0;
}

size_t gpu_conv_workspace_need(const struct backend *b)
{
	size_t need = 0;

	for (int i = 0; i < b->m->desc.layer_count; i++) {
		const struct gpu_conv_state *c = b->layers[i].conv;
		if (!c)
			continue;
		if (c->fwd.workspace_bytes > need)
			need = c->fwd.workspace_bytes;
		if (c->bwd_data.workspace_bytes > need)
			need = c->bwd_data.workspace_bytes;
		if (c->bwd_filter.workspace_bytes > need)
			need = c->bwd_filter.workspace_bytes;
	}
	return need;
}

void gpu_conv_destroy(struct gpu_layer *l)
{
	struct gpu_conv_state *c = l->conv;

	if (!c)
		return;
	if (c->x)
		cudnnDestroyTensorDescriptor(c->x);
	if (c->y)
		cudnnDestroyTensorDescriptor(c->y);
	if (c->w)
		cudnnDestroyFilterDescriptor(c->w);
	if (c->conv)
		cudnnDestroyConvolutionDescriptor(c->conv);
}

static int conv_forward(struct backend *b, struct gpu_layer *l, int training,
			struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_conv_state *c = l->conv;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), y = gpu_slice(b, &ml->out, 0);
	float one = 1.0f, zero = 0.0f;

	if (gpu_conv_setup(b, l, b->count, err))
		return -1;
	GPU_CUDNN(cudnnSetConvolutionMathType(c->conv, (cudnnMathType_t)c->fwd.math_type));
	GPU_CUDNN_RUN(cudnnConvolutionForward(b->cudnn, &one, c->x, x.data, c->w,
		gpu_weights(b, ml->weight_offset), c->conv, (cudnnConvolutionFwdAlgo_t)c->fwd.algo,
		gpu_region(b, &b->plan.workspace), b->plan.workspace.bytes, &zero, c->y, y.data));
	if (ml->bias_count)
		GPU_CUDA(gpu_k_bias_add(b->stream, b->dt, y, gpu_params(b) + ml->bias_offset));
	return 0;
}

static int conv_backward(struct backend *b, struct gpu_layer *l, int want_dx,
			 struct trainer_error *err)
{
	const struct model_layer *ml = l->ml;
	struct gpu_conv_state *c = l->conv;
	struct gpu_view x = gpu_slice(b, &ml->in, 0), dy = gpu_slice(b, &ml->out, 1);
	float one = 1.0f, zero = 0.0f, keep = ml->accumulate_dx ? 1.0f : 0.0f;
	float *dw = gpu_grads(b) + ml->weight_offset;
	void *dw_out = b->dt == GPU_F32 ? (void *)dw : gpu_region(b, &b->plan.dw_lp);
	void *ws = gpu_region(b, &b->plan.workspace);

	GPU_CUDNN(cudnnSetConvolutionMathType(c->conv, (cudnnMathType_t)c->bwd_filter.math_type));
	GPU_CUDNN_RUN(cudnnConvolutionBackwardFilter(b->cudnn, &one, c->x, x.data, c->y, dy.data,
		c->conv, (cudnnConvolutionBwdFilterAlgo_t)c->bwd_filter.algo, ws,
		b->plan.workspace.bytes, &zero, c->w, dw_out));
	if (b->dt != GPU_F32)
		GPU_CUDA(gpu_k_widen(b->stream, b->dt, dw_out, 1.0f, dw, ml->weight_count));
	if (ml->bias_count)
		GPU_CUDA(gpu_k_bias_grad(b->stream, b->dt, dy, gpu_grads(b) + ml->bias_offset));
	if (!want_dx)
		return 0;
	struct gpu_view dx = gpu_slice(b, &ml->in, 1);
	GPU_CUDNN(cudnnSetConvolutionMathType(c->conv, (cudnnMathType_t)c->bwd_data.math_type));
	GPU_CUDNN_RUN(cudnnConvolutionBackwardData(b->cudnn, &one, c->w, gpu_weights(b, ml->weight_offset),
		c->y, dy.data, c->conv, (cudnnConvolutionBwdDataAlgo_t)c->bwd_data.algo, ws,
		b->plan.workspace.bytes, &keep, c->x, dx.data));
	return 0;
}

const struct gpu_layer_ops gpu_conv_ops = {
	.name = "conv", .forward = conv_forward, .backward = conv_backward,
};
