/* backend/cpu/pooling.c - max pooling (3x3/2 pad 1: padding never wins) and average
 * pooling (transitions, global average pool) on oneDNN. An average pool
 * whose windows tile each image exactly (kernel == stride, no padding)
 * runs on the stacked layout {1, C, N*H, W} directly: windows never cross
 * an image, so the DenseNet transition writes the next block's buffer
 * without a copy. prim[0] forward, [1] backward; temp[0] src, [1] dst,
 * [2] diff_src, [3] diff_dst. What it does not do: adaptive pooling with
 * uneven windows.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

static int pool_setup(struct cpu_exec *x, struct cpu_layer *l, int max)
{
	const struct model_layer *ml = l->ml;
	char what[200];
	int kh = ml->kernel, kw = ml->kernel, sh = ml->stride, sw = ml->stride;
	if (ml->kind == LAYER_GLOBAL_AVGPOOL)
		kh = sh = ml->in_h, kw = sw = ml->in_w;
	int aligned = !max && ml->pad == 0 && kh == sh && kw == sw &&
		      ml->in_h == ml->out_h * kh && ml->in_w == ml->out_w * kw;
	enum cpu_form f = cpu_form_for(x, &ml->in, aligned, 0);
	if (f == FORM_STACKED && cpu_form_for(x, &ml->out, 1, 0) != FORM_STACKED)
		f = FORM_BLOCKED;
	if (f == FORM_NCHW && ml->in.channels % x->ctx.isa.block)
		f = FORM_BLOCKED;
	cpu_form_md(x, f, ml->in.channels, ml->in_h, ml->in_w, &l->in_md);
	cpu_form_md(x, f, ml->out.channels, ml->out_h, ml->out_w, &l->out_md);
	dnnl_alg_kind_t alg = max ? dnnl_pooling_max : dnnl_pooling_avg_include_padding;
	struct op_desc fd, bd;
	memset(&fd, 0, sizeof(fd));
	fd.kind = OP_POOL_FWD;
	fd.prop = dnnl_forward_training;
	fd.alg = alg;
	fd.src = l->in_md;
	fd.dst = l->out_md;
	fd.strides[0] = sh, fd.strides[1] = sw;
	fd.kernel[0] = kh, fd.kernel[1] = kw;
	fd.pad[0] = fd.pad[1] = ml->pad;
	bd = fd;
	bd.kind = OP_POOL_BWD;
	bd.prop = 0;
	snprintf(what, sizeof(what), "%s pool '%s' (mb%d c%d %dx%d k%dx%d s%d p%d %s)",
		 max ? "max" : "avg", ml->name, x->n, ml->in.channels, ml->in_h, ml->in_w, kh,
		 kw, sh, ml->pad, x->dt == dnnl_bf16 ? "bf16" : "f32");
	if (prim_get(&x->ctx, &fd, NULL, NULL, 0, NULL, what, &l->prim[0]) ||
	    prim_get(&x->ctx, &bd, NULL, NULL, 0, l->prim[0], what, &l->prim[1]))
		return -1;
	l->ws_bytes = max ? prim_arg_bytes(l->prim[0], DNNL_ARG_WORKSPACE) : 0;
	l->temp_bytes[0] = cpu_md_is_storage(x, &ml->in, &l->in_md) ? 0 : md_bytes(&l->in_md);
	l->temp_bytes[1] = cpu_md_is_storage(x, &ml->out, &l->out_md) ? 0 : md_bytes(&l->out_md);
	l->temp_bytes[2] = md_bytes(&l->in_md);
	l->temp_bytes[3] = l->temp_bytes[1];
	return 0;
}

static int maxpool_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	return pool_setup(x, l, 1);
}

static int avgpool_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	return pool_setup(x, l, 0);
}

static int pool_forward(struct cpu_exec *x, struct cpu_layer *l, int training)
{
	const struct model_layer *ml = l->ml;
	char *src, *dst = cpu_out_ptr(x, &ml->out, 0, 0, &l->out_md, l->temp[1]);
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_DST, dst },
				{ DNNL_ARG_WORKSPACE, l->ws } };
	return prim_exec(&x->ctx, l->prim[0], 3, a) ||
	       cpu_store(x, &ml->out, 0, 0, &l->out_md, dst) ? -1 : 0;
}

static int pool_backward(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char *dd;
	if (cpu_fetch(x, &ml->out, 1, &l->out_md, l->temp[3], &dd))
		return -1;
	char *ds = cpu_out_ptr(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, l->temp[2]);
	struct prim_arg a[] = { { DNNL_ARG_DIFF_DST, dd }, { DNNL_ARG_DIFF_SRC, ds },
				{ DNNL_ARG_WORKSPACE, l->ws } };
	if (prim_exec(&x->ctx, l->prim[1], 3, a))
		return -1;
	return cpu_store(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, ds);
}

const struct cpu_layer_ops cpu_maxpool_ops = {
	.setup = maxpool_setup,
	.forward = pool_forward,
	.backward = pool_backward,
};

const struct cpu_layer_ops cpu_avgpool_ops = {
	.setup = avgpool_setup,
	.forward = pool_forward,
	.backward = pool_backward,
};
