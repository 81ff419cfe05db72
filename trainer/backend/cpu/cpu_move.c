/* cpu_move.c - moving an operand between an op's descriptor and a tensor's
 * storage: zero-copy when the op's descriptor is the storage's own dense
 * alias, one reorder (or in-place add for accumulation) otherwise; between
 * nChw<b>c and a stacked slice the reorder is contiguous runs copied
 * (added) here. What it does not do: choose layouts (cpu_plan.c).
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

/* The 4-d (N, c, H, W) form of an op descriptor: an op that sees the
 * batch stacked in H, {1, c, N*H, W}, in whatever layout it chose (the
 * blocked alias, or plain where the ISA has no blocked kernel: SSE4.1's
 * backward 1x1 convs), holds image n in rows n*H .. n*H+H-1, so H splits
 * into (N, H) with N's stride H rows: the alias becomes the stacked
 * layout, a plain layout keeps its strides. */
static int real_md(struct cpu_exec *x, const md_t *md, md_t *out)
{
	if (md->dims[0] == x->n) {
		*out = *md;
		return 0;
	}
	const md_blocking_t *b = &md->format_desc.blocking;
	int n = x->n, c = (int)md->dims[1], h = (int)md->dims[2] / n, w = (int)md->dims[3];
	if (md->ndims == 4 && md->format_kind == dnnl_blocked && b->inner_nblks == 0 &&
	    md->offset0 == 0) {
		dnnl_dims_t d = { n, c, h, w };
		dnnl_dims_t st = { b->strides[2] * h, b->strides[1], b->strides[2], b->strides[3] };
		if (md_strides(out, 4, d, md->data_type, st) == 0)
			return 0;
	} else {
		md_t alias;
		md_blocked(&alias, 1, c, n * h, w, md->data_type, x->ctx.isa.block);
		if (md_equal(md, &alias)) {
			md_stacked_4d(out, n, c, h, w, md->data_type, x->ctx.isa.block);
			if (out->ndims)
				return 0;
		}
	}
	return dnnl_ctx_fail(&x->ctx, "layout move: '%dx%dx%dx%d': this operand's layout "
			     "cannot be split into %d images", (int)md->dims[0], c,
			     (int)md->dims[2], w, n);
}

static char *storage_ptr(const struct cpu_exec *x, const struct tensor_slice *s, int grad)
{
	struct cpu_view v;
	cpu_slice_view(x, s, grad, &v);
	return v.ptr;
}

/* Whether md is a dense 4-d (N, C, H, W) blocked form whose only block
 * is b channels innermost, each (n, channel block) an H x W x b run of
 * contiguous elements: nChw<b>c and the stacked C<b>nhw<b>c, slices of
 * them included. */
static int chunked(const md_t *md, dnnl_dim_t b)
{
	const md_blocking_t *k = &md->format_desc.blocking;
	return md->ndims == 4 && md->format_kind == dnnl_blocked && k->inner_nblks == 1 &&
	       k->inner_idxs[0] == 1 && k->inner_blks[0] == b && md->dims[1] % b == 0 &&
	       md->padded_dims[1] == md->dims[1] && k->strides[3] == b &&
	       k->strides[2] == md->dims[3] * b;
}

/* The reorder of one such form into the other (accumulate: added, f32
 * only) as N x C/b copies of contiguous runs: what the two layouts of a
 * dense block ask of every layer, where oneDNN 2.6 has only its generic
 * `simple:any` reorder for the stacked form. 1 when done, 0 when the
 * forms are other (oneDNN's reorder then). */
static int copy_runs(const md_t *s, const char *src, const md_t *d, char *dst, int accumulate)
{
	dnnl_dim_t b = s->format_desc.blocking.inner_nblks == 1 ?
		       s->format_desc.blocking.inner_blks[0] : 0;
	size_t es = s->data_type == dnnl_f32 ? 4 : s->data_type == dnnl_bf16 ? 2 : 0;
	if (!b || !es || s->data_type != d->data_type || (accumulate && es != 4) ||
	    !chunked(s, b) || !chunked(d, b) || memcmp(s->dims, d->dims, 4 * sizeof(s->dims[0])))
		return 0;
	const dnnl_dim_t *ss = s->format_desc.blocking.strides, *ds = d->format_desc.blocking.strides;
	long n = (long)s->dims[0], blocks = (long)(s->dims[1] / b);
	size_t run = (size_t)(s->dims[2] * s->dims[3] * b);
	src += (size_t)s->offset0 * es;
	dst += (size_t)d->offset0 * es;
	#pragma omp parallel for collapse(2) schedule(static)
	for (long i = 0; i < n; i++)
		for (long c = 0; c < blocks; c++) {
			const char *from = src + (size_t)(i * ss[0] + c * ss[1]) * es;
			char *to = dst + (size_t)(i * ds[0] + c * ds[1]) * es;
			if (!accumulate) {
				memcpy(to, from, run * es);
				continue;
			}
			const float *f = (const float *)from;
			float *t = (float *)to;
			for (size_t e = 0; e < run; e++)
				t[e] += f[e];
		}
	return 1;
}

static int reorder(struct cpu_exec *x, const md_t *src_md, const void *src, const md_t *dst_md,
		   void *dst, int accumulate, const char *name)
{
	char what[160];
	struct prim *p;
	x->moves++;
	if (copy_runs(src_md, src, dst_md, dst, accumulate))
		return 0;
	snprintf(what, sizeof(what), "reorder%s %s", accumulate ? "+sum" : "", name);
	if (prim_reorder(&x->ctx, src_md, dst_md, accumulate, what, &p))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_FROM, src }, { DNNL_ARG_TO, dst } };
	return prim_exec(&x->ctx, p, 2, a);
}

int cpu_fetch(struct cpu_exec *x, const struct tensor_slice *s, int grad,
	      const md_t *md, char *temp, char **ptr)
{
	if (cpu_md_is_storage(x, s, md)) {
		*ptr = storage_ptr(x, s, grad);
		return 0;
	}
	struct cpu_view v;
	md_t r;
	cpu_slice_view(x, s, grad, &v);
	if (real_md(x, md, &r))
		return -1;
	*ptr = temp;
	return reorder(x, &v.md, v.ptr, &r, temp, 0, x->m->desc.tensors[s->tensor].name);
}

char *cpu_out_ptr(struct cpu_exec *x, const struct tensor_slice *s, int grad, int accumulate,
		  const md_t *md, char *temp)
{
	if (!accumulate && cpu_md_is_storage(x, s, md))
		return storage_ptr(x, s, grad);
	return temp;
}

static int add_in_place(struct cpu_exec *x, const md_t *md, char *acc, const char *src,
			const char *name)
{
	struct op_desc op;
	struct prim *p;
	char what[160];
	memset(&op, 0, sizeof(op));
	op.kind = OP_BINARY;
	op.alg = dnnl_binary_add;
	if (md_flat(md, &op.src))
		op.src = *md;
	snprintf(what, sizeof(what), "binary add %s (%dx%dx%dx%d)", name, (int)md->dims[0],
		 (int)md->dims[1], (int)md->dims[2], (int)md->dims[3]);
	if (prim_get(&x->ctx, &op, NULL, NULL, 0, NULL, what, &p))
		return -1;
	struct prim_arg a[] = { { DNNL_ARG_SRC_0, acc }, { DNNL_ARG_SRC_1, src },
				{ DNNL_ARG_DST, acc } };
	return prim_exec(&x->ctx, p, 3, a);
}

int cpu_store(struct cpu_exec *x, const struct tensor_slice *s, int grad, int accumulate,
	      const md_t *md, char *src)
{
	const char *name = x->m->desc.tensors[s->tensor].name;
	char *dst = storage_ptr(x, s, grad);
	if (cpu_md_is_storage(x, s, md)) {
		if (src == dst)
			return 0;
		if (accumulate)
			return add_in_place(x, md, dst, src, name);
	}
	struct cpu_view v;
	md_t r;
	cpu_slice_view(x, s, grad, &v);
	if (real_md(x, md, &r))
		return -1;
	return reorder(x, &r, src, &v.md, v.ptr, accumulate, name);
}
