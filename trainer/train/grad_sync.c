/* grad_sync.c - local accumulation and per-layer allreduce submission (see
 * grad_sync.h). Submission order is backward order, the same on every rank
 * (the runtime's rule: same names, same order). What it does not do: pick
 * bucket sizes (the runtime fuses what it is given).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/grad_sync.h"

int grad_sync_init(struct grad_sync *g, struct model *m, int accumulate)
{
	memset(g, 0, sizeof(*g));
	g->model = m;
	g->accumulate = accumulate < 1 ? 1 : accumulate;
	g->pending_capacity = m->desc.layer_count;
	g->pending = calloc((size_t)g->pending_capacity, sizeof(*g->pending));
	if (g->accumulate > 1)
		g->sum = malloc(m->desc.param_count * sizeof(float));
	return g->pending && (g->accumulate == 1 || g->sum) ? 0 : -1;
}

void grad_sync_free(struct grad_sync *g)
{
	free(g->pending);
	free(g->sum);
	memset(g, 0, sizeof(*g));
}

void grad_sync_use_device(struct grad_sync *g, const struct grad_sync_device *d)
{
	g->device = d;
	free(g->sum);
	g->sum = NULL;
}

void grad_sync_begin_micro(struct grad_sync *g, int micro)
{
	g->micro = micro;
	if (micro == 0) {
		g->pending_count = 0;
		g->failed = 0;
	}
}

/* Layers of the not-last micro-batches: add this range into the sum. */
static void accumulate_range(struct grad_sync *g, size_t offset, size_t count)
{
	const float *grad = g->model->grads + offset;
	float *sum = g->sum + offset;

	if (g->micro == 0)
		memcpy(sum, grad, count * sizeof(float));
	else
		for (size_t i = 0; i < count; i++)
			sum[i] += grad[i];
}

/* Device mode: the hook queues the same arithmetic on the device. */
static void device_accumulate(struct grad_sync *g, size_t offset, size_t count)
{
	const struct grad_sync_device *dev = g->device;

	if (!g->failed && dev->accumulate(dev->ctx, offset, count, g->micro, g->accumulate))
		g->failed = 1;
}

/* Last micro-batch: grads = (sum + grads) / K, then submit. */
static void submit_range(struct grad_sync *g, size_t offset, size_t count)
{
	const struct grad_sync_device *dev = g->device;
	float *grad = (dev ? dev->grads : g->model->grads) + offset;
	const struct model_desc *d = &g->model->desc;

	if (dev && g->accumulate > 1) {
		device_accumulate(g, offset, count);
	} else if (g->accumulate > 1) {
		const float *sum = g->sum + offset;
		const float scale = 1.0f / (float)g->accumulate;
		for (size_t i = 0; i < count; i++)
			grad[i] = (sum[i] + grad[i]) * scale;
	}
	if (g->failed || g->pending_count >= g->pending_capacity)
		return;
	int layer = model_layer_of_param(d, offset);
	snprintf(g->name, sizeof(g->name), "grad.%s", layer >= 0 ? d->layers[layer].name : "?");
	if (dist_allreduce_async(g->name, grad, count, 1, &g->pending[g->pending_count]))
		g->failed = 1;
	else
		g->pending_count++;
}

void grad_sync_ready(size_t offset, size_t count, void *user)
{
	struct grad_sync *g = user;

	if (g->micro < g->accumulate - 1 && g->device)
		device_accumulate(g, offset, count);
	else if (g->micro < g->accumulate - 1)
		accumulate_range(g, offset, count);
	else
		submit_range(g, offset, count);
}

int grad_sync_finish(struct grad_sync *g)
{
	int rc = g->failed ? -1 : 0;

	for (int i = 0; i < g->pending_count; i++)
		if (dist_wait(g->pending[i]))
			rc = -1;
	g->pending_count = 0;
	return rc;
}
