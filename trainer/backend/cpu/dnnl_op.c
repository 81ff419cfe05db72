/* dnnl_op.c - struct op_desc (dnnl_op.h) into a oneDNN primitive
 * descriptor, one function per major version of oneDNN's C API. What it
 * does not do: check the implementation chosen (dnnl_ctx.c).
 */
#include <stddef.h>

#include "backend/cpu/dnnl_op.h"

#if DNNL_VERSION_MAJOR >= 3

dnnl_status_t op_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
			   const struct op_desc *op, const_dnnl_primitive_attr_t attr,
			   const_dnnl_primitive_desc_t hint)
{
	md_native_t s = md_native(&op->src), w = md_native(&op->wei), d = md_native(&op->dst);
	const dnnl_dims_t no_dilation = { 0, 0 };
	const dnnl_dim_t *st = op->strides, *k = op->kernel, *p = op->pad;
	if (!s)
		return dnnl_invalid_arguments;
	switch (op->kind) {
	case OP_CONV_FWD:
		return dnnl_convolution_forward_primitive_desc_create(pd, e, op->prop, op->alg,
			s, w, NULL, d, st, no_dilation, p, p, attr);
	case OP_CONV_BWD_DATA:
		return dnnl_convolution_backward_data_primitive_desc_create(pd, e, op->alg, s, w,
			d, st, no_dilation, p, p, hint, attr);
	case OP_CONV_BWD_WEIGHTS:
		return dnnl_convolution_backward_weights_primitive_desc_create(pd, e, op->alg,
			s, w, NULL, d, st, no_dilation, p, p, hint, attr);
	case OP_BNORM_FWD:
		return dnnl_batch_normalization_forward_primitive_desc_create(pd, e, op->prop,
			s, s, op->eps, op->flags, attr);
	case OP_BNORM_BWD:
		return dnnl_batch_normalization_backward_primitive_desc_create(pd, e,
			dnnl_backward, s, s, s, op->eps, op->flags, hint, attr);
	case OP_ELTWISE_FWD:
		return dnnl_eltwise_forward_primitive_desc_create(pd, e, op->prop, op->alg, s, s,
			op->alpha, op->beta, attr);
	case OP_ELTWISE_BWD:
		return dnnl_eltwise_backward_primitive_desc_create(pd, e, op->alg, s, s, s,
			op->alpha, op->beta, hint, attr);
	case OP_POOL_FWD:
		return dnnl_pooling_forward_primitive_desc_create(pd, e, op->prop, op->alg, s, d,
			st, k, no_dilation, p, p, attr);
	case OP_POOL_BWD:
		return dnnl_pooling_backward_primitive_desc_create(pd, e, op->alg, s, d, st, k,
			no_dilation, p, p, hint, attr);
	case OP_BINARY:
		return dnnl_binary_primitive_desc_create(pd, e, op->alg, s, s, s, attr);
	}
	return dnnl_invalid_arguments;
}

static int post_op(dnnl_primitive_attr_t attr, int relu)
{
	dnnl_post_ops_t po = NULL;
	if (dnnl_post_ops_create(&po) != dnnl_success)
		return -1;
	dnnl_status_t st = relu ? dnnl_post_ops_append_eltwise(po, dnnl_eltwise_relu, 0.f, 0.f)
				: dnnl_post_ops_append_sum(po, 1.f, 0, dnnl_data_type_undef);
	if (st == dnnl_success)
		st = dnnl_primitive_attr_set_post_ops(attr, po);
	dnnl_post_ops_destroy(po);
	return st == dnnl_success ? 0 : -1;
}

#else /* oneDNN 2.x */

/* 2.x's operation descriptors, one of them filled. */
union op_2x {
	dnnl_convolution_desc_t conv;
	dnnl_batch_normalization_desc_t bnorm;
	dnnl_eltwise_desc_t eltwise;
	dnnl_pooling_v2_desc_t pool;
	dnnl_binary_desc_t binary;
};

static dnnl_status_t op_init(union op_2x *u, const struct op_desc *op)
{
	const md_t *s = &op->src, *w = &op->wei, *d = &op->dst;
	const dnnl_dims_t no_dilation = { 0, 0 };
	const dnnl_dim_t *st = op->strides, *k = op->kernel, *p = op->pad;
	switch (op->kind) {
	case OP_CONV_FWD:
		return dnnl_convolution_forward_desc_init(&u->conv, op->prop, op->alg, s, w, NULL,
			d, st, p, p);
	case OP_CONV_BWD_DATA:
		return dnnl_convolution_backward_data_desc_init(&u->conv, op->alg, s, w, d, st,
			p, p);
	case OP_CONV_BWD_WEIGHTS:
		return dnnl_convolution_backward_weights_desc_init(&u->conv, op->alg, s, w, NULL,
			d, st, p, p);
	case OP_BNORM_FWD:
		return dnnl_batch_normalization_forward_desc_init(&u->bnorm, op->prop, s,
			op->eps, op->flags);
	case OP_BNORM_BWD:
		return dnnl_batch_normalization_backward_desc_init(&u->bnorm, dnnl_backward, s, s,
			op->eps, op->flags);
	case OP_ELTWISE_FWD:
		return dnnl_eltwise_forward_desc_init(&u->eltwise, op->prop, op->alg, s,
			op->alpha, op->beta);
	case OP_ELTWISE_BWD:
		return dnnl_eltwise_backward_desc_init(&u->eltwise, op->alg, s, s, op->alpha,
			op->beta);
	case OP_POOL_FWD:
		return dnnl_pooling_v2_forward_desc_init(&u->pool, op->prop, op->alg, s, d, st, k,
			no_dilation, p, p);
	case OP_POOL_BWD:
		return dnnl_pooling_v2_backward_desc_init(&u->pool, op->alg, s, d, st, k,
			no_dilation, p, p);
	case OP_BINARY:
		return dnnl_binary_desc_init(&u->binary, op->alg, s, s, s);
	}
	return dnnl_invalid_arguments;
}

dnnl_status_t op_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
			   const struct op_desc *op, const_dnnl_primitive_attr_t attr,
			   const_dnnl_primitive_desc_t hint)
{
	union op_2x u;
	dnnl_status_t st = op_init(&u, op);
	return st != dnnl_success ? st : dnnl_primitive_desc_create(pd, &u, attr, e, hint);
}

static int post_op(dnnl_primitive_attr_t attr, int relu)
{
	dnnl_post_ops_t po = NULL;
	if (dnnl_post_ops_create(&po) != dnnl_success)
		return -1;
	dnnl_status_t st = relu ? dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, 0.f, 0.f)
				: dnnl_post_ops_append_sum(po, 1.f);
	if (st == dnnl_success)
		st = dnnl_primitive_attr_set_post_ops(attr, po);
	dnnl_post_ops_destroy(po);
	return st == dnnl_success ? 0 : -1;
}

#endif

int op_attr_relu(dnnl_primitive_attr_t attr)
{
	return post_op(attr, 1);
}

int op_attr_sum(dnnl_primitive_attr_t attr)
{
	return post_op(attr, 0);
}
