/* backend/cpu/batchnorm.c - batch normalisation (optionally with the ReLU fused) on
 * oneDNN: training statistics with fp32 mean/variance even for bf16 data,
 * running statistics updated as torch does (momentum 0.1, unbiased
 * variance), inference with the running statistics. gamma/beta are read
 * from model->params and their gradients written to model->grads directly.
 * prim[0] forward training, [1] forward inference, [2] backward, [3] the
 * memory-efficient recompute: forward training on the step's statistics
 * as given (one pass over the input instead of three, the same output).
 * Where oneDNN has no fused BN+ReLU for training on the storage's form
 * (2.6 below AVX2) the ReLU runs after it as its own primitive: prim[4]
 * forward in place, [5] backward from dst into temp[4].
 * temp[0] src, [1] dst, [2] diff_src, [3] diff_dst, [4] the gradient
 * between the ReLU and the BN.
 * What it does not do: keep its own parameter copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

#define BN_EPS 1e-5f
#define BN_MOMENTUM 0.1f

/* The three primitives (training, inference, backward) on l->in_md, and
 * the recompute's; split: the ReLU not fused (its own two primitives). */
static void bn_op(const struct cpu_layer *l, enum op_kind kind, dnnl_prop_kind_t prop,
		  unsigned flags, struct op_desc *op)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->prop = prop;
	op->flags = flags;
	op->eps = BN_EPS;
	op->src = l->in_md;
}

static int bn_prims(struct cpu_exec *x, struct cpu_layer *l, int split, const char *what)
{
	const struct model_layer *ml = l->ml;
	unsigned flags = dnnl_use_scale | dnnl_use_shift |
			 (ml->relu && !split ? dnnl_fuse_norm_relu : 0);
	if (split && cpu_relu_prims(x, l, 4, 5, dnnl_eltwise_relu_use_dst_for_bwd))
		return -1;
	struct op_desc fd, id, bd, rd;
	bn_op(l, OP_BNORM_FWD, dnnl_forward_training, flags, &fd);
	bn_op(l, OP_BNORM_FWD, dnnl_forward_inference, flags | dnnl_use_global_stats, &id);
	bn_op(l, OP_BNORM_BWD, dnnl_backward, flags, &bd);
	bn_op(l, OP_BNORM_FWD, dnnl_forward_training, flags | dnnl_use_global_stats, &rd);
	if (x->t[ml->out.tensor].recompute &&
	    prim_get(&x->ctx, &rd, NULL, NULL, 0, NULL, what, &l->prim[3]))
		return -1;
	return prim_get(&x->ctx, &fd, NULL, NULL, 0, NULL, what, &l->prim[0]) ||
	       prim_get(&x->ctx, &id, NULL, NULL, 0, NULL, what, &l->prim[1]) ||
	       prim_get(&x->ctx, &bd, NULL, NULL, 0, l->prim[0], what, &l->prim[2]) ? -1 : 0;
}

static int bn_setup(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char what[200];
	enum cpu_form own = cpu_form_for(x, &ml->in, 1, 0);
	const struct { enum cpu_form form; int split; } tries[] = {
		{ own, 0 }, { own, 1 }, { FORM_NHWC, 0 }, { FORM_NCHW, 0 },
	};
	int rc = -1;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]) && rc; i++) {
		if (tries[i].split && !ml->relu)
			continue;
		if (i && !x->ctx.refused_ref)
			return -1;
		cpu_form_md(x, tries[i].form, ml->in.channels, ml->in_h, ml->in_w, &l->in_md);
		snprintf(what, sizeof(what), "batch norm%s '%s' (mb%d ic%d %dx%d %s form %d)",
			 ml->relu && !tries[i].split ? "+relu" : "", ml->name, x->n,
			 ml->in.channels, ml->in_h, ml->in_w, x->dt == dnnl_bf16 ? "bf16" : "f32",
			 (int)tries[i].form);
		memset(l->prim, 0, sizeof(l->prim));
		rc = bn_prims(x, l, tries[i].split, what);
	}
	if (rc)
		return -1;
	l->out_md = l->in_md;
	l->ws_bytes = ml->relu && !l->prim[4] ? prim_arg_bytes(l->prim[0], DNNL_ARG_WORKSPACE) : 0;
	l->mean = calloc(ml->in.channels, sizeof(float));
	l->var = calloc(ml->in.channels, sizeof(float));
	if (!l->mean || !l->var)
		return dnnl_ctx_fail(&x->ctx, "layer '%s': 'statistics': out of memory", ml->name);
	size_t b = md_bytes(&l->in_md);
	l->temp_bytes[0] = cpu_md_is_storage(x, &ml->in, &l->in_md) ? 0 : b;
	l->temp_bytes[1] = cpu_md_is_storage(x, &ml->out, &l->out_md) ? 0 : b;
	l->temp_bytes[2] = b;
	l->temp_bytes[3] = cpu_md_is_storage(x, &ml->out, &l->out_md) ? 0 : b;
	l->temp_bytes[4] = l->prim[4] ? b : 0;
	return 0;
}

static void update_running(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	int c = ml->in.channels;
	float *rm = x->m->state + ml->state_offset, *rv = rm + c;
	double count = (double)x->n * ml->in_h * ml->in_w;
	float unbias = count > 1 ? (float)(count / (count - 1)) : 1.f;
	for (int i = 0; i < c; i++) {
		rm[i] = (1 - BN_MOMENTUM) * rm[i] + BN_MOMENTUM * l->mean[i];
		rv[i] = (1 - BN_MOMENTUM) * rv[i] + BN_MOMENTUM * l->var[i] * unbias;
	}
}

/* training: 1 batch statistics + running update; 2 the same output again
 * (memory-efficient recompute in backward, no update); 0 running stats. */
static int bn_forward(struct cpu_exec *x, struct cpu_layer *l, int training)
{
	const struct model_layer *ml = l->ml;
	char *src, *dst = cpu_out_ptr(x, &ml->out, 0, 0, &l->out_md, l->temp[1]);
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src))
		return -1;
	const float *rm = x->m->state + ml->state_offset, *rv = rm + ml->in.channels;
	struct prim_arg a[] = {
		{ DNNL_ARG_SRC, src }, { DNNL_ARG_DST, dst },
		{ DNNL_ARG_SCALE, x->m->params + ml->weight_offset },
		{ DNNL_ARG_SHIFT, x->m->params + ml->bias_offset },
		{ DNNL_ARG_MEAN, training ? l->mean : rm },
		{ DNNL_ARG_VARIANCE, training ? l->var : rv },
		{ DNNL_ARG_WORKSPACE, l->ws },
	};
	struct prim *p = training == 2 && l->prim[3] ? l->prim[3] : l->prim[training ? 0 : 1];
	struct prim_arg r[] = { { DNNL_ARG_SRC, dst }, { DNNL_ARG_DST, dst } };
	if (prim_exec(&x->ctx, p, 7, a) || (l->prim[4] && prim_exec(&x->ctx, l->prim[4], 2, r)))
		return -1;
	if (training == 1)
		update_running(x, l);
	return cpu_store(x, &ml->out, 0, 0, &l->out_md, dst);
}

static int bn_backward(struct cpu_exec *x, struct cpu_layer *l)
{
	const struct model_layer *ml = l->ml;
	char *src, *dd;
	if (cpu_fetch(x, &ml->in, 0, &l->in_md, l->temp[0], &src) ||
	    cpu_fetch(x, &ml->out, 1, &l->out_md, l->temp[3], &dd))
		return -1;
	if (l->prim[4]) {   /* the split ReLU's backward first, from its output */
		char *y;
		if (cpu_fetch(x, &ml->out, 0, &l->out_md, l->temp[1], &y))
			return -1;
		struct prim_arg r[] = { { DNNL_ARG_DST, y }, { DNNL_ARG_DIFF_DST, dd },
					{ DNNL_ARG_DIFF_SRC, l->temp[4] } };
		if (prim_exec(&x->ctx, l->prim[5], 3, r))
			return -1;
		dd = l->temp[4];
	}
	char *ds = cpu_out_ptr(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, l->temp[2]);
	struct prim_arg a[] = {
		{ DNNL_ARG_SRC, src }, { DNNL_ARG_DIFF_DST, dd },
		{ DNNL_ARG_MEAN, l->mean }, { DNNL_ARG_VARIANCE, l->var },
		{ DNNL_ARG_SCALE, x->m->params + ml->weight_offset },
		{ DNNL_ARG_WORKSPACE, l->ws }, { DNNL_ARG_DIFF_SRC, ds },
		{ DNNL_ARG_DIFF_SCALE, x->m->grads + ml->weight_offset },
		{ DNNL_ARG_DIFF_SHIFT, x->m->grads + ml->bias_offset },
		/* an input of 2.x's backward, refused by 3.x's (unused) */
		{ DNNL_ARG_SHIFT, x->m->params + ml->bias_offset },
	};
	if (prim_exec(&x->ctx, l->prim[2], DNNL_VERSION_MAJOR < 3 ? 10 : 9, a))
		return -1;
	return cpu_store(x, &ml->in, 1, ml->accumulate_dx, &l->in_md, ds);
}

const struct cpu_layer_ops cpu_bnorm_ops = {
	.setup = bn_setup,
	.forward = bn_forward,
	.backward = bn_backward,
};
