/* model/resnet.c - ResNet-50 as torchvision builds it (v1.5: the stride
 * sits on each bottleneck's 3x3 conv), as a struct model_desc: conv1
 * 7x7/2, bn1+relu, maxpool 3x3/2, layers 1-4 of 3/4/6/3 bottlenecks
 * (1x1, 3x3, 1x1 expanding 4x; a 1x1 downsample + BN on each layer's
 * first block), shortcut add + relu, global average pool, fc.
 * What it does not do: hold weights (params.c) or compute (backends).
 */
#include <stdio.h>
#include <string.h>

#include "model/model.h"

struct rbuilder {
	struct model_desc *d;
	struct trainer_error *err;
	int failed;
};

static int new_tensor(struct rbuilder *b, const char *name, int c, int size)
{
	int t = model_desc_add_tensor(b->d, name, TENSOR_PLAIN, c, size, size, b->err);
	if (t < 0)
		b->failed = 1;
	return t;
}

static struct tensor_slice all(struct rbuilder *b, int t)
{
	return (struct tensor_slice){ t, 0, t >= 0 ? b->d->tensors[t].channels : 0 };
}

/* Adds `kind` from tensor in to a new tensor of out_c channels at
 * out_size; returns the new tensor. */
static int op(struct rbuilder *b, enum layer_kind kind, const char *name, int in,
	      int out_c, int out_size, int kernel, int stride, int pad, int relu)
{
	struct model_layer l;
	int out = new_tensor(b, name, out_c, out_size);

	if (b->failed)
		return -1;
	memset(&l, 0, sizeof(l));
	l.kind = kind;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.in = all(b, in);
	l.out = all(b, out);
	l.kernel = kernel;
	l.stride = stride;
	l.pad = pad;
	l.relu = relu;
	if (model_desc_add_layer(b->d, &l, b->err))
		b->failed = 1;
	return out;
}

static int add_relu(struct rbuilder *b, const char *name, int x, int shortcut)
{
	struct model_layer l;
	int out = new_tensor(b, name, b->failed ? 1 : b->d->tensors[x].channels,
			     b->failed ? 1 : b->d->tensors[x].height);

	if (b->failed)
		return -1;
	memset(&l, 0, sizeof(l));
	l.kind = LAYER_ADD;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.in = all(b, x);
	l.in2 = all(b, shortcut);
	l.out = all(b, out);
	l.relu = 1;
	if (model_desc_add_layer(b->d, &l, b->err))
		b->failed = 1;
	return out;
}

/* One bottleneck; returns its output tensor. */
static int bottleneck(struct rbuilder *b, const char *prefix, int x, int width,
		      int stride, int in_size)
{
	int out_size = (in_size - 1) / stride + 1;
	char name[96];

	snprintf(name, sizeof(name), "%s.conv1", prefix);
	int t = op(b, LAYER_CONV, name, x, width, in_size, 1, 1, 0, 0);
	snprintf(name, sizeof(name), "%s.bn1", prefix);
	t = op(b, LAYER_BATCHNORM, name, t, width, in_size, 0, 0, 0, 1);
	snprintf(name, sizeof(name), "%s.conv2", prefix);
	t = op(b, LAYER_CONV, name, t, width, out_size, 3, stride, 1, 0);
	snprintf(name, sizeof(name), "%s.bn2", prefix);
	t = op(b, LAYER_BATCHNORM, name, t, width, out_size, 0, 0, 0, 1);
	snprintf(name, sizeof(name), "%s.conv3", prefix);
	t = op(b, LAYER_CONV, name, t, 4 * width, out_size, 1, 1, 0, 0);
	snprintf(name, sizeof(name), "%s.bn3", prefix);
	t = op(b, LAYER_BATCHNORM, name, t, 4 * width, out_size, 0, 0, 0, 0);
	int shortcut = x;
	if (!b->failed && (stride != 1 || b->d->tensors[x].channels != 4 * width)) {
		snprintf(name, sizeof(name), "%s.downsample.0", prefix);
		shortcut = op(b, LAYER_CONV, name, x, 4 * width, out_size, 1, stride, 0, 0);
		snprintf(name, sizeof(name), "%s.downsample.1", prefix);
		shortcut = op(b, LAYER_BATCHNORM, name, shortcut, 4 * width, out_size, 0, 0, 0, 0);
	}
	snprintf(name, sizeof(name), "%s.add", prefix);
	return add_relu(b, name, t, shortcut);
}

int model_resnet50(struct model_desc *d, int image_size, int classes,
		   struct trainer_error *err)
{
	static const int blocks[4] = { 3, 4, 6, 3 };
	struct rbuilder b = { d, err, 0 };
	int half = (image_size + 1) / 2, size = (half + 1) / 2;

	if (image_size < 32)
		return trainer_error_set(err, "--size: '%d': ResNet-50 needs at least 32 pixels", image_size);
	model_desc_init(d, "resnet50");
	d->classes = classes;
	int x = new_tensor(&b, "input", 3, image_size);
	x = op(&b, LAYER_CONV, "conv1", x, 64, half, 7, 2, 3, 0);
	x = op(&b, LAYER_BATCHNORM, "bn1", x, 64, half, 0, 0, 0, 1);
	x = op(&b, LAYER_MAXPOOL, "maxpool", x, 64, size, 3, 2, 1, 0);
	for (int layer = 0; layer < 4 && !b.failed; layer++) {
		for (int i = 0; i < blocks[layer] && !b.failed; i++) {
			char prefix[32];
			int stride = (layer > 0 && i == 0) ? 2 : 1;
			snprintf(prefix, sizeof(prefix), "layer%d.%d", layer + 1, i);
			x = bottleneck(&b, prefix, x, 64 << layer, stride, size);
			size = (size - 1) / stride + 1;
		}
	}
	x = op(&b, LAYER_GLOBAL_AVGPOOL, "avgpool", x, 2048, 1, 0, 0, 0, 0);
	op(&b, LAYER_LINEAR, "fc", x, classes, 1, 0, 0, 0, 0);
	if (b.failed || model_desc_finish(d, err)) {
		model_desc_free(d);
		return -1;
	}
	return 0;
}
