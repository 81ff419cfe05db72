/* cpu_internal.h - the cpu backend's plan of a model: how each model
 * tensor is stored (layout, data type, buffers) and what each layer runs.
 *
 * Layouts, with b the channel block oneDNN's kernels use on this ISA
 * (x->ctx.isa.block: 8 on SSE4.1/AVX/AVX2, 16 on AVX-512 and AMX):
 *  - STACKED "C<b>nhw<b>c": channel blocks of b outermost, batch inside.
 *    Any channel slice [c0, c0+c) (multiples of b) is the dense nChw<b>c
 *    tensor {1, c, N*H, W}, so BN(+ReLU), ReLU, the 1x1 conv, adds and
 *    kernel==stride pools run on it zero-copy with the fast kernels. Used
 *    for every tensor whose layers are all pixel-wise or image-aligned
 *    pools, counting only the layers that read or write the whole tensor:
 *    an image op on a channel slice (the 3x3 conv writing a dense block's
 *    new channels, the stem's max pool writing its first ones) goes
 *    through a temporary in any layout, so dense-block buffers are stacked.
 *  - BLOCKED: ordinary nChw<b>c {N, C, H, W}; tensors that a 3x3/7x7 or
 *    strided conv or a max pool reads or writes whole (they need image
 *    boundaries).
 *  - NCHW32: plain fp32 NCHW (the model input, the linear layer).
 * A layer whose operand layout differs from the tensor's runs on a
 * temporary and one reorder moves it (the 3x3 conv's 32 new channels into
 * the block buffer, and in bf16 the NHWC operands AMX needs).
 * What this is not: the ops table (backend_cpu.c).
 */
#ifndef HVD_TRAINER_CPU_INTERNAL_H
#define HVD_TRAINER_CPU_INTERNAL_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/cpu/dnnl_ctx.h"
#include "model/model.h"
#include "backend/cpu/prim_cache.h"

enum cpu_layout { CPU_STACKED, CPU_BLOCKED, CPU_NCHW32 };

struct cpu_tensor {
	enum cpu_layout layout;
	dnnl_data_type_t dt;
	int n, c, h, w;            /* (N, C, H, W) */
	size_t bytes;
	char *act;                 /* activations (persistent or arena) */
	char *grad;                /* gradient (arena) */
	int recompute;             /* memory-efficient: rebuilt in backward */
	int producer;              /* layer writing it last in forward (-1: input) */
	int last_reader;           /* last layer reading it in forward */
	long act_off[2];           /* arena offsets, forward / backward phase
				      (recompute only; -1 otherwise) */
	long grad_off;             /* arena offset of the gradient */
};

/* A (descriptor, pointer) pair: what an op reads or writes. */
struct cpu_view {
	md_t md;
	char *ptr;
};

struct cpu_layer;
struct cpu_exec;

/* One layer kind (conv.c, backend/cpu/batchnorm.c, backend/cpu/pooling.c, eltwise.c, linear.c). */
struct cpu_layer_ops {
	int (*setup)(struct cpu_exec *x, struct cpu_layer *l);   /* primitives + sizes */
	int (*forward)(struct cpu_exec *x, struct cpu_layer *l, int training);
	int (*backward)(struct cpu_exec *x, struct cpu_layer *l);
	int (*load)(struct cpu_exec *x, struct cpu_layer *l);    /* params changed */
};

#define CPU_MAX_PRIMS 8
#define CPU_MAX_TEMPS 6

struct cpu_layer {
	const struct model_layer *ml;
	const struct cpu_layer_ops *ops;
	int index;
	struct prim *prim[CPU_MAX_PRIMS];     /* kind-specific meaning */
	/* operand descriptors of the op itself (may differ from storage) */
	md_t in_md, in2_md, out_md;
	/* conv backward primitives' own operand layouts (they differ from
	 * in_md/out_md where the ISA has no blocked kernel for them) */
	md_t bw_src_md, bw_ddst_md, bd_ddst_md;
	/* temporaries for a layout change; sizes set by setup, pointers by
	 * the arena (valid during this layer's forward or backward only) */
	size_t temp_bytes[CPU_MAX_TEMPS];
	char *temp[CPU_MAX_TEMPS];
	long temp_off[3][CPU_MAX_TEMPS];      /* forward, backward, recompute */
	/* persistent per-layer buffers */
	char *weights, *weights_bwd;          /* conv weights in the prims' formats */
	float *mean, *var;                    /* BN batch statistics (C) */
	char *ws;                             /* BN+ReLU / max pool workspace */
	size_t ws_bytes;
	long ws_off[2];                       /* arena (recomputed BN only), else -1 */
	int skip_dx;                          /* input gradient not needed */
};

struct cpu_exec {
	struct dnnl_ctx ctx;
	struct model *m;
	struct backend_options opt;
	dnnl_data_type_t dt;                  /* activation type: f32 or bf16 */
	int n;                                /* batch of the current plan */
	struct cpu_tensor *t;                 /* desc.tensor_count */
	struct cpu_layer *l;                  /* desc.layer_count */
	char *arena;                          /* gradients, temporaries, recomputed */
	size_t arena_bytes;
	char *persist;                        /* activations, ws, stats, weights */
	size_t persist_bytes;
	float *x_nchw;                        /* normalised input (N, 3, S, S) */
	int want_dx;
	long moves;                           /* layout moves run so far */
};

/* cpu_plan.c */
int cpu_plan_build(struct cpu_exec *x, int n, struct trainer_error *err);
void cpu_plan_free(struct cpu_exec *x);
/* The view of tensor slice s in its storage; `grad` picks the gradient. */
void cpu_slice_view(const struct cpu_exec *x, const struct tensor_slice *s, int grad,
		    struct cpu_view *v);
/* A dense view (no reorder needed) exists for this slice? */
int cpu_slice_dense(const struct cpu_exec *x, const struct tensor_slice *s);
/* How an op sees its operands: the stacked alias {1, c, N*H, W} (pixel-wise
 * ops on a stacked tensor), or (N, c, H, W) blocked / NHWC (AMX convs) /
 * NCHW (fp32 operands with c not a multiple of the block). */
enum cpu_form { FORM_STACKED, FORM_BLOCKED, FORM_NHWC, FORM_NCHW };
/* pixelwise: the op treats pixels independently (or pools image-aligned
 * windows); amx: a bf16 conv operand. */
enum cpu_form cpu_form_for(const struct cpu_exec *x, const struct tensor_slice *s,
			   int pixelwise, int amx);
void cpu_form_md(const struct cpu_exec *x, enum cpu_form f, int c, int h, int w,
		 md_t *md);

/* cpu_move.c: moving data between an op's descriptor and storage */
int cpu_fetch(struct cpu_exec *x, const struct tensor_slice *s, int grad,
	      const md_t *md, char *temp, char **ptr);
int cpu_store(struct cpu_exec *x, const struct tensor_slice *s, int grad, int accumulate,
	      const md_t *md, char *src);
/* Where an op writes its result for slice s: the storage itself when
 * possible, else temp (then cpu_store). */
char *cpu_out_ptr(struct cpu_exec *x, const struct tensor_slice *s, int grad, int accumulate,
		  const md_t *md, char *temp);
int cpu_md_is_storage(const struct cpu_exec *x, const struct tensor_slice *s,
		      const md_t *md);

int cpu_err(struct cpu_exec *x, struct trainer_error *err);
/* Point temporaries (and recomputed tensors) at their phase's blocks:
 * 0 forward, 1 backward, 2 recompute-in-backward. */
void cpu_bind_temps(struct cpu_exec *x, struct cpu_layer *l, int phase);
void cpu_bind_phase(struct cpu_exec *x, int phase);

/* eltwise.c: ReLU forward (training) and backward on l->in_md into
 * prim[fwd_slot] and prim[bwd_slot]; bwd_alg relu (from src) or
 * relu_use_dst_for_bwd. */
int cpu_relu_prims(struct cpu_exec *x, struct cpu_layer *l, int fwd_slot, int bwd_slot,
		   dnnl_alg_kind_t bwd_alg);
extern const struct cpu_layer_ops cpu_conv_ops, cpu_bnorm_ops, cpu_relu_ops,
	cpu_add_ops, cpu_maxpool_ops, cpu_avgpool_ops, cpu_linear_ops;

#endif
