/* gpu_step.c - one forward and one backward of the "gpu" backend. All
 * work is queued on the compute stream; the host waits only where
 * backend.h's contract needs host data: the logits at the end of a
 * forward given y (evaluation; training passes y NULL and the loss stays
 * on the device, gpu_loss.c, M3), each layer's gradients before its
 * ready() call when they go to the host (polled with cudaEventQuery
 * while later layers are still being queued, so the fusion engine starts
 * during backward), dx, and the fp16 overflow flag. With device
 * gradients, dy from loss() and fp32/bf16, backward returns without
 * waiting at all. Copies use pinned memory and cudaMemcpyAsync
 * throughout. fp16: dy is multiplied by the loss scale and each layer's
 * gradients are unscaled and checked for inf/NaN on the device; the flag
 * is read with the last copy (M4).
 * features() reads the last feature maps of the last forward back the
 * same way as the logits (through the fp32 io scratch, refused when they
 * do not fit there).
 * With --memory-efficient, before a layer's backward the BN outputs it
 * was the last to read are written again (plan.rebuild), and backward
 * reads activations where the plan keeps them for it (plan.act_bwd).
 * With --cuda-graph on (b->graphs) a training step is deferred: forward,
 * loss and backward stage their host data and return; the optimizer call
 * (gpu_train.c) has gpu_step_run_deferred queue the whole step, which
 * gpu_graph.c runs as one CUDA graph. With more ranks the graph ends with
 * backward, launched by the backward call before it hands the gradients
 * to ready() (NCCL's reductions come after it, outside), and the
 * optimizer runs on its own. Such a step takes images, dy and dx NULL,
 * and nothing but its optimizer call may come between.
 * What it does not do: the loss (gpu_loss.c) or the optimizer step.
 */
#include <string.h>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"
#include "backend/gpu/gpu_nvtx.h"

int gpu_input_load(struct backend *b, const struct backend_input *in, struct trainer_error *err);

static size_t tensor_floats(const struct backend *b, int tensor)
{
	const struct model_tensor *t = &b->m->desc.tensors[tensor];

	return (size_t)b->count * t->channels * t->height * t->width;
}

static struct tensor_slice whole(const struct backend *b, int tensor)
{
	return (struct tensor_slice){ tensor, 0, b->m->desc.tensors[tensor].channels };
}

/* Tensor (grad or value) -> fp32 -> pinned host_io, queued. */
static int queue_readback(struct backend *b, int tensor, int grad, float scale,
			  struct trainer_error *err)
{
	struct tensor_slice s = whole(b, tensor);
	float *io = gpu_region(b, &b->plan.io);

	GPU_CUDA(gpu_k_from_view(b->stream, b->dt, gpu_slice(b, &s, grad), scale, io));
	GPU_COPY(cudaMemcpyAsync(b->host_io, io, tensor_floats(b, tensor) * sizeof(float),
				 cudaMemcpyDeviceToHost, b->stream));
	return 0;
}

static int run_forward(struct backend *b, int training, float *y, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	for (int i = 0; i < d->layer_count; i++) {
		struct gpu_layer *l = &b->layers[i];
		if (gpu_layer_ops_for(l->ml->kind)->forward(b, l, training, err))
			return -1;
	}
	if (!y)
		return 0;  /* training: the logits stay for gpu_loss */
	if (queue_readback(b, d->output_tensor, 0, 1.0f, err))
		return -1;
	GPU_CUDA(cudaStreamSynchronize(b->stream));  /* y is host data on return */
	memcpy(y, b->host_io, tensor_floats(b, d->output_tensor) * sizeof(float));
	return 0;
}

/* A deferred step's forward: the batch staged, nothing queued. */
static int defer_forward(struct backend *b, const struct backend_input *in, const float *y,
			 struct trainer_error *err)
{
	if (!in->images || y)
		return trainer_error_set(err, "gpu: --cuda-graph: a training forward takes images and "
					 "keeps its logits (y NULL)");
	if (gpu_input_stage(b, in, err))
		return -1;
	b->trained = 1;
	gpu_loss_forwarded(b, 1);
	return 0;
}

static int deferred_pending(const struct backend *b, struct trainer_error *err)
{
	if (!b->deferred)
		return 0;
	return trainer_error_set(err, "gpu: --cuda-graph: a step waits for its optimizer call");
}

int gpu_step_forward(struct backend *b, const struct backend_input *in, int training,
		     float *y, struct trainer_error *err)
{
	int rc;

	if (deferred_pending(b, err))
		return -1;
	b->trained = 0;
	gpu_loss_forwarded(b, 0);
	if (!y && !training)
		return trainer_error_set(err, "gpu: forward: no output buffer in evaluation (y NULL "
					 "keeps the logits for loss(), training only)");
	if (b->graphs && training)
		return defer_forward(b, in, y, err);
	gpu_nvtx_push(training ? "forward" : "forward (eval)");
	rc = gpu_input_load(b, in, err) || run_forward(b, training, y, err) ? -1 : 0;
	gpu_nvtx_pop();
	b->trained = training && rc == 0;
	gpu_loss_forwarded(b, b->trained && !y);
	return rc;
}

struct ready_cursor {
	int next;                      /* layer whose ready() is due next (walking down) */
	backend_grad_ready_fn ready;
	void *user;
};

/* Calls ready() for the layers whose gradients have landed, in backward
 * order; `wait` blocks on each (the end of backward), else stops at the
 * first not yet done. */
static int fire_ready(struct backend *b, struct ready_cursor *c, int upto, int wait,
		      struct trainer_error *err)
{
	for (; c->next >= upto; c->next--) {
		struct gpu_layer *l = &b->layers[c->next];
		if (!l->grads_done)
			continue;
		if (b->host_grads) {
			cudaError_t rc = wait ? cudaEventSynchronize(l->grads_done)
					      : cudaEventQuery(l->grads_done);
			if (rc == cudaErrorNotReady)
				return 0;
			GPU_CUDA(rc);
		}
		if (c->ready)
			c->ready(l->ml->weight_offset, l->ml->weight_count + l->ml->bias_count, c->user);
	}
	return 0;
}

/* After layer l's backward: unscale/check (fp16), copy to the host, mark. */
static int finish_layer_grads(struct backend *b, struct gpu_layer *l, struct trainer_error *err)
{
	size_t offset = l->ml->weight_offset, count = l->ml->weight_count + l->ml->bias_count;
	float *g = gpu_grads(b) + offset;

	if (b->dt == GPU_F16)
		GPU_CUDA(gpu_k_unscale_check(b->stream, g, count, 1.0f / b->scaler.scale,
					     gpu_region(b, &b->plan.flags)));
	if (b->host_grads && gpu_layer_grads_download(b, l->ml, b->m->grads, gpu_grads(b), err))
		return -1;
	GPU_CUDA(cudaEventRecord(l->grads_done, b->stream));
	return 0;
}

static int run_backward(struct backend *b, const float *dy, float *dx,
			struct ready_cursor *cur, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;
	struct tensor_slice out = whole(b, d->output_tensor);
	float *io = gpu_region(b, &b->plan.io), scale = b->scaler.scale;
	const float *dev_dy = io;

	if (dy ? gpu_io_upload(b, dy, tensor_floats(b, d->output_tensor) * sizeof(float), err)
	       : !(dev_dy = gpu_loss_device_dy(b, err)))
		return -1;
	GPU_CUDA(gpu_k_to_view(b->stream, b->dt, dev_dy, scale, gpu_slice(b, &out, 1), 0));
	GPU_COPY(cudaMemsetAsync(gpu_region(b, &b->plan.flags), 0, sizeof(int), b->stream));
	for (int i = d->layer_count - 1; i >= 0; i--) {
		struct gpu_layer *l = &b->layers[i];
		int want_dx = dx || l->ml->in.tensor != d->input_tensor;
		for (int k = 0; k < 2; k++)
			if (b->plan.rebuild[i][k] >= 0 &&
			    gpu_bn_rebuild(b, &b->layers[b->plan.rebuild[i][k]], err))
				return -1;
		if (gpu_layer_ops_for(l->ml->kind)->backward(b, l, want_dx, err))
			return -1;
		if (l->grads_done && (finish_layer_grads(b, l, err) || fire_ready(b, cur, i, 0, err)))
			return -1;
	}
	if (dx && queue_readback(b, d->input_tensor, 1, 1.0f / scale, err))
		return -1;
	if (b->dt == GPU_F16)
		GPU_COPY(cudaMemcpyAsync(b->host_flag, gpu_region(b, &b->plan.flags), sizeof(int),
					 cudaMemcpyDeviceToHost, b->stream));
	if (fire_ready(b, cur, 0, 1, err))
		return -1;
	b->found_inf = 0;
	if (!dx && !b->host_grads && b->dt != GPU_F16)
		return 0;  /* nothing the host needs yet: the next step queues behind this one */
	GPU_CUDA(cudaStreamSynchronize(b->stream));
	if (dx)
		memcpy(dx, b->host_io, tensor_floats(b, d->input_tensor) * sizeof(float));
	b->found_inf = b->dt == GPU_F16 && *b->host_flag != 0;
	return 0;
}

/* A deferred step's backward: every layer's gradients are promised to
 * ready() at once, after the graph that computes them was launched where
 * NCCL reduces them next (more ranks: the runtime orders its reductions
 * after the compute stream's work at each ready() call); with one rank
 * the step waits for its optimizer call. */
static int defer_backward(struct backend *b, const float *dy, const float *dx,
			  struct ready_cursor *cur, struct trainer_error *err)
{
	if (dy || dx)
		return trainer_error_set(err, "gpu: --cuda-graph: backward takes dy and dx NULL");
	if (!gpu_loss_device_dy(b, err))
		return -1;
	b->deferred = 1;
	if (b->graph_ends_at_backward && gpu_step_run_deferred(b, NULL, NULL, err))
		return -1;
	return fire_ready(b, cur, 0, 0, err);  /* device gradients: no event is queried */
}

int gpu_step_backward(struct backend *b, const float *dy, float *dx,
		      backend_grad_ready_fn ready, void *user, struct trainer_error *err)
{
	struct ready_cursor cur = { b->m->desc.layer_count - 1, ready, user };
	int rc;

	if (!b->trained)
		return trainer_error_set(err, "gpu: backward without a training forward");
	if (deferred_pending(b, err))
		return -1;
	if (b->graphs)
		return defer_backward(b, dy, dx, &cur, err);
	gpu_nvtx_push("backward");
	b->backward = 1;
	rc = run_backward(b, dy, dx, &cur, err);
	b->backward = 0;
	gpu_nvtx_pop();
	return rc;
}

int gpu_step_features(struct backend *b, float *maps, struct trainer_error *err)
{
	struct model_features f;

	if (model_features_find(&b->m->desc, &f, err))
		return -1;
	if (b->count < 1)
		return trainer_error_set(err, "gpu: features: no forward yet");
	if (b->plan.act_bwd[f.tensor].offset != b->plan.act[f.tensor].offset)
		return trainer_error_set(err, "gpu: features: '%s': not kept with --memory-efficient",
					 b->m->desc.tensors[f.tensor].name);
	size_t bytes = tensor_floats(b, f.tensor) * sizeof(float);
	if (bytes > b->plan.io.bytes)
		return trainer_error_set(err, "gpu: features: '%s': %zu bytes do not fit the %zu-byte "
					 "read-back buffer", b->m->desc.tensors[f.tensor].name, bytes,
					 b->plan.io.bytes);
	if (queue_readback(b, f.tensor, 0, 1.0f, err))
		return -1;
	GPU_CUDA(cudaStreamSynchronize(b->stream));
	memcpy(maps, b->host_io, bytes);
	return 0;
}

struct deferred_step {
	struct backend *b;
	int (*optim)(void *ctx, struct trainer_error *err);
	void *ctx;
};

/* Everything a deferred step puts on the stream, in eager order. */
static int queue_step(void *ctx, struct trainer_error *err)
{
	struct deferred_step *d = ctx;
	struct backend *b = d->b;
	struct ready_cursor none = { b->m->desc.layer_count - 1, NULL, NULL };

	if (gpu_input_normalise(b, b->step_slot, err) || run_forward(b, 1, NULL, err) ||
	    gpu_loss_queue(b, err))
		return -1;
	b->backward = 1;
	int rc = run_backward(b, NULL, NULL, &none, err);
	b->backward = 0;
	return rc || (d->optim && d->optim(d->ctx, err)) ? -1 : 0;
}

int gpu_step_run_deferred(struct backend *b, int (*optim)(void *ctx, struct trainer_error *err),
			  void *ctx, struct trainer_error *err)
{
	struct deferred_step d = { b, optim, ctx };

	if (!b->deferred)
		return trainer_error_set(err, "gpu: --cuda-graph: an optimizer step needs a forward, "
					 "loss and backward before it");
	b->deferred = 0;
	gpu_nvtx_push("step (graph)");
	int rc = gpu_input_before(b, b->step_slot, err) || gpu_graph_run(b, queue_step, &d, err) ||
		 gpu_input_after(b, b->step_slot, err) || gpu_loss_after(b, err) ? -1 : 0;
	gpu_nvtx_pop();
	return rc;
}
