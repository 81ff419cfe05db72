/* model/desc.c - building a struct model_desc: tensors, layers, then
 * model_desc_finish() checks every shape and derives what backends need
 * (output sizes, parameter and running-stat offsets, accumulate flags,
 * the torchvision state_dict entries).
 * What it does not do: know any particular network (model/densenet.c,
 * model/resnet.c) or hold any numbers (params.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

void model_desc_init(struct model_desc *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->output_tensor = -1;
}

void model_desc_free(struct model_desc *d)
{
	free(d->tensors);
	free(d->layers);
	free(d->entries);
	memset(d, 0, sizeof(*d));
}

static int grow(void **array, int *capacity, int count, size_t item_bytes)
{
	if (count < *capacity)
		return 0;
	int wanted = *capacity ? *capacity * 2 : 64;
	void *bigger = realloc(*array, (size_t)wanted * item_bytes);
	if (!bigger)
		return -1;
	*array = bigger;
	*capacity = wanted;
	return 0;
}

int model_desc_add_tensor(struct model_desc *d, const char *name,
			  enum tensor_kind kind, int channels, int height,
			  int width, struct trainer_error *err)
{
	if (channels < 1 || height < 1 || width < 1)
		return trainer_error_set(err, "tensor '%s': bad shape (%d, %d, %d)",
					 name, channels, height, width);
	if (grow((void **)&d->tensors, &d->capacity_tensors, d->tensor_count,
		 sizeof(*d->tensors)))
		return trainer_error_set(err, "tensor '%s': out of memory", name);
	struct model_tensor *t = &d->tensors[d->tensor_count];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->kind = kind;
	t->channels = channels;
	t->height = height;
	t->width = width;
	return d->tensor_count++;
}

int model_desc_add_layer(struct model_desc *d, const struct model_layer *layer,
			 struct trainer_error *err)
{
	if (grow((void **)&d->layers, &d->capacity_layers, d->layer_count,
		 sizeof(*d->layers)))
		return trainer_error_set(err, "layer '%s': out of memory", layer->name);
	d->layers[d->layer_count++] = *layer;
	return 0;
}

static int slice_ok(const struct model_desc *d, const struct tensor_slice *s)
{
	if (s->tensor < 0 || s->tensor >= d->tensor_count)
		return 0;
	const struct model_tensor *t = &d->tensors[s->tensor];
	return s->c0 >= 0 && s->channels >= 1 && s->c0 + s->channels <= t->channels;
}

static int overlap(const struct tensor_slice *a, const struct tensor_slice *b)
{
	return a->tensor == b->tensor && a->c0 < b->c0 + b->channels &&
	       b->c0 < a->c0 + a->channels;
}

static int pooled(int size, int kernel, int stride, int pad)
{
	return (size + 2 * pad - kernel) / stride + 1;
}

/* Output size and channel checks of one layer; fills in_h..out_w. */
static int layer_shapes(const struct model_desc *d, struct model_layer *l,
			struct trainer_error *err)
{
	if (!slice_ok(d, &l->in) || !slice_ok(d, &l->out) ||
	    (l->kind == LAYER_ADD && !slice_ok(d, &l->in2)))
		return trainer_error_set(err, "layer '%s': channel slice outside its tensor", l->name);
	const struct model_tensor *ti = &d->tensors[l->in.tensor];
	const struct model_tensor *to = &d->tensors[l->out.tensor];
	int same_c = l->in.channels == l->out.channels;
	int ok = 1;

	l->in_h = ti->height;
	l->in_w = ti->width;
	l->out_h = ti->height;
	l->out_w = ti->width;
	switch (l->kind) {
	case LAYER_CONV:
	case LAYER_MAXPOOL:
	case LAYER_AVGPOOL:
		ok = l->kernel >= 1 && l->stride >= 1 && l->pad >= 0 &&
		     2 * l->pad <= l->kernel &&
		     ti->height + 2 * l->pad >= l->kernel && ti->width + 2 * l->pad >= l->kernel;
		l->out_h = ok ? pooled(ti->height, l->kernel, l->stride, l->pad) : 0;
		l->out_w = ok ? pooled(ti->width, l->kernel, l->stride, l->pad) : 0;
		ok = ok && (l->kind == LAYER_CONV || same_c);
		break;
	case LAYER_GLOBAL_AVGPOOL:
		l->out_h = l->out_w = 1;
		ok = same_c;
		break;
	case LAYER_LINEAR:
		l->out_h = l->out_w = 1;
		break;
	case LAYER_ADD: {
		const struct model_tensor *t2 = &d->tensors[l->in2.tensor];
		ok = same_c && l->in2.channels == l->in.channels &&
		     t2->height == ti->height && t2->width == ti->width;
		break;
	}
	case LAYER_BATCHNORM:
	case LAYER_RELU:
		ok = same_c;
		break;
	default:
		ok = 0;
	}
	if (!ok || to->height != l->out_h || to->width != l->out_w)
		return trainer_error_set(err, "layer '%s': shapes do not fit: in (%d, %d, %d), out (%d, %d, %d)",
					 l->name, l->in.channels, ti->height, ti->width,
					 l->out.channels, to->height, to->width);
	return 0;
}

static int add_entry(struct model_desc *d, int *capacity, const char *module,
		     const char *suffix, enum state_entry_kind kind, int ndim,
		     const int64_t *shape, size_t offset, struct trainer_error *err)
{
	if (grow((void **)&d->entries, capacity, d->entry_count, sizeof(*d->entries)))
		return trainer_error_set(err, "model '%s': out of memory", d->name);
	struct state_entry *e = &d->entries[d->entry_count++];
	memset(e, 0, sizeof(*e));
	snprintf(e->key, sizeof(e->key), "%s.%s", module, suffix);
	e->kind = kind;
	e->ndim = ndim;
	e->count = 1;
	for (int i = 0; i < ndim; i++) {
		e->shape[i] = shape[i];
		e->count *= (size_t)shape[i];
	}
	e->offset = offset;
	return 0;
}

/* Parameter/state offsets and state_dict entries of one layer. */
static int layer_params(struct model_desc *d, struct model_layer *l, int *capacity,
			struct trainer_error *err)
{
	int64_t in = l->in.channels, out = l->out.channels, k = l->kernel;
	int rc = 0;

	l->weight_offset = l->bias_offset = d->param_count;
	l->weight_count = l->bias_count = 0;
	l->state_offset = d->state_count;
	if (l->kind == LAYER_CONV) {
		int64_t shape[4] = { out, in, k, k };
		l->weight_count = (size_t)(out * in * k * k);
		rc |= add_entry(d, capacity, l->name, "weight", ENTRY_PARAM, 4, shape, l->weight_offset, err);
		l->bias_count = l->has_bias ? (size_t)out : 0;
	} else if (l->kind == LAYER_LINEAR) {
		int64_t shape[2] = { out, in * l->in_h * l->in_w };
		l->weight_count = (size_t)(shape[0] * shape[1]);
		rc |= add_entry(d, capacity, l->name, "weight", ENTRY_PARAM, 2, shape, l->weight_offset, err);
		l->has_bias = 1;
		l->bias_count = (size_t)out;
	} else if (l->kind == LAYER_BATCHNORM) {
		l->weight_count = l->bias_count = (size_t)in;
		rc |= add_entry(d, capacity, l->name, "weight", ENTRY_PARAM, 1, &in, l->weight_offset, err);
	}
	l->bias_offset = l->weight_offset + l->weight_count;
	if (l->bias_count)
		rc |= add_entry(d, capacity, l->name, "bias", ENTRY_PARAM, 1, &out, l->bias_offset, err);
	if (l->kind == LAYER_BATCHNORM) {
		rc |= add_entry(d, capacity, l->name, "running_mean", ENTRY_RUNNING, 1, &in, l->state_offset, err);
		rc |= add_entry(d, capacity, l->name, "running_var", ENTRY_RUNNING, 1, &in,
				l->state_offset + (size_t)in, err);
		rc |= add_entry(d, capacity, l->name, "num_batches_tracked", ENTRY_BATCHES_TRACKED, 0, NULL, 0, err);
		d->state_count += 2 * (size_t)in;
	}
	d->param_count += l->weight_count + l->bias_count;
	return rc ? -1 : 0;
}

/* accumulate_dx: a later layer (earlier in backward) already wrote dx
 * into an overlapping slice. */
static void layer_accumulate_flags(struct model_desc *d, int i)
{
	struct model_layer *l = &d->layers[i];

	l->accumulate_dx = l->accumulate_dx2 = 0;
	for (int j = i + 1; j < d->layer_count; j++) {
		const struct model_layer *m = &d->layers[j];
		int reads2 = m->kind == LAYER_ADD;
		if (overlap(&l->in, &m->in) || (reads2 && overlap(&l->in, &m->in2)))
			l->accumulate_dx = 1;
		if (l->kind == LAYER_ADD &&
		    (overlap(&l->in2, &m->in) || (reads2 && overlap(&l->in2, &m->in2))))
			l->accumulate_dx2 = 1;
	}
	if (l->kind == LAYER_ADD && overlap(&l->in, &l->in2))
		l->accumulate_dx2 = 1;
}

/* Marks the channels of s in bits (one byte per channel of every tensor). */
static void mark(unsigned char *bits, const size_t *base, const struct tensor_slice *s)
{
	memset(bits + base[s->tensor] + s->c0, 1, (size_t)s->channels);
}

static int covered(const unsigned char *bits, const size_t *base, const struct tensor_slice *s)
{
	for (int c = 0; c < s->channels; c++)
		if (!bits[base[s->tensor] + s->c0 + c])
			return 0;
	return 1;
}

/* Forward: every read was written before (or is the input). Backward:
 * every output slice's gradient is written by later readers (or is the
 * model output). */
static int check_dataflow(const struct model_desc *d, struct trainer_error *err)
{
	size_t *base = calloc((size_t)d->tensor_count + 1, sizeof(*base));
	int rc = 0;

	if (!base)
		return trainer_error_set(err, "model '%s': out of memory", d->name);
	for (int t = 0; t < d->tensor_count; t++)
		base[t + 1] = base[t] + (size_t)d->tensors[t].channels;
	unsigned char *bits = calloc(base[d->tensor_count], 1);
	if (!bits) {
		free(base);
		return trainer_error_set(err, "model '%s': out of memory", d->name);
	}
	memset(bits + base[d->input_tensor], 1, (size_t)d->tensors[d->input_tensor].channels);
	for (int i = 0; i < d->layer_count && !rc; i++) {
		const struct model_layer *l = &d->layers[i];
		if (!covered(bits, base, &l->in) ||
		    (l->kind == LAYER_ADD && !covered(bits, base, &l->in2)))
			rc = trainer_error_set(err, "layer '%s': reads channels no earlier layer wrote", l->name);
		else if (l->out.tensor == d->input_tensor)
			rc = trainer_error_set(err, "layer '%s': writes the model input", l->name);
		else
			mark(bits, base, &l->out);
	}
	memset(bits, 0, base[d->tensor_count]);
	memset(bits + base[d->output_tensor], 1, (size_t)d->tensors[d->output_tensor].channels);
	for (int i = d->layer_count - 1; i >= 0 && !rc; i--) {
		const struct model_layer *l = &d->layers[i];
		if (!covered(bits, base, &l->out))
			rc = trainer_error_set(err, "layer '%s': output channels nothing reads", l->name);
		mark(bits, base, &l->in);
		if (l->kind == LAYER_ADD)
			mark(bits, base, &l->in2);
	}
	free(bits);
	free(base);
	return rc;
}

int model_desc_finish(struct model_desc *d, struct trainer_error *err)
{
	int capacity = 0;

	free(d->entries);
	d->entries = NULL;
	d->entry_count = 0;
	d->param_count = d->state_count = 0;
	if (d->layer_count < 1 || d->tensor_count < 2)
		return trainer_error_set(err, "model '%s': no layers", d->name);
	d->input_tensor = 0;
	d->output_tensor = d->layers[d->layer_count - 1].out.tensor;
	for (int i = 0; i < d->layer_count; i++) {
		struct model_layer *l = &d->layers[i];
		if (layer_shapes(d, l, err) || layer_params(d, l, &capacity, err))
			return -1;
	}
	for (int i = 0; i < d->layer_count; i++)
		layer_accumulate_flags(d, i);
	return check_dataflow(d, err);
}

const struct state_entry *model_find_entry(const struct model_desc *d, const char *key)
{
	for (int i = 0; i < d->entry_count; i++)
		if (strcmp(d->entries[i].key, key) == 0)
			return &d->entries[i];
	return NULL;
}

int model_layer_of_param(const struct model_desc *d, size_t offset)
{
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *l = &d->layers[i];
		if (offset >= l->weight_offset &&
		    offset < l->weight_offset + l->weight_count + l->bias_count)
			return i;
	}
	return -1;
}
