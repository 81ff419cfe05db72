/* backend/ref/backend.c - the reference backend: runs a struct model_desc with
 * the plain layers of backend/ref/layers.h, every tensor and its gradient kept in
 * NCHW fp32, single-threaded. It is the oracle, not a fast path.
 * --memory-efficient changes nothing here (everything is stored; the
 * gradients are the same by definition); precisions other than fp32 are
 * refused. The training loss is kept on the host (host_loss.h).
 * What it does not do: the loss formula (loss.c) or the optimizer.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/host_loss.h"
#include "model/input_norm.h"
#include "backend/ref/layers.h"

struct backend {
	struct model *m;
	struct backend_options opt;
	float **value;     /* per tensor: (max_batch, C, H, W) */
	float **grad;      /* per tensor: gradient, same shape */
	float *bn_saved;   /* per BN layer at 2*state_offset: mean (C), invstd (C) */
	int count;         /* N of the last forward */
	int trained;       /* the last forward was a training one */
	struct host_loss loss;
};

static void ref_destroy(struct backend *b)
{
	if (!b)
		return;
	for (int t = 0; b->value && t < b->m->desc.tensor_count; t++) {
		free(b->value[t]);
		free(b->grad[t]);
	}
	free(b->value);
	free(b->grad);
	free(b->bn_saved);
	host_loss_free(&b->loss);
	free(b);
}

static size_t tensor_floats(const struct model_tensor *t)
{
	return (size_t)t->channels * t->height * t->width;
}

static struct backend *ref_create(struct model *m, const struct backend_options *opt,
				  struct trainer_error *err)
{
	if (precision_check(opt->precision, "ref", err))
		return NULL;
	if (opt->max_batch < 1) {
		trainer_error_set(err, "--batch: '%d': must be at least 1", opt->max_batch);
		return NULL;
	}
	struct backend *b = calloc(1, sizeof(*b));
	int n = m->desc.tensor_count;
	if (b) {
		b->m = m;
		b->opt = *opt;
		host_loss_init(&b->loss, "backend ref");
		b->value = calloc((size_t)n, sizeof(float *));
		b->grad = calloc((size_t)n, sizeof(float *));
		b->bn_saved = calloc(2 * m->desc.state_count + 1, sizeof(float));
	}
	int ok = b && b->value && b->grad && b->bn_saved;
	for (int t = 0; ok && t < n; t++) {
		size_t count = (size_t)opt->max_batch * tensor_floats(&m->desc.tensors[t]);
		b->value[t] = calloc(count, sizeof(float));
		b->grad[t] = calloc(count, sizeof(float));
		ok = b->value[t] && b->grad[t];
	}
	if (!ok) {
		ref_destroy(b);
		trainer_error_set(err, "backend ref: out of memory for batch %d", opt->max_batch);
		return NULL;
	}
	return b;
}

static int ref_load_params(struct backend *b, struct trainer_error *err)
{
	return 0;  /* reads model->params directly */
}

static int ref_store_state(struct backend *b, struct trainer_error *err)
{
	return 0;  /* updates model->state directly */
}

static struct ref_view view_of(struct backend *b, float **base, const struct tensor_slice *s)
{
	const struct model_tensor *t = &b->m->desc.tensors[s->tensor];
	size_t plane = (size_t)t->height * t->width;

	return (struct ref_view){
		.data = base[s->tensor] + (size_t)s->c0 * plane,
		.n = b->count, .c = s->channels, .h = t->height, .w = t->width,
		.image_stride = tensor_floats(t),
	};
}

static void forward_layer(struct backend *b, const struct model_layer *l, int training)
{
	struct ref_view x = view_of(b, b->value, &l->in), y = view_of(b, b->value, &l->out);
	struct ref_conv_shape s = { l->kernel, l->stride, l->pad };
	const float *w = b->m->params + l->weight_offset, *bias = b->m->params + l->bias_offset;
	float *running = b->m->state + l->state_offset;
	float *saved = b->bn_saved + 2 * l->state_offset;

	switch (l->kind) {
	case LAYER_CONV:
		ref_conv_forward(&x, w, l->bias_count ? bias : NULL, s, &y);
		break;
	case LAYER_BATCHNORM:
		if (training)
			ref_batchnorm_forward_train(&x, w, bias, l->relu, &y, saved, saved + x.c,
						    running, running + x.c);
		else
			ref_batchnorm_forward_eval(&x, w, bias, running, running + x.c, l->relu, &y);
		break;
	case LAYER_RELU:
		ref_relu_forward(&x, &y);
		break;
	case LAYER_MAXPOOL:
		ref_maxpool_forward(&x, s, &y);
		break;
	case LAYER_AVGPOOL:
		ref_avgpool_forward(&x, s, &y);
		break;
	case LAYER_GLOBAL_AVGPOOL:
		ref_global_avgpool_forward(&x, &y);
		break;
	case LAYER_LINEAR:
		ref_linear_forward(&x, w, bias, &y);
		break;
	case LAYER_ADD: {
		struct ref_view x2 = view_of(b, b->value, &l->in2);
		ref_add_forward(&x, &x2, l->relu, &y);
		break;
	}
	}
}

static int load_input(struct backend *b, const struct backend_input *in,
		      struct trainer_error *err)
{
	const struct model_tensor *t = &b->m->desc.tensors[b->m->desc.input_tensor];

	if (in->count < 1 || in->count > b->opt.max_batch)
		return trainer_error_set(err, "backend ref: batch of %d: must be 1..%d",
					 in->count, b->opt.max_batch);
	if (!in->images == !in->x)
		return trainer_error_set(err, "backend ref: input: need exactly one of images and x");
	if (in->images) {
		if (t->channels != 3 || in->images->size != t->height || t->height != t->width ||
		    in->count > in->images->capacity)
			return trainer_error_set(err, "backend ref: images of %d px: the model takes (%d, %d, %d)",
						 in->images->size, t->channels, t->height, t->width);
		input_norm_nchw(in->images, in->count, b->value[b->m->desc.input_tensor]);
	} else {
		memcpy(b->value[b->m->desc.input_tensor], in->x,
		       (size_t)in->count * tensor_floats(t) * sizeof(float));
	}
	b->count = in->count;
	return 0;
}

static int ref_forward(struct backend *b, const struct backend_input *in, int training,
		       float *y, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;
	int outputs = (int)tensor_floats(&d->tensors[d->output_tensor]);

	b->trained = 0;
	host_loss_discard(&b->loss);  /* a failed forward keeps nothing for loss() */
	if (load_input(b, in, err))
		return -1;
	float *out = host_loss_output(&b->loss, y, b->count, outputs, training, err);
	if (!out)
		return -1;
	for (int i = 0; i < d->layer_count; i++)
		forward_layer(b, &d->layers[i], training);
	b->trained = training;
	memcpy(out, b->value[d->output_tensor], (size_t)b->count * outputs * sizeof(float));
	return 0;
}

static int ref_loss(struct backend *b, const float *labels, const float *w_pos,
		    const float *w_neg, struct trainer_error *err)
{
	return host_loss_compute(&b->loss, labels, w_pos, w_neg, err);
}

static int ref_loss_take(struct backend *b, double *sum, long *batches, struct trainer_error *err)
{
	host_loss_take(&b->loss, sum, batches);
	return 0;
}

static void backward_layer(struct backend *b, const struct model_layer *l, int want_dx)
{
	struct ref_view x = view_of(b, b->value, &l->in), y = view_of(b, b->value, &l->out);
	struct ref_view dx = view_of(b, b->grad, &l->in), dy = view_of(b, b->grad, &l->out);
	const struct ref_view *pdx = want_dx ? &dx : NULL;
	struct ref_conv_shape s = { l->kernel, l->stride, l->pad };
	const float *w = b->m->params + l->weight_offset;
	float *dw = b->m->grads + l->weight_offset, *db = b->m->grads + l->bias_offset;
	float *saved = b->bn_saved + 2 * l->state_offset;

	switch (l->kind) {
	case LAYER_CONV:
		ref_conv_backward(&x, w, &dy, s, pdx, l->accumulate_dx, dw, l->bias_count ? db : NULL);
		break;
	case LAYER_BATCHNORM:
		ref_batchnorm_backward(&x, &y, &dy, w, l->relu, saved, saved + x.c, pdx,
				       l->accumulate_dx, dw, db);
		break;
	case LAYER_RELU:
		ref_relu_backward(&y, &dy, pdx, l->accumulate_dx);
		break;
	case LAYER_MAXPOOL:
		ref_maxpool_backward(&x, &dy, s, pdx, l->accumulate_dx);
		break;
	case LAYER_AVGPOOL:
		ref_avgpool_backward(&dy, s, pdx, l->accumulate_dx);
		break;
	case LAYER_GLOBAL_AVGPOOL:
		ref_global_avgpool_backward(&dy, pdx, l->accumulate_dx);
		break;
	case LAYER_LINEAR:
		ref_linear_backward(&x, w, &dy, pdx, l->accumulate_dx, dw, db);
		break;
	case LAYER_ADD: {
		struct ref_view dx2 = view_of(b, b->grad, &l->in2);
		ref_add_backward(&y, &dy, l->relu, pdx, l->accumulate_dx, &dx2, l->accumulate_dx2);
		break;
	}
	}
}

static int ref_backward(struct backend *b, const float *dy, float *dx,
			backend_grad_ready_fn ready, void *user, struct trainer_error *err)
{
	const struct model_desc *d = &b->m->desc;

	if (!b->trained)
		return trainer_error_set(err, "backend ref: backward without a training forward");
	if (!(dy = host_loss_grad(&b->loss, dy, err)))
		return -1;
	memcpy(b->grad[d->output_tensor], dy,
	       (size_t)b->count * tensor_floats(&d->tensors[d->output_tensor]) * sizeof(float));
	for (int i = d->layer_count - 1; i >= 0; i--) {
		const struct model_layer *l = &d->layers[i];
		int want_dx = dx || l->in.tensor != d->input_tensor;
		backward_layer(b, l, want_dx);
		if (ready && l->weight_count + l->bias_count)
			ready(l->weight_offset, l->weight_count + l->bias_count, user);
	}
	if (dx)
		memcpy(dx, b->grad[d->input_tensor],
		       (size_t)b->count * tensor_floats(&d->tensors[d->input_tensor]) * sizeof(float));
	return 0;
}

/* The last forward's feature maps: the stored tensor, as it is. */
static int ref_features(struct backend *b, float *maps, struct trainer_error *err)
{
	struct model_features f;

	if (model_features_find(&b->m->desc, &f, err))
		return -1;
	if (b->count < 1)
		return trainer_error_set(err, "backend ref: features: no forward yet");
	memcpy(maps, b->value[f.tensor],
	       (size_t)b->count * tensor_floats(&b->m->desc.tensors[f.tensor]) * sizeof(float));
	return 0;
}

const struct backend_ops backend_ref_ops = {
	.name = "ref",
	.create = ref_create,
	.load_params = ref_load_params,
	.forward = ref_forward,
	.backward = ref_backward,
	.loss = ref_loss,
	.loss_take = ref_loss_take,
	.store_state = ref_store_state,
	.features = ref_features,
	.destroy = ref_destroy,
};
