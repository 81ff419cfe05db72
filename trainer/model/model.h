/* model.h - a network as pure data (struct model_desc) and the one set of
 * host buffers every backend, the optimizer, the fusion engine and the
 * checkpoints share (struct model).
 *
 * A model_desc is a list of tensors and a list of layers in forward order.
 * Tensors are (C, H, W) per image; the batch N is chosen per run. A layer
 * reads a channel slice of one tensor (two for LAYER_ADD) and writes a
 * channel slice of another. DenseNet's concatenation is not a layer: each
 * dense block owns ONE tensor (TENSOR_CONCAT) holding every channel the
 * block produces; dense layer i reads the prefix [0, c_i) and its 3x3 conv
 * writes its 32 new channels into the slice [c_i, c_i + 32). No copies.
 *
 * Parameters: ONE fp32 buffer for the whole model (and one gradient buffer
 * of the same size), every tensor in torchvision's layout (conv OIHW,
 * linear (out, in)) at the offset the layer records; a layer's weight and
 * bias are adjacent, so "this layer's gradients" is one (offset, count)
 * range. BatchNorm running_mean/running_var are not parameters: they live
 * in a separate `state` buffer. Keys are torchvision's state_dict names.
 *
 * Gradient rules every backend follows (the builder guarantees them):
 *  - forward: each layer overwrites its output slice;
 *  - backward (reverse layer order): each layer reads dy from its output
 *    slice's gradient and writes dx into its input slice's gradient,
 *    adding when `accumulate_dx` is set (a later layer already wrote
 *    there), overwriting otherwise; overwriting layers always cover what
 *    earlier-in-backward readers need, so no gradient buffer needs zeroing.
 *
 * What this is not: any arithmetic (backends), parameter initialisation
 * (params.c), or file formats (checkpoint.c).
 */
#ifndef HVD_TRAINER_MODEL_H
#define HVD_TRAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

enum layer_kind {
	LAYER_CONV,            /* no bias unless has_bias; kernel/stride/pad */
	LAYER_BATCHNORM,       /* per channel; optional fused ReLU (relu) */
	LAYER_RELU,
	LAYER_MAXPOOL,         /* kernel/stride/pad; padding never wins */
	LAYER_AVGPOOL,         /* kernel/stride, pad 0 (DenseNet transitions) */
	LAYER_GLOBAL_AVGPOOL,  /* (C, H, W) -> (C, 1, 1) */
	LAYER_LINEAR,          /* (C*H*W) -> (out, 1, 1), weight (out, in) + bias */
	LAYER_ADD,             /* out = in + in2 (ResNet shortcut); optional relu */
};

enum tensor_kind {
	TENSOR_PLAIN,   /* written whole by one layer */
	TENSOR_CONCAT,  /* dense-block buffer: channel slices written by several layers */
};

struct model_tensor {
	char name[96];         /* e.g. "features.denseblock1" (for messages) */
	enum tensor_kind kind;
	int channels;          /* C */
	int height, width;     /* H, W */
};

/* Channels [c0, c0 + channels) of tensor `tensor`. */
struct tensor_slice {
	int tensor;
	int c0;
	int channels;
};

struct model_layer {
	enum layer_kind kind;
	char name[96];           /* torchvision module path, e.g.
				    "features.denseblock1.denselayer1.conv1" */
	struct tensor_slice in;  /* (N, in.channels, in_h, in_w) */
	struct tensor_slice in2; /* LAYER_ADD only: same shape as in */
	struct tensor_slice out; /* (N, out.channels, out_h, out_w) */
	int in_h, in_w;          /* filled by model_desc_finish */
	int out_h, out_w;
	int kernel, stride, pad; /* conv and pools */
	int has_bias;            /* conv (never in our models), linear (always) */
	int relu;                /* BATCHNORM and ADD: ReLU applied after */
	int accumulate_dx;       /* backward adds into in's gradient */
	int accumulate_dx2;      /* ... and into in2's (ADD) */
	/* Parameters (filled by model_desc_finish; counts are 0 if none):
	 * conv weight (out, in, k, k); BN weight = gamma (C), bias = beta (C);
	 * linear weight (out, in), bias (out). bias_offset =
	 * weight_offset + weight_count. */
	size_t weight_offset, weight_count;
	size_t bias_offset, bias_count;
	size_t state_offset;     /* BN: running_mean (C) here, running_var (C) next */
};

enum state_entry_kind {
	ENTRY_PARAM,            /* learnable, in params/grads */
	ENTRY_RUNNING,          /* BN running_mean / running_var, in state */
	ENTRY_BATCHES_TRACKED,  /* BN num_batches_tracked: I64 scalar, model->batches_tracked */
};

/* One torchvision state_dict key, in state_dict order. */
struct state_entry {
	char key[112];          /* e.g. "features.norm0.running_var" */
	enum state_entry_kind kind;
	int ndim;               /* 0 for num_batches_tracked */
	int64_t shape[4];
	size_t offset;          /* into params (ENTRY_PARAM) or state (ENTRY_RUNNING) */
	size_t count;           /* elements (1 for the scalar) */
};

struct model_desc {
	char name[32];           /* "densenet121", "resnet50", "densenet-small", "layer" */
	int input_tensor;        /* always 0: (3, S, S) normalised image, or a layer test's input */
	int output_tensor;       /* the last layer's output: (classes, 1, 1) for networks */
	int classes;             /* 14 for CheXNet; 0 for a layer test */
	struct model_tensor *tensors;
	int tensor_count;
	struct model_layer *layers;
	int layer_count;
	size_t param_count;      /* learnable floats: 6,968,206 for DenseNet-121/14 */
	size_t state_count;      /* running-stat floats */
	struct state_entry *entries;
	int entry_count;
	int capacity_tensors, capacity_layers; /* builder bookkeeping */
};

/* --- Builder (model/desc.c). Tests build one-layer models with it. --- */
void model_desc_init(struct model_desc *d, const char *name);
/* Returns the new tensor's index, or -1 (err set). */
int model_desc_add_tensor(struct model_desc *d, const char *name,
			  enum tensor_kind kind, int channels, int height,
			  int width, struct trainer_error *err);
/* Appends a copy of *layer (name, kind, in/out slices, kernel..relu set
 * by the caller). Returns 0 or -1. */
int model_desc_add_layer(struct model_desc *d, const struct model_layer *layer,
			 struct trainer_error *err);
/* Checks shapes, fills in_h..out_w, offsets, accumulate flags, entries,
 * output_tensor. Returns 0 or -1 naming the bad layer. */
int model_desc_finish(struct model_desc *d, struct trainer_error *err);
void model_desc_free(struct model_desc *d);

/* --- The models (model/densenet.c, model/resnet.c). --- */
struct densenet_config {
	int growth;              /* 32 for DenseNet-121 */
	int blocks[4];           /* layers per block: 6, 12, 24, 16 */
	int init_features;       /* 64 */
	int bn_size;             /* 4: bottleneck width = bn_size * growth */
};
extern const struct densenet_config densenet121_config;
int model_densenet(struct model_desc *d, const struct densenet_config *cfg,
		   int image_size, int classes, struct trainer_error *err);
int model_resnet50(struct model_desc *d, int image_size, int classes,
		   struct trainer_error *err);
/* By name: "densenet121" or "resnet50". */
int model_by_name(struct model_desc *d, const char *name, int image_size,
		  int classes, struct trainer_error *err);

/* --- The last feature maps (model/features.c): what class activation
 * maps read. --- */
struct model_features {
	int tensor;                /* the tensor the global average pooling reads */
	int channels, height, width;
	int classifier;            /* the linear layer after the pooling: weight (classes, channels) */
};
/* 0, or -1 naming the model when its classifier does not read a global
 * average pooling of one whole tensor (a layer test's model). */
int model_features_find(const struct model_desc *d, struct model_features *f,
			struct trainer_error *err);

/* --- The shared host buffers (params.c). --- */
struct model {
	struct model_desc desc;
	float *params;             /* (param_count) fp32 master weights, torchvision layouts */
	float *grads;              /* (param_count) written by backward */
	float *state;              /* (state_count) BN running_mean/var */
	int64_t batches_tracked;   /* every BN's num_batches_tracked (all equal) */
};

/* Takes ownership of *desc (moved into m->desc). Buffers zeroed, running
 * var 1. Returns 0 or -1. */
int model_create(struct model *m, struct model_desc *desc, struct trainer_error *err);
/* torchvision's initialisation: conv kaiming_normal (fan_out for ResNet,
 * fan_in for DenseNet), BN gamma 1 beta 0, linear U(+-1/sqrt(in)) with
 * DenseNet's bias 0; deterministic in seed. */
void model_init_params(struct model *m, uint64_t seed);
void model_destroy(struct model *m);
/* The entry called key, or NULL. */
const struct state_entry *model_find_entry(const struct model_desc *d, const char *key);
/* Index of the layer whose parameters contain params[offset], or -1. */
int model_layer_of_param(const struct model_desc *d, size_t offset);

#endif
