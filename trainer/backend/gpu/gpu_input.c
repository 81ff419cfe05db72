/* gpu_input.c - getting a batch onto the GPU (P3, P4): uint8 pixels go
 * through one of two pinned host buffers to one of two device buffers on
 * the copy stream (double buffered: the upload of batch i+1, started by
 * gpu_backend_prefetch, overlaps the compute of batch i), then one kernel
 * on the compute stream normalises them into the input tensor; events
 * order the two streams both ways, so nothing here waits for the GPU
 * except, on reuse of a pinned buffer, for a copy two uploads old.
 * fp32 inputs (layer tests) go through the pinned io buffer instead.
 * What it does not do: choose crops (gpu_geometry.h; the loader does).
 */
#include <string.h>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"
#include "backend/gpu/gpu_nvtx.h"
#include "model/input_norm.h"

static const struct model_tensor *input_tensor(const struct backend *b)
{
	return &b->m->desc.tensors[b->m->desc.input_tensor];
}

static int check_images(const struct backend *b, const struct batch *batch, int count,
			struct trainer_error *err)
{
	const struct model_tensor *t = input_tensor(b);

	if (!b->plan.images[0].bytes || batch->size != t->height || count > batch->capacity ||
	    count < 1 || count > b->opt.max_batch)
		return trainer_error_set(err, "gpu: %d images of %d px: the model takes %d x (%d, %d, %d)",
					 count, batch->size, b->opt.max_batch, t->channels,
					 t->height, t->width);
	return 0;
}

/* Pixels into pinned buffer `slot`, then an async upload on the copy stream. */
static int queue_upload(struct backend *b, const struct batch *batch, int count, int slot,
			struct trainer_error *err)
{
	size_t bytes = (size_t)count * batch->size * batch->size;

	GPU_CUDA(cudaEventSynchronize(b->images_copied[slot]));  /* pinned buffer free */
	memcpy(b->host_images[slot], batch->pixels, bytes);
	GPU_CUDA(cudaStreamWaitEvent(b->copy_stream, b->images_used[slot], 0));
	GPU_COPY(cudaMemcpyAsync(gpu_region(b, &b->plan.images[slot]), b->host_images[slot], bytes,
				 cudaMemcpyHostToDevice, b->copy_stream));
	GPU_CUDA(cudaEventRecord(b->images_copied[slot], b->copy_stream));
	return 0;
}

static int upload(struct backend *b, const struct batch *batch, int count, int slot,
		  struct trainer_error *err)
{
	gpu_nvtx_push("input");
	int rc = queue_upload(b, batch, count, slot, err);
	gpu_nvtx_pop();
	return rc;
}

int gpu_backend_prefetch(struct backend *b, const struct batch *batch, int count,
			 struct trainer_error *err)
{
	if (check_images(b, batch, count, err))
		return -1;
	b->slot ^= 1;
	b->prefetched = NULL;
	if (upload(b, batch, count, b->slot, err))
		return -1;
	b->prefetched = batch;
	b->prefetched_count = count;
	return 0;
}

int gpu_input_before(struct backend *b, int slot, struct trainer_error *err)
{
	GPU_CUDA(cudaStreamWaitEvent(b->stream, b->images_copied[slot], 0));
	return 0;
}

int gpu_input_normalise(struct backend *b, int slot, struct trainer_error *err)
{
	const struct model_tensor *t = input_tensor(b);
	struct tensor_slice all = { b->m->desc.input_tensor, 0, t->channels };
	struct gpu_norm_consts k;
	struct gpu_input_geometry g;

	memcpy(k.mean, input_norm_mean, sizeof(k.mean));
	memcpy(k.std, input_norm_std, sizeof(k.std));
	if (gpu_input_geometry_init(&g, b->count, t->height, t->height, NULL, err))
		return -1;
	GPU_CUDA(gpu_k_input_images(b->stream, b->dt, gpu_region(b, &b->plan.images[slot]), &g,
				    NULL, k, gpu_slice(b, &all, 0)));
	return 0;
}

int gpu_input_after(struct backend *b, int slot, struct trainer_error *err)
{
	GPU_CUDA(cudaEventRecord(b->images_used[slot], b->stream));
	return 0;
}

static int load_floats(struct backend *b, const float *x, struct trainer_error *err)
{
	const struct model_tensor *t = input_tensor(b);
	struct tensor_slice all = { b->m->desc.input_tensor, 0, t->channels };
	size_t bytes = (size_t)b->count * t->channels * t->height * t->width * sizeof(float);
	float *io = gpu_region(b, &b->plan.io);

	if (gpu_io_upload(b, x, bytes, err))
		return -1;
	GPU_CUDA(gpu_k_to_view(b->stream, b->dt, io, 1.0f, gpu_slice(b, &all, 0), 0));
	return 0;
}

/* The pixels of in->images in b->slot's device buffer (or on their
 * way there); sets b->count. */
int gpu_input_stage(struct backend *b, const struct backend_input *in, struct trainer_error *err)
{
	if (in->count < 1 || in->count > b->opt.max_batch)
		return trainer_error_set(err, "gpu: batch of %d: must be 1..%d", in->count,
					 b->opt.max_batch);
	b->count = in->count;
	if (in->x)
		return 0;
	if (check_images(b, in->images, in->count, err))
		return -1;
	if (b->prefetched != in->images || b->prefetched_count != in->count) {
		b->slot ^= 1;
		if (upload(b, in->images, in->count, b->slot, err))
			return -1;
	}
	b->prefetched = NULL;
	b->step_slot = b->slot;
	return 0;
}

/* Sets b->count and fills the input tensor. */
int gpu_input_load(struct backend *b, const struct backend_input *in, struct trainer_error *err)
{
	if (!in->images == !in->x)
		return trainer_error_set(err, "gpu: input: need exactly one of images and x");
	if (gpu_input_stage(b, in, err))
		return -1;
	if (in->x)
		return load_floats(b, in->x, err);
	return gpu_input_before(b, b->slot, err) || gpu_input_normalise(b, b->slot, err) ||
	       gpu_input_after(b, b->slot, err) ? -1 : 0;
}

int gpu_io_upload(struct backend *b, const void *host, size_t bytes, struct trainer_error *err)
{
	GPU_CUDA(cudaEventSynchronize(b->io_uploaded));  /* the pinned buffer is free again */
	memcpy(b->host_io, host, bytes);
	GPU_COPY(cudaMemcpyAsync(gpu_region(b, &b->plan.io), b->host_io, bytes,
				 cudaMemcpyHostToDevice, b->stream));
	GPU_CUDA(cudaEventRecord(b->io_uploaded, b->stream));
	return 0;
}
