/* eltwise.c - ReLU and the residual add (optionally followed by ReLU) on
 * oneDNN eltwise and binary primitives.
 * relu: prim[0] forward, [1] backward; temp[0] src, [1] dst, [2] diff_src,
 * [3] diff_dst. add: prim[0] binary add (+relu post-op), [1] ReLU backward
 * from dst; temp[0] src0, [1] src1, [2] dst, [3] diff of the sum.
 * What it does not do: any other activation.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

static void op_md(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	enum cpu_form f = cpu_form_for(x, &ml->in, 1, 0);
	cpu_form_md(x, f, ml->in.channels, ml->in_h, ml->in_w, &l->in_md);
	l->in2_md = l->out_md = l->in_md;
}

int cpu_relu_prims(struct cpu_exec *x, struct cpu_layer *l, int fwd_slot, int bwd_slot,
		   dnnl_alg_kind_t bwd_alg)
{
	const struct model_layer *ml = l->ml;
	char what[200];
	struct op_desc fd, bd;
	memset(&fd, 0, sizeof(fd));
	fd.kind = OP_ELTWISE_FWD;
	fd.prop = dnnl_forward_training;
	fd.alg = bwd_alg;
	fd.src = l->in_md;
	bd = fd;
	bd.kind = OP_ELTWISE_BWD;
	bd.prop = 0;
	snprintf(what, sizeof(what), "relu '%s' (mb%d c%d %dx%d %s)", ml->name, x->n,
		 ml->in.channels, ml->in_h, ml->in_w, x->dt == dnnl_bf16 ? "bf16" : "f32");
	return prim_get(&x->ctx, &fd, NULL, NULL, 0, NULL, what, &l->prim[fwd_slot]) ||
	       prim_get(&x->ctx, &bd, NULL, NULL, 0, l->prim[fwd_slot], what,
			&l->prim[bwd_slot]) ? -1 : 0;
}

static void temps(struct cpu_exec *x, struct cpu_layer *l, const struct tensor_slice *a,
		  const struct tensor_slice *b)
{
	size_t n = md_bytes(&l->in_md);
	l->temp_bytes[0] = cpu_md_is_storage(x, a, &l->in_md) ? 0 : n;
	l->temp_bytes[1] = cpu_md_is_storage(x, b, &l->in_md) ? 0 : n;
	l->temp_bytes[2] = n;
	l->temp_bytes[3] = n;
}

static int relu_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	op_md(x, l);
	temps(x, l, &l->ml->in, &l->ml->out);
	return cpu_relu_prims(x, l, 0, 1, dnnl_eltwise_relu);
}

static int relu_forward(struct cpu_exec *x, struct cpu_layer *l, int training)
{
	const struct model_layer *ml = l->ml;
	char *src, *dst = cpu_out_ptr(x, &ml->out, 0, 0, &l->out_md, l->temp[1]);
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_DST, dst } };
	return prim_exec(&x->ctx, l->prim[0], 2, a) ||
	       cpu_store(x, &ml->out, 0, 0, &l->out_md, dst) ? -1 : 0;
}

static int relu_backward(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char *src, *dd;
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src) ||
	    cpu_fetch(x, &ml->out, 1, &l->out_md, l->temp[3], &dd))
		return -1;
	char *ds = cpu_out_ptr(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, l->temp[2]);
	struct prim_arg a[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_DIFF_DST, dd },
				{ DNNL_ARG_DIFF_SRC, ds } };
	if (prim_exec(&x->ctx, l->prim[1], 3, a))
		return -1;
	return cpu_store(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, ds);
}

const struct cpu_layer_ops cpu_relu_ops = {
	.setup = relu_setup,
	.forward = relu_forward,
	.backward = relu_backward,
};

static int add_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char what[200];
	op_md(x, l);
	temps(x, l, &ml->in, &ml->in2);
	l->temp_bytes[2] = cpu_md_is_storage(x, &ml->out, &l->out_md) ? 0 : md_bytes(&l->out_md);
	l->temp_bytes[0] = md_bytes(&l->in_md); /* also the sum's gradient in backward */
	struct op_desc op;
	memset(&op, 0, sizeof(op));
	op.kind = OP_BINARY;
	op.alg = dnnl_binary_add;
	if (md_flat(&l->in_md, &op.src))
		op.src = l->in_md;
	snprintf(what, sizeof(what), "add%s '%s' (mb%d c%d %dx%d %s)", ml->relu ? "+relu" : "",
		 ml->name, x->n, ml->in.channels, ml->in_h, ml->in_w,
		 x->dt == dnnl_bf16 ? "bf16" : "f32");
	dnnl_primitive_attr_t attr = NULL;
	int key = ml->relu;
	if (ml->relu && (dnnl_primitive_attr_create(&attr) != dnnl_success || op_attr_relu(attr))) {
		if (attr)
			dnnl_primitive_attr_destroy(attr);
		return dnnl_ctx_fail(&x->ctx, "%s: 'relu': post-op refused", what);
	}
	int rc = prim_get(&x->ctx, &op, attr, &key, sizeof(key), NULL, what, &l->prim[0]);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (rc || !ml->relu)
		return rc ? -1 : 0;
	return cpu_relu_prims(x, l, 2, 1, dnnl_eltwise_relu_use_dst_for_bwd);
}

static int add_forward(struct cpu_exec *x, struct cpu_layer *l, int training)
{
	const struct model_layer *ml = l->ml;
	char *a0, *a1, *dst = cpu_out_ptr(x, &ml->out, 0, 0, &l->out_md, l->temp[2]);
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &a0) ||
	    cpu_fetch(x, &ml->in2, 0, &l->in_md, l->temp[1], &a1))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_SRC_0, a0 }, { DNNL_ARG_SRC_1, a1 },
				{ DNNL_ARG_DST, dst } };
	return prim_exec(&x->ctx, l->prim[0], 3, a) ||
	       cpu_store(x, &ml->out, 0, 0, &l->out_md, dst) ? -1 : 0;
}

static int add_backward(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char *dd, *dst;
	if (cpu_fetch(x, &ml->out, 1, &l->out_md, l->temp[3], &dd))
		return -1;
	if (ml->relu) {
		if (cpu_fetch(x, &ml->out, 0, &l->out_md, l->temp[2], &dst))
			return -1;
		char *dz = l->temp[0];
		struct prim_arg a[] = { { DNNL_ARG_DST, dst }, { DNNL_ARG_DIFF_DST, dd },
					{ DNNL_ARG_DIFF_SRC, dz } };
		if (prim_exec(&x->ctx, l->prim[1], 3, a))
			return -1;
		dd = dz;
	}
	return cpu_store(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, dd) ||
	       cpu_store(x, &ml->in2, 1, ml->accumulate_dx2, &l->in_md, dd) ? -1 : 0;
}

const struct cpu_layer_ops cpu_add_ops = {
	.setup = add_setup,
	.forward = add_forward,
	.backward = add_backward,
};
