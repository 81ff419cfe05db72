/* dnnl_op.h - an operation the cpu backend asks oneDNN for, as one plain
 * value (zeroed, then filled: its bytes are the primitive cache's key),
 * and the primitive descriptor made from it under oneDNN 2.x (operation
 * descriptor, then primitive descriptor) or 3.x (primitive descriptor
 * directly). Also the two post-op attributes the layers use. What this
 * does not do: cache, check the implementation (dnnl_ctx.h) or execute.
 */
#ifndef HVD_TRAINER_CPU_DNNL_OP_H
#define HVD_TRAINER_CPU_DNNL_OP_H

#include "backend/cpu/dnnl_md.h"

enum op_kind {
	OP_CONV_FWD = 1, OP_CONV_BWD_DATA, OP_CONV_BWD_WEIGHTS,
	OP_BNORM_FWD, OP_BNORM_BWD,
	OP_ELTWISE_FWD, OP_ELTWISE_BWD,
	OP_POOL_FWD, OP_POOL_BWD,
	OP_BINARY,
};

/* Operands by kind (dst of a backward op is its diff_dst, src of backward
 * data its diff_src; eltwise/bnorm/binary use src for every operand):
 *   conv:     src, wei (weights; diff weights for backward weights), dst
 *   pool:     src, dst
 * 2-d windows: strides, kernel (pooling), pad (both sides); no dilation. */
struct op_desc {
	enum op_kind kind;
	dnnl_prop_kind_t prop;       /* forward ops */
	dnnl_alg_kind_t alg;
	unsigned flags;              /* batch norm */
	float eps, alpha, beta;
	int zero;                    /* always 0 */
	md_t src, wei, dst;
	dnnl_dims_t strides, kernel, pad;
};

/* pd for op on engine (attr may be NULL; hint: the forward pd of a
 * backward op). */
dnnl_status_t op_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
			   const struct op_desc *op, const_dnnl_primitive_attr_t attr,
			   const_dnnl_primitive_desc_t hint);

/* Set attr's post-ops to one operation: a ReLU, or dst += result. */
int op_attr_relu(dnnl_primitive_attr_t attr);
int op_attr_sum(dnnl_primitive_attr_t attr);

#endif
