/* model/features.c - where a network's last feature maps are: the tensor
 * that its global average pooling reads, and the classifier (the linear
 * layer on the pooled vector) whose weights make class activation maps
 * (CAM, Zhou et al. 2016) out of them. DenseNet-121: features.norm5's
 * output after its ReLU (1024 channels, size/32); ResNet-50: layer4's
 * output (2048 channels, size/32).
 * What it does not do: compute a CAM (eval/cam.h) or hold any data.
 */
#include "model/model.h"

static int refuse(const struct model_desc *d, const char *why, struct trainer_error *err)
{
	return trainer_error_set(err, "class activation maps: model '%s': %s", d->name, why);
}

int model_features_find(const struct model_desc *d, struct model_features *f,
			struct trainer_error *err)
{
	if (d->layer_count < 2 || d->classes < 1)
		return refuse(d, "not a classifier network", err);
	const struct model_layer *fc = &d->layers[d->layer_count - 1];
	const struct model_layer *gap = &d->layers[d->layer_count - 2];
	if (fc->kind != LAYER_LINEAR || gap->kind != LAYER_GLOBAL_AVGPOOL ||
	    fc->in.tensor != gap->out.tensor)
		return refuse(d, "its classifier does not read a global average pooling", err);
	const struct model_tensor *t = &d->tensors[gap->in.tensor];
	if (gap->in.c0 != 0 || gap->in.channels != t->channels ||
	    fc->in.channels != t->channels || fc->out.channels != d->classes)
		return refuse(d, "the pooling does not read one whole tensor", err);
	*f = (struct model_features){
		.tensor = gap->in.tensor, .channels = t->channels,
		.height = t->height, .width = t->width, .classifier = d->layer_count - 1,
	};
	return 0;
}
