/* params.c - the model's shared host buffers: one fp32 parameter buffer,
 * one gradient buffer, one BN running-statistics buffer (llm.c), and
 * torchvision's initialisation of them.
 * What it does not do: load or save them (checkpoint.c) or update them
 * (optim.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "base/rng.h"

int model_create(struct model *m, struct model_desc *desc, struct trainer_error *err)
{
	memset(m, 0, sizeof(*m));
	m->desc = *desc;
	memset(desc, 0, sizeof(*desc));
	size_t p = m->desc.param_count ? m->desc.param_count : 1;
	size_t s = m->desc.state_count ? m->desc.state_count : 1;
	m->params = calloc(p, sizeof(float));
	m->grads = calloc(p, sizeof(float));
	m->state = calloc(s, sizeof(float));
	if (!m->params || !m->grads || !m->state) {
		model_destroy(m);
		return trainer_error_set(err, "model '%s': out of memory for %zu parameters",
					 m->desc.name, p);
	}
	for (int i = 0; i < m->desc.layer_count; i++) {
		const struct model_layer *l = &m->desc.layers[i];
		if (l->kind == LAYER_BATCHNORM)
			for (int c = 0; c < l->in.channels; c++)
				m->state[l->state_offset + (size_t)l->in.channels + c] = 1.0f;
	}
	return 0;
}

void model_destroy(struct model *m)
{
	free(m->params);
	free(m->grads);
	free(m->state);
	model_desc_free(&m->desc);
	memset(m, 0, sizeof(*m));
}

static void init_layer(struct model *m, const struct model_layer *l, int fan_out_mode,
		       int zero_linear_bias, struct rng *r)
{
	float *w = m->params + l->weight_offset;
	float *bias = m->params + l->bias_offset;
	size_t fan_in = l->weight_count / (size_t)l->out.channels;

	if (l->kind == LAYER_CONV) {
		size_t fan = fan_out_mode ? (size_t)l->out.channels * l->kernel * l->kernel : fan_in;
		double std = sqrt(2.0 / (double)fan);
		for (size_t i = 0; i < l->weight_count; i++)
			w[i] = (float)(rng_normal(r) * std);
		for (size_t i = 0; i < l->bias_count; i++)
			bias[i] = 0.0f;
	} else if (l->kind == LAYER_BATCHNORM) {
		for (size_t i = 0; i < l->weight_count; i++) {
			w[i] = 1.0f;
			bias[i] = 0.0f;
		}
	} else if (l->kind == LAYER_LINEAR) {
		double bound = 1.0 / sqrt((double)fan_in);
		for (size_t i = 0; i < l->weight_count; i++)
			w[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
		for (size_t i = 0; i < l->bias_count; i++)
			bias[i] = zero_linear_bias ? 0.0f : (float)((2.0 * rng_uniform(r) - 1.0) * bound);
	}
}

void model_init_params(struct model *m, uint64_t seed)
{
	struct rng r;
	int resnet = strncmp(m->desc.name, "resnet", 6) == 0;

	rng_seed(&r, seed);
	for (int i = 0; i < m->desc.layer_count; i++)
		init_layer(m, &m->desc.layers[i], resnet, !resnet, &r);
	memset(m->grads, 0, m->desc.param_count * sizeof(float));
	for (int i = 0; i < m->desc.layer_count; i++) {
		const struct model_layer *l = &m->desc.layers[i];
		if (l->kind != LAYER_BATCHNORM)
			continue;
		for (int c = 0; c < l->in.channels; c++) {
			m->state[l->state_offset + c] = 0.0f;
			m->state[l->state_offset + (size_t)l->in.channels + c] = 1.0f;
		}
	}
	m->batches_tracked = 0;
}
