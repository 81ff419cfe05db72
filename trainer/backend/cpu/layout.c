/* layout.c - what the layer files ask of a planned tensor: the memory
 * descriptor of a slice in its layout, whether a descriptor is the
 * slice's own storage, the form a layer should use for it. Pure over the
 * plan (cpu_plan.c made it). What it does not do: choose layouts or
 * allocate (cpu_plan.c), move data (cpu_move.c).
 */
#include <string.h>

#include "backend/cpu/cpu_internal.h"

void cpu_slice_view(const struct cpu_exec *x, const struct tensor_slice *s, int grad,
		    struct cpu_view *v)
{
	const struct cpu_tensor *t = &x->t[s->tensor];
	char *base = grad ? t->grad : t->act;
	size_t es = dt_bytes(t->dt);
	if (t->layout == CPU_STACKED) {
		md_stacked_4d(&v->md, t->n, s->channels, t->h, t->w, t->dt, x->ctx.isa.block);
		v->ptr = base ? base + (size_t)s->c0 * t->n * t->h * t->w * es : NULL;
		return;
	}
	md_t whole;
	if (t->layout == CPU_NCHW32)
		md_nchw(&whole, t->n, t->c, t->h, t->w, t->dt);
	else
		md_blocked(&whole, t->n, t->c, t->h, t->w, t->dt, x->ctx.isa.block);
	v->ptr = base;
	if (s->c0 == 0 && s->channels == t->c) {
		v->md = whole;
		return;
	}
	dnnl_dims_t dims = { t->n, s->channels, t->h, t->w }, offs = { 0, s->c0, 0, 0 };
	md_submemory(&v->md, &whole, dims, offs);
}

/* The dense descriptor that aliases the slice's storage, if any. */
static int alias_md(const struct cpu_exec *x, const struct tensor_slice *s,
		    md_t *md)
{
	const struct cpu_tensor *t = &x->t[s->tensor];
	if (t->layout == CPU_STACKED) {
		md_blocked(md, 1, s->channels, t->n * t->h, t->w, t->dt, x->ctx.isa.block);
		return 1;
	}
	if (s->c0 || s->channels != t->c)
		return 0;
	if (t->layout == CPU_NCHW32)
		md_nchw(md, t->n, t->c, t->h, t->w, t->dt);
	else
		md_blocked(md, t->n, t->c, t->h, t->w, t->dt, x->ctx.isa.block);
	return 1;
}

int cpu_slice_dense(const struct cpu_exec *x, const struct tensor_slice *s)
{
	md_t md;
	return alias_md(x, s, &md);
}

int cpu_md_is_storage(const struct cpu_exec *x, const struct tensor_slice *s,
		      const md_t *md)
{
	md_t a;
	return alias_md(x, s, &a) && md_equal(&a, md);
}

enum cpu_form cpu_form_for(const struct cpu_exec *x, const struct tensor_slice *s,
			   int pixelwise, int amx)
{
	const struct cpu_tensor *t = &x->t[s->tensor];
	int block = x->ctx.isa.block;
	/* NHWC is the only layout of 2.6's AMX convs; without AMX the
	 * blocked bf16 kernels need no reorder */
	if (amx && x->dt == dnnl_bf16 && (s->channels % block || x->ctx.isa.amx))
		return FORM_NHWC;
	if (pixelwise && t->layout == CPU_STACKED)
		return FORM_STACKED;
	if (s->channels % block && x->dt == dnnl_f32)
		return FORM_NCHW;
	return FORM_BLOCKED;
}

void cpu_form_md(const struct cpu_exec *x, enum cpu_form f, int c, int h, int w,
		 md_t *md)
{
	switch (f) {
	case FORM_STACKED: md_blocked(md, 1, c, x->n * h, w, x->dt, x->ctx.isa.block); break;
	case FORM_BLOCKED: md_blocked(md, x->n, c, h, w, x->dt, x->ctx.isa.block); break;
	case FORM_NHWC: md_nhwc(md, x->n, c, h, w, x->dt); break;
	case FORM_NCHW: md_nchw(md, x->n, c, h, w, x->dt); break;
	}
}
