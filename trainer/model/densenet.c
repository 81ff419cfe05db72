/* model/densenet.c - DenseNet as torchvision builds it (W1), as a
 * struct model_desc: conv0 7x7/2, norm0+relu, pool0 3x3/2; dense blocks
 * (norm1+relu, 1x1 conv to bn_size*growth, norm2+relu, 3x3 conv to growth
 * channels written into the block's buffer); transitions (norm+relu, 1x1
 * conv halving channels, 2x2 average pool written into the next block's
 * buffer); norm5+relu, global average pool, classifier.
 * Every block is one TENSOR_CONCAT buffer: no concatenation copies.
 * What it does not do: hold weights (params.c) or compute (backends).
 */
#include <stdio.h>
#include <string.h>

#include "model/model.h"

const struct densenet_config densenet121_config = {
	.growth = 32, .blocks = { 6, 12, 24, 16 }, .init_features = 64, .bn_size = 4,
};

struct builder {
	struct model_desc *d;
	struct trainer_error *err;
	int failed;
};

static int tensor(struct builder *b, const char *name, enum tensor_kind kind,
		  int c, int h, int w)
{
	int t = model_desc_add_tensor(b->d, name, kind, c, h, w, b->err);
	if (t < 0)
		b->failed = 1;
	return t;
}

/* One layer from in (slice) to out (slice). */
static void layer(struct builder *b, enum layer_kind kind, const char *name,
		  struct tensor_slice in, struct tensor_slice out, int kernel,
		  int stride, int pad, int relu)
{
	struct model_layer l;

	if (b->failed)
		return;
	memset(&l, 0, sizeof(l));
	l.kind = kind;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.in = in;
	l.out = out;
	l.kernel = kernel;
	l.stride = stride;
	l.pad = pad;
	l.relu = relu;
	if (model_desc_add_layer(b->d, &l, b->err))
		b->failed = 1;
}

static struct tensor_slice whole(struct builder *b, int t)
{
	return (struct tensor_slice){ t, 0, t >= 0 ? b->d->tensors[t].channels : 0 };
}

/* BN(+ReLU) of in into a new plain tensor; returns it. */
static int norm_relu(struct builder *b, const char *name, struct tensor_slice in, int size)
{
	int t = tensor(b, name, TENSOR_PLAIN, in.channels, size, size);
	if (t >= 0)
		layer(b, LAYER_BATCHNORM, name, in, whole(b, t), 0, 0, 0, 1);
	return t;
}

/* Conv of in into a new plain tensor; returns it. */
static int conv(struct builder *b, const char *name, struct tensor_slice in,
		int out_c, int kernel, int stride, int pad, int out_size)
{
	int t = tensor(b, name, TENSOR_PLAIN, out_c, out_size, out_size);
	if (t >= 0)
		layer(b, LAYER_CONV, name, in, whole(b, t), kernel, stride, pad, 0);
	return t;
}

/* Dense layers of block `index` into buffer `buf` (first c0 channels
 * already written). Returns the block's channel count. */
static int dense_block(struct builder *b, const struct densenet_config *cfg,
		       int index, int buf, int c0, int size)
{
	int width = cfg->bn_size * cfg->growth;
	char name[96];
	int c = c0;

	for (int i = 1; i <= cfg->blocks[index - 1] && !b->failed; i++) {
		char prefix[80];
		snprintf(prefix, sizeof(prefix), "features.denseblock%d.denselayer%d", index, i);
		snprintf(name, sizeof(name), "%s.norm1", prefix);
		int t1 = norm_relu(b, name, (struct tensor_slice){ buf, 0, c }, size);
		snprintf(name, sizeof(name), "%s.conv1", prefix);
		int t2 = conv(b, name, whole(b, t1), width, 1, 1, 0, size);
		snprintf(name, sizeof(name), "%s.norm2", prefix);
		int t3 = norm_relu(b, name, whole(b, t2), size);
		snprintf(name, sizeof(name), "%s.conv2", prefix);
		layer(b, LAYER_CONV, name, whole(b, t3),
		      (struct tensor_slice){ buf, c, cfg->growth }, 3, 1, 1, 0);
		c += cfg->growth;
	}
	return c;
}

static int block_buffer(struct builder *b, const struct densenet_config *cfg,
			int index, int c0, int size)
{
	char name[64];

	snprintf(name, sizeof(name), "features.denseblock%d", index);
	return tensor(b, name, TENSOR_CONCAT, c0 + cfg->blocks[index - 1] * cfg->growth,
		      size, size);
}

/* Stem: conv0, norm0+relu0, pool0 into block 1's buffer. */
static int stem(struct builder *b, const struct densenet_config *cfg, int size)
{
	int half = (size + 1) / 2;  /* 7x7/2 pad 3, then 3x3/2 pad 1 */
	int t = conv(b, "features.conv0", whole(b, 0), cfg->init_features, 7, 2, 3, half);
	t = norm_relu(b, "features.norm0", whole(b, t), half);
	int buf = block_buffer(b, cfg, 1, cfg->init_features, (half + 1) / 2);
	layer(b, LAYER_MAXPOOL, "features.pool0", whole(b, t),
	      (struct tensor_slice){ buf, 0, cfg->init_features }, 3, 2, 1, 0);
	return buf;
}

int model_densenet(struct model_desc *d, const struct densenet_config *cfg,
		   int image_size, int classes, struct trainer_error *err)
{
	struct builder b = { d, err, 0 };
	int size = ((image_size + 1) / 2 + 1) / 2;  /* after conv0 and pool0 */
	char name[64];

	if (image_size < 32)
		return trainer_error_set(err, "--size: '%d': DenseNet needs at least 32 pixels", image_size);
	model_desc_init(d, cfg == &densenet121_config ? "densenet121" : "densenet");
	d->classes = classes;
	tensor(&b, "input", TENSOR_PLAIN, 3, image_size, image_size);
	int buf = stem(&b, cfg, image_size);
	int c = cfg->init_features;
	for (int i = 1; i <= 4 && !b.failed; i++) {
		c = dense_block(&b, cfg, i, buf, c, size);
		if (i == 4)
			break;
		snprintf(name, sizeof(name), "features.transition%d.norm", i);
		int t = norm_relu(&b, name, whole(&b, buf), size);
		snprintf(name, sizeof(name), "features.transition%d.conv", i);
		t = conv(&b, name, whole(&b, t), c / 2, 1, 1, 0, size);
		c /= 2;
		size /= 2;
		buf = block_buffer(&b, cfg, i + 1, c, size);
		snprintf(name, sizeof(name), "features.transition%d.pool", i);
		layer(&b, LAYER_AVGPOOL, name, whole(&b, t),
		      (struct tensor_slice){ buf, 0, c }, 2, 2, 0, 0);
	}
	int t = norm_relu(&b, "features.norm5", whole(&b, buf), size);
	int pooled = tensor(&b, "pool", TENSOR_PLAIN, c, 1, 1);
	layer(&b, LAYER_GLOBAL_AVGPOOL, "pool", whole(&b, t), whole(&b, pooled), 0, 0, 0, 0);
	int logits = tensor(&b, "classifier", TENSOR_PLAIN, classes, 1, 1);
	layer(&b, LAYER_LINEAR, "classifier", whole(&b, pooled), whole(&b, logits), 0, 0, 0, 0);
	if (b.failed || model_desc_finish(d, err)) {
		model_desc_free(d);
		return -1;
	}
	return 0;
}
