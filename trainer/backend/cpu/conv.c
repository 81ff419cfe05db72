/* conv.c - convolution on oneDNN: forward, backward data, backward
 * weights; weights reordered from the fp32 OIHW master copy into each
 * primitive's own format (bf16 for AMX) when parameters change, weight
 * gradients reordered back into model->grads (OIHW, fp32).
 * prim[0] forward, [1] backward data, [2] backward weights; each on the
 * storage's layouts, or on oneDNN's own choice where the ISA has no fast
 * kernel for those (conv_make). The algorithm follows the precision
 * (backend.h: precision_approximate): fp32 asks for the direct one
 * (exact: within fp32 rounding of ref and torchvision), tf32 and bf16
 * leave it to oneDNN (convolution_auto: 2.6 runs a 3x3 at batch > 8 as
 * Winograd on AVX-512 fp32 where its heuristic expects that faster, else
 * direct; 3.x has no CPU Winograd). The primitive's `what` names the
 * algorithm asked for.
 * temp[0] src, [1] dst / diff_dst, [2] diff_src, [3] diff_weights,
 * [4] src for backward weights, [5] diff_dst for backward data (when
 * their layouts differ from [0] and [1]).
 * What it does not do: bias (no conv in our models has one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

enum conv_kind { CONV_FWD, CONV_BWD_DATA, CONV_BWD_WEIGHTS };

/* The geometry every primitive of one conv layer shares. */
struct conv_geom {
	md_t wmd, dwmd;                 /* weights (x->dt), weight gradient (f32): any */
	dnnl_dims_t st, pad;
	dnnl_alg_kind_t alg;            /* direct (exact) or auto (oneDNN's choice) */
};

static void conv_shape(const struct cpu_exec *x, const struct model_layer *ml,
		       const struct conv_geom *g, char *buf, size_t len, const char *kind)
{
	snprintf(buf, len, "conv %s '%s' (mb%d ic%d oc%d %dx%d k%d s%d p%d %s %s)", kind,
		 ml->name, x->n, ml->in.channels, ml->out.channels, ml->in_h, ml->in_w,
		 ml->kernel, ml->stride, ml->pad, x->dt == dnnl_bf16 ? "bf16" : "f32",
		 g->alg == dnnl_convolution_direct ? "direct" : "auto");
}

static const enum op_kind op_of[] = { OP_CONV_FWD, OP_CONV_BWD_DATA, OP_CONV_BWD_WEIGHTS };

static void conv_op(const struct conv_geom *g, enum conv_kind k, const md_t *a, const md_t *b,
		    struct op_desc *op)
{
	memset(op, 0, sizeof(*op));
	op->kind = op_of[k];
	op->prop = dnnl_forward_training;
	op->alg = g->alg;
	op->src = *a;
	op->wei = k == CONV_BWD_WEIGHTS ? g->dwmd : g->wmd;
	op->dst = *b;
	memcpy(op->strides, g->st, sizeof(g->st));
	memcpy(op->pad, g->pad, sizeof(g->pad));
}

static void md_any(md_t *md)
{
	dnnl_dims_t d = { md->dims[0], md->dims[1], md->dims[2], md->dims[3] };
	md_tag(md, 4, d, md->data_type, dnnl_format_tag_any);
}

/* One primitive on activation layouts a (src or diff_src) and b (dst or
 * diff_dst). When those give a reference kernel, oneDNN picks them itself
 * (format any) and a, b become its choice: SSE4.1 has no blocked backward
 * convolutions, AVX2 none for a 3x3 backward-weights on a 2x2 map; both
 * have fast gemm kernels on plain layouts. */
static int conv_make(struct cpu_exec *x, const struct conv_geom *g, enum conv_kind k, md_t *a,
		     md_t *b, const struct prim *hint, const char *what, struct prim **out)
{
	struct op_desc op;
	static const int arg_a[] = { DNNL_ARG_SRC, DNNL_ARG_DIFF_SRC, DNNL_ARG_SRC };
	static const int arg_b[] = { DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_DST };
	conv_op(g, k, a, b, &op);
	if (prim_get(&x->ctx, &op, NULL, NULL, 0, hint, what, out) == 0)
		return 0;
	if (!x->ctx.refused_ref)
		return -1;
	md_any(a);
	md_any(b);
	conv_op(g, k, a, b, &op);
	if (prim_get(&x->ctx, &op, NULL, NULL, 0, hint, what, out))
		return -1;
	prim_md(*out, arg_a[k], a);
	prim_md(*out, arg_b[k], b);
	return 0;
}

static size_t bytes_unless(const md_t *md, const md_t *same)
{
	return md_equal(md, same) ? 0 : md_bytes(md);
}

static int conv_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char what[200];
	if (ml->has_bias)
		return dnnl_ctx_fail(&x->ctx, "layer '%s': 'bias': convolutions with bias "
				     "are not supported", ml->name);
	int pix = ml->kernel == 1 && ml->stride == 1 && ml->pad == 0;
	enum cpu_form f = cpu_form_for(x, &ml->in, pix, 1);
	if (f == FORM_STACKED && ml->out.channels % x->ctx.isa.block)
		f = FORM_BLOCKED;
	cpu_form_md(x, f, ml->in.channels, ml->in_h, ml->in_w, &l->in_md);
	cpu_form_md(x, f == FORM_NCHW ? FORM_BLOCKED : f, ml->out.channels, ml->out_h,
		    ml->out_w, &l->out_md);
	struct conv_geom g = { .st = { ml->stride, ml->stride }, .pad = { ml->pad, ml->pad },
			       .alg = precision_approximate(x->opt.precision) ? dnnl_convolution_auto
									  : dnnl_convolution_direct };
	md_weights(&g.wmd, ml->out.channels, ml->in.channels, ml->kernel, ml->kernel, x->dt,
		   dnnl_format_tag_any);
	md_weights(&g.dwmd, ml->out.channels, ml->in.channels, ml->kernel, ml->kernel, dnnl_f32,
		   dnnl_format_tag_any);
	conv_shape(x, ml, &g, what, sizeof(what), "fwd");
	if (conv_make(x, &g, CONV_FWD, &l->in_md, &l->out_md, NULL, what, &l->prim[0]))
		return -1;
	if (!l->skip_dx) {
		/* oneDNN has no fast backward data into plain NCHW (the 3-channel
		 * stem input): use the padded blocked layout there */
		l->in2_md = l->in_md;
		if (f == FORM_NCHW)
			cpu_form_md(x, FORM_BLOCKED, ml->in.channels, ml->in_h, ml->in_w, &l->in2_md);
		l->bd_ddst_md = l->out_md;
		conv_shape(x, ml, &g, what, sizeof(what), "bwd_data");
		if (conv_make(x, &g, CONV_BWD_DATA, &l->in2_md, &l->bd_ddst_md, l->prim[0], what,
			      &l->prim[1]))
			return -1;
	}
	l->bw_src_md = l->in_md;
	l->bw_ddst_md = l->out_md;
	conv_shape(x, ml, &g, what, sizeof(what), "bwd_weights");
	if (conv_make(x, &g, CONV_BWD_WEIGHTS, &l->bw_src_md, &l->bw_ddst_md, l->prim[0], what,
		      &l->prim[2]))
		return -1;
	l->temp_bytes[0] = cpu_md_is_storage(x, &ml->in, &l->in_md) ? 0 : md_bytes(&l->in_md);
	l->temp_bytes[1] = md_bytes(&l->out_md) > md_bytes(&l->bw_ddst_md) ?
			   md_bytes(&l->out_md) : md_bytes(&l->bw_ddst_md);
	l->temp_bytes[2] = l->skip_dx ? 0 : md_bytes(&l->in2_md);
	l->temp_bytes[3] = prim_arg_bytes(l->prim[2], DNNL_ARG_DIFF_WEIGHTS);
	l->temp_bytes[4] = bytes_unless(&l->bw_src_md, &l->in_md);
	l->temp_bytes[5] = l->skip_dx ? 0 : bytes_unless(&l->bd_ddst_md, &l->bw_ddst_md);
	return 0;
}

static int weights_into(struct cpu_exec *x, struct cpu_layer *l, struct prim *p, char **buf)
{
	const struct model_layer *ml = l->ml;
	md_t wmd, oihw, *md = &wmd;
	struct prim *r;
	prim_md(p, DNNL_ARG_WEIGHTS, md);
	if (!*buf && posix_memalign((void **)buf, 64, md_bytes(md)) != 0) {
		*buf = NULL;
		return dnnl_ctx_fail(&x->ctx, "layer '%s': 'weights': out of memory", ml->name);
	}
	md_weights(&oihw, ml->out.channels, ml->in.channels, ml->kernel, ml->kernel, dnnl_f32,
		   dnnl_abcd);
	if (prim_reorder(&x->ctx, &oihw, md, 0, "reorder conv weights", &r))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_FROM, x->m->params + ml->weight_offset },
				{ DNNL_ARG_TO, *buf } };
	return prim_exec(&x->ctx, r, 2, a);
}

static int conv_load(struct cpu_exec *x, struct cpu_layer *l)
{
	if (weights_into(x, l, l->prim[0], &l->weights))
		return -1;
	if (!l->prim[1])
		return 0;
	md_t fwd, bwd;
	prim_md(l->prim[0], DNNL_ARG_WEIGHTS, &fwd);
	prim_md(l->prim[1], DNNL_ARG_WEIGHTS, &bwd);
	if (md_equal(&fwd, &bwd))
		return 0;
	return weights_into(x, l, l->prim[1], &l->weights_bwd);
}

static int conv_forward(struct cpu_exec *x, struct cpu_layer *l, int training)
{
	const struct model_layer *ml = l->ml;
	char *src, *dst = cpu_out_ptr(x, &ml->out, 0, 0, &l->out_md, l->temp[1]);
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, l->weights },
				{ DNNL_ARG_DST, dst } };
	if (prim_exec(&x->ctx, l->prim[0], 3, a))
		return -1;
	return cpu_store(x, &ml->out, 0, 0, &l->out_md, dst);
}

static int conv_backward(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char *src, *dd, *dd_data;
	const md_t *src_md = &l->bw_src_md;
	if (cpu_fetch(x, &ml->in, 0, src_md, l->temp_bytes[4] ? l->temp[4] : l->temp[0], &src) ||
	    cpu_fetch(x, &ml->out, 1, &l->bw_ddst_md, l->temp[1], &dd))
		return -1;
	struct prim_arg w[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_DIFF_DST, dd },
				{ DNNL_ARG_DIFF_WEIGHTS, l->temp[3] } };
	if (prim_exec(&x->ctx, l->prim[2], 3, w))
		return -1;
	md_t oihw, dw;
	struct prim *r;
	md_weights(&oihw, ml->out.channels, ml->in.channels, ml->kernel, ml->kernel, dnnl_f32,
		   dnnl_abcd);
	prim_md(l->prim[2], DNNL_ARG_DIFF_WEIGHTS, &dw);
	if (prim_reorder(&x->ctx, &dw, &oihw, 0, "reorder conv weight gradient", &r))
		return -1;
	struct prim_arg g[] = { { DNNL_ARG_FROM, l->temp[3] },
				{ DNNL_ARG_TO, x->m->grads + ml->weight_offset } };
	if (prim_exec(&x->ctx, r, 2, g))
		return -1;
	if (l->skip_dx)
		return 0;
	dd_data = dd;
	if (l->temp_bytes[5] && cpu_fetch(x, &ml->out, 1, &l->bd_ddst_md, l->temp[5], &dd_data))
		return -1;
	char *ds = cpu_out_ptr(x, &ml->in, 1, ml->accumulate_dx, &l->in2_md, l->temp[2]);
	struct prim_arg d[] = { { DNNL_ARG_DIFF_DST, dd_data },
				{ DNNL_ARG_WEIGHTS, l->weights_bwd ? l->weights_bwd : l->weights },
				{ DNNL_ARG_DIFF_SRC, ds } };
	if (prim_exec(&x->ctx, l->prim[1], 3, d))
		return -1;
	return cpu_store(x, &ml->in, 1, ml->accumulate_dx, &l->in2_md, ds);
}

const struct cpu_layer_ops cpu_conv_ops = {
	.setup = conv_setup,
	.forward = conv_forward,
	.backward = conv_backward,
	.load = conv_load,
};
