/* dnnl_ctx.c - threads, errors, the reference-kernel check and memory
 * descriptor helpers of the cpu backend. What it does not do: open or
 * close the context (dnnl_ctx_open.c), cache primitives (prim_cache.c)
 * or know layers.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/dnnl_ctx.h"

int dnnl_ctx_allowed_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

int dnnl_ctx_fail(struct dnnl_ctx *c, const char *fmt, ...)
{
	va_list ap;
	int off = snprintf(c->err, sizeof(c->err), "chexnet: cpu: ");
	va_start(ap, fmt);
	vsnprintf(c->err + off, sizeof(c->err) - off, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *status_text(dnnl_status_t st)
{
	switch (st) {
	case dnnl_success: return "success";
	case dnnl_out_of_memory: return "out of memory";
	case dnnl_invalid_arguments: return "invalid arguments";
	case dnnl_unimplemented: return "unimplemented";
#if DNNL_VERSION_MAJOR < 3
	case dnnl_iterator_ends: return "no implementation";
#else
	case dnnl_last_impl_reached: return "no implementation";
#endif
	case dnnl_runtime_error: return "runtime error";
	case dnnl_not_required: return "not required";
	default: return "unknown status";
	}
}

int dnnl_ctx_ok(struct dnnl_ctx *c, dnnl_status_t st, const char *what)
{
	if (st == dnnl_success)
		return 0;
	return dnnl_ctx_fail(c, "%s: 'status %d': oneDNN says %s", what, (int)st,
			     status_text(st));
}

/* oneDNN 2.6 reference kernels: "ref:any", "bnorm_ref:any", "ref_int8",
 * "ncsp_bnorm" is a plain (slow but vectorised) kernel, not a reference. */
int dnnl_impl_is_reference(const char *impl)
{
	if (!impl)
		return 1;
	return strncmp(impl, "ref", 3) == 0 || strstr(impl, "_ref") != NULL ||
	       strstr(impl, ":ref") != NULL;
}

/* The source (else destination) layout a primitive was asked to use, in
 * oneDNN's words: "nChw16c", "nchw", "strided view", ... */
static const char *layout_asked(const_dnnl_primitive_desc_t pd)
{
	static __thread char buf[48];
	md_t m, *md = &m;
	md_native_t n = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	if (!md_native_ndims(n))
		n = dnnl_primitive_desc_query_md(pd, dnnl_query_diff_dst_md, 0);
	md_from_native(md, n);
	if (md->ndims != 4 || md->format_kind != dnnl_blocked)
		return "a non-4-d or opaque layout";
	const md_blocking_t *b = &md->format_desc.blocking;
	if (b->inner_nblks == 1 && b->inner_idxs[0] == 1)
		snprintf(buf, sizeof(buf), "nChw%dc%s", (int)b->inner_blks[0],
			 b->strides[0] < b->strides[1] ? " stacked" : "");
	else if (b->inner_nblks == 0)
		snprintf(buf, sizeof(buf), "%s", b->strides[1] == 1 ? "nhwc" : "nchw");
	else
		snprintf(buf, sizeof(buf), "a %d-level blocking", (int)b->inner_nblks);
	return buf;
}

const char *dnnl_pd_impl(const_dnnl_primitive_desc_t pd)
{
	const char *s = NULL;
	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s) != dnnl_success)
		return "?";
	return s ? s : "?";
}

int dnnl_ctx_pd(struct dnnl_ctx *c, dnnl_primitive_desc_t *pd, const struct op_desc *op,
		dnnl_primitive_attr_t attr, const_dnnl_primitive_desc_t hint,
		const char *what)
{
	*pd = NULL;
	c->refused_ref = 0;
	if (dnnl_ctx_ok(c, op_pd_create(pd, c->engine, op, attr, hint), what))
		return -1;
	const char *impl = dnnl_pd_impl(*pd);
	if (dnnl_impl_is_reference(impl) && !c->allow_ref) {
		char where[128];
		cpu_isa_where(&c->isa, where, sizeof(where));
		dnnl_ctx_fail(c, "%s: '%s': oneDNN chose a reference kernel (50-5000x "
			      "slower); refusing: %s, its fast kernels want %d-channel "
			      "blocks (nChw%dc) and this layout asked for %s", what, impl,
			      where, c->isa.block, c->isa.block, layout_asked(*pd));
		dnnl_primitive_desc_destroy(*pd);
		*pd = NULL;
		c->refused_ref = 1;
		return -1;
	}
	return 0;
}

int dnnl_ctx_scratch_ready(struct dnnl_ctx *c)
{
	if (c->scratch_want_bytes <= c->scratch_bytes && c->scratch_mem)
		return 0;
	size_t bytes = c->scratch_want_bytes > 64 ? c->scratch_want_bytes : 64;
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes) != 0)
		return dnnl_ctx_fail(c, "scratchpad: '%zu bytes': out of memory", bytes);
	free(c->scratch);
	c->scratch = p;
	c->scratch_bytes = bytes;
	if (c->scratch_mem)
		dnnl_memory_destroy(c->scratch_mem);
	c->scratch_mem = NULL;
	md_t md;
	dnnl_dims_t d = { (dnnl_dim_t)bytes };
	md_tag(&md, 1, d, dnnl_u8, dnnl_a);
	return dnnl_ctx_ok(c, dnnl_memory_create(&c->scratch_mem, md_native(&md), c->engine, p),
			   "scratchpad memory");
}

size_t dt_bytes(dnnl_data_type_t dt)
{
	return dt == dnnl_f32 ? 4 : dt == dnnl_bf16 || dt == dnnl_f16 ? 2 : 1;
}

static void md_4d(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt,
		  dnnl_format_tag_t tag)
{
	dnnl_dims_t d = { n, ch, h, w };
	md_tag(md, 4, d, dt, tag);
}

void md_blocked(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt,
		int block)
{
	md_4d(md, n, ch, h, w, dt, block == 8 ? dnnl_aBcd8b : dnnl_aBcd16b);
}

void md_nhwc(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt)
{
	md_4d(md, n, ch, h, w, dt, dnnl_acdb);
}

void md_nchw(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt)
{
	md_4d(md, n, ch, h, w, dt, dnnl_abcd);
}

/* Physical order [C/b][N][H][W][b]: (C, N, H, W) blocked on its first
 * axis, C and N then swapped (no tag names this order). */
void md_stacked_4d(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt, int block)
{
	static const int swap_cn[4] = { 1, 0, 2, 3 };
	md_t cnhw;
	md_4d(&cnhw, ch, n, h, w, dt, block == 8 ? dnnl_Abcd8a : dnnl_Abcd16a);
	md_permute(md, &cnhw, swap_cn);
}

void md_1d(md_t *md, int count, dnnl_data_type_t dt)
{
	dnnl_dims_t d = { count };
	md_tag(md, 1, d, dt, dnnl_a);
}

int md_flat(const md_t *md, md_t *flat)
{
	size_t es = dt_bytes(md->data_type), bytes = md_bytes(md), count = 1;
	for (int i = 0; i < md->ndims; i++)
		count *= (size_t)md->padded_dims[i];
	if (md->format_kind != dnnl_blocked || md->offset0 || !es || bytes != count * es ||
	    count > (size_t)1 << 31)
		return -1;
	md_1d(flat, (int)count, md->data_type);
	return 0;
}

void md_weights(md_t *md, int oc, int ic, int kh, int kw, dnnl_data_type_t dt,
		dnnl_format_tag_t tag)
{
	md_4d(md, oc, ic, kh, kw, dt, tag);
}
