/* gpu_table.c - which implementation runs each layer kind on the GPU.
 * Designated initialisers by enum layer_kind, so a kind added to model.h
 * without a GPU implementation leaves a NULL that tests/test_gpu_ops.c
 * catches. What it does not do: anything else.
 */
#include "backend/gpu/gpu_internal.h"

const struct gpu_layer_ops *const gpu_layer_table[GPU_LAYER_KINDS] = {
	[LAYER_CONV] = &gpu_conv_ops,
	[LAYER_BATCHNORM] = &gpu_bnorm_ops,
	[LAYER_RELU] = &gpu_relu_ops,
	[LAYER_MAXPOOL] = &gpu_maxpool_ops,
	[LAYER_AVGPOOL] = &gpu_avgpool_ops,
	[LAYER_GLOBAL_AVGPOOL] = &gpu_gap_ops,
	[LAYER_LINEAR] = &gpu_linear_ops,
	[LAYER_ADD] = &gpu_add_ops,
};

/* The same mapping as a switch without default: -Wswitch (in -Wall,
 * -Werror) stops the build when model.h gains a kind this lacks. */
const struct gpu_layer_ops *gpu_layer_ops_for(enum layer_kind kind)
{
	switch (kind) {
	case LAYER_CONV:
	case LAYER_BATCHNORM:
	case LAYER_RELU:
	case LAYER_MAXPOOL:
	case LAYER_AVGPOOL:
	case LAYER_GLOBAL_AVGPOOL:
	case LAYER_LINEAR:
	case LAYER_ADD:
		return gpu_layer_table[kind];
	}
	return NULL;
}
