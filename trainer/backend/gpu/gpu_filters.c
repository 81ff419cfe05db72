/* gpu_filters.c - conv filters where parameters cross between host and
 * device. The host (model->params and ->grads, the optimizer's moments,
 * checkpoints) keeps torchvision's layout, KCRS; under --gpu-layout nhwc
 * the device keeps every conv filter KRSC (cuDNN's NHWC filter format),
 * so each crossing converts the filters whose two layouts differ (R*S > 1
 * and C > 1; a 1x1 conv is the same either way) through the pool's fp32
 * filter_io region, in stream order (a later conversion waits behind the
 * copy of the one before). Everything else is copied as it is. All work
 * is queued on b->stream; the caller waits where it needs host data.
 * What it does not do: choose the layout (gpu_internal.h) or the fp16/bf16
 * compute copy (a cast of the device's own layout).
 */
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

int gpu_filter_permuted(const struct backend *b, const struct model_layer *ml)
{
	return gpu_nhwc(b) && ml->kind == LAYER_CONV && ml->kernel > 1 && ml->in.channels > 1;
}

/* Layer ml's filter from src (on the device) converted into filter_io,
 * then copied to dst (kind: device or host); src may be dst. */
static int convert_filter(struct backend *b, const struct model_layer *ml, const float *src,
			  float *dst, int to_krsc, enum cudaMemcpyKind kind, struct trainer_error *err)
{
	float *io = gpu_region(b, &b->plan.filter_io);
	size_t bytes = ml->weight_count * sizeof(float);

	GPU_CUDA(gpu_k_filter_layout(b->stream, src, io, ml->out.channels, ml->in.channels,
				     ml->kernel * ml->kernel, to_krsc));
	GPU_COPY(cudaMemcpyAsync(dst, io, bytes, kind, b->stream));
	return 0;
}

int gpu_params_upload(struct backend *b, float *dev, const float *host, size_t count,
		      struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	GPU_COPY(cudaMemcpyAsync(dev, host, count * sizeof(float), cudaMemcpyHostToDevice,
				 b->stream));
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *ml = &d->layers[i];
		float *w = dev + ml->weight_offset;
		if (gpu_filter_permuted(b, ml) &&
		    convert_filter(b, ml, w, w, 1, cudaMemcpyDeviceToDevice, err))
			return -1;
	}
	return 0;
}

int gpu_params_download(struct backend *b, float *host, const float *dev, size_t count,
			struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	GPU_COPY(cudaMemcpyAsync(host, dev, count * sizeof(float), cudaMemcpyDeviceToHost,
				 b->stream));
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *ml = &d->layers[i];
		if (gpu_filter_permuted(b, ml) &&
		    convert_filter(b, ml, dev + ml->weight_offset, host + ml->weight_offset, 0,
				   cudaMemcpyDeviceToHost, err))
			return -1;
	}
	return 0;
}

int gpu_layer_grads_download(struct backend *b, const struct model_layer *ml, float *host,
			     const float *dev, struct trainer_error *err)
{
	size_t offset = ml->weight_offset, count = ml->weight_count + ml->bias_count;

	if (!gpu_filter_permuted(b, ml)) {
		GPU_COPY(cudaMemcpyAsync(host + offset, dev + offset, count * sizeof(float),
					 cudaMemcpyDeviceToHost, b->stream));
		return 0;
	}
	if (convert_filter(b, ml, dev + offset, host + offset, 0, cudaMemcpyDeviceToHost, err))
		return -1;
	if (ml->bias_count)
		GPU_COPY(cudaMemcpyAsync(host + ml->bias_offset, dev + ml->bias_offset,
					 ml->bias_count * sizeof(float), cudaMemcpyDeviceToHost,
					 b->stream));
	return 0;
}
