/* prim_cache.c - find-or-create table of oneDNN primitives keyed by the
 * bytes of their descriptors, and execution with pointers bound to the
 * primitive's own argument descriptors. What it does not do: decide layouts
 * (the layer files do) or own tensors.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/prim_cache.h"

int prim_profile;

struct entry {
	uint64_t hash;
	unsigned char *key;
	size_t key_bytes;
	struct prim prim;
};

struct prim_cache {
	struct entry **items;
	int count, cap;
};

int prim_cache_new(struct prim_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

void prim_cache_free(struct prim_cache *pc)
{
	for (int i = 0; i < pc->count; i++) {
		struct entry *e = pc->items[i];
		dnnl_primitive_destroy(e->prim.p);
		dnnl_primitive_desc_destroy(e->prim.pd);
		free(e->key);
		free(e);
	}
	free(pc->items);
	free(pc);
}

int prim_cache_count(const struct prim_cache *pc)
{
	return pc->count;
}

struct prim *prim_cache_at(struct prim_cache *pc, int i)
{
	return i >= 0 && i < pc->count ? &pc->items[i]->prim : NULL;
}

static struct prim *lookup(struct prim_cache *pc, const unsigned char *key, size_t n,
			   uint64_t h)
{
	for (int i = 0; i < pc->count; i++) {
		struct entry *e = pc->items[i];
		if (e->hash == h && e->key_bytes == n && memcmp(e->key, key, n) == 0)
			return &e->prim;
	}
	return NULL;
}

/* Takes ownership of pd (destroyed on failure). */
static int insert(struct dnnl_ctx *c, unsigned char *key, size_t n, uint64_t h,
		  dnnl_primitive_desc_t pd, const char *what, struct prim **out)
{
	struct prim_cache *pc = c->cache;
	struct entry *e = calloc(1, sizeof(*e));
	if (!e || (pc->count == pc->cap && !(pc->items = realloc(pc->items,
			sizeof(*pc->items) * (pc->cap = pc->cap ? 2 * pc->cap : 64))))) {
		free(e);
		free(key);
		dnnl_primitive_desc_destroy(pd);
		return dnnl_ctx_fail(c, "%s: 'cache': out of memory", what);
	}
	if (dnnl_ctx_ok(c, dnnl_primitive_create(&e->prim.p, pd), what)) {
		free(e);
		free(key);
		dnnl_primitive_desc_destroy(pd);
		return -1;
	}
	e->hash = h;
	e->key = key;
	e->key_bytes = n;
	e->prim.pd = pd;
	snprintf(e->prim.what, sizeof(e->prim.what), "%s", what);
	md_native_t smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	e->prim.scratch_bytes = md_native_ndims(smd) ? dnnl_memory_desc_get_size(smd) : 0;
	if (e->prim.scratch_bytes > c->scratch_want_bytes)
		c->scratch_want_bytes = e->prim.scratch_bytes;
	pc->items[pc->count++] = e;
	*out = &e->prim;
	return 0;
}

static unsigned char *make_key(int kind, const void *a, size_t an, const void *b, size_t bn,
			       const void *hint, size_t *n)
{
	*n = sizeof(kind) + an + bn + sizeof(hint);
	unsigned char *k = malloc(*n), *p = k;
	if (!k)
		return NULL;
	memcpy(p, &kind, sizeof(kind)), p += sizeof(kind);
	if (an)
		memcpy(p, a, an), p += an;
	if (bn)
		memcpy(p, b, bn), p += bn;
	memcpy(p, &hint, sizeof(hint));
	return k;
}

static dnnl_primitive_attr_t scratch_attr(dnnl_primitive_attr_t attr)
{
	dnnl_primitive_attr_t a = attr;
	if (!a && dnnl_primitive_attr_create(&a) != dnnl_success)
		return NULL;
	dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user);
	return a;
}

int prim_get(struct dnnl_ctx *c, const struct op_desc *op, dnnl_primitive_attr_t attr,
	     const void *attr_key, size_t attr_key_bytes, const struct prim *hint,
	     const char *what, struct prim **out)
{
	size_t n;
	unsigned char *key = make_key(1, op, sizeof(*op), attr_key, attr_key_bytes, hint, &n);
	if (!key)
		return dnnl_ctx_fail(c, "%s: 'cache': out of memory", what);
	uint64_t h = key_hash(key, n);
	if ((*out = lookup(c->cache, key, n, h))) {
		free(key);
		return 0;
	}
	dnnl_primitive_attr_t a = scratch_attr(attr);
	dnnl_primitive_desc_t pd;
	int rc = a ? dnnl_ctx_pd(c, &pd, op, a, hint ? hint->pd : NULL, what)
		   : dnnl_ctx_fail(c, "%s: 'attr': out of memory", what);
	if (a && a != attr)
		dnnl_primitive_attr_destroy(a);
	if (rc) {
		free(key);
		return -1;
	}
	return insert(c, key, n, h, pd, what, out);
}

int prim_reorder(struct dnnl_ctx *c, const md_t *src_md, const md_t *dst_md, int accumulate,
		 const char *what, struct prim **out)
{
	size_t n;
	unsigned char *key = make_key(2 + accumulate, src_md, sizeof(*src_md), dst_md,
				      sizeof(*dst_md), NULL, &n);
	if (!key)
		return dnnl_ctx_fail(c, "%s: 'cache': out of memory", what);
	uint64_t h = key_hash(key, n);
	if ((*out = lookup(c->cache, key, n, h))) {
		free(key);
		return 0;
	}
	dnnl_primitive_attr_t a = scratch_attr(NULL);
	md_native_t s = md_native(src_md), d = md_native(dst_md);
	dnnl_primitive_desc_t pd = NULL;
	int rc = !a ? dnnl_ctx_fail(c, "%s: 'attr': out of memory", what) :
		 accumulate && op_attr_sum(a) ? dnnl_ctx_fail(c, "%s: 'sum': post-op refused", what) :
		 !s || !d ? dnnl_ctx_fail(c, "%s: 'descriptor': not made by dnnl_md.c", what) :
		 dnnl_ctx_ok(c, dnnl_reorder_primitive_desc_create(&pd, s, c->engine, d, c->engine,
							       a), what);
	if (a)
		dnnl_primitive_attr_destroy(a);
	if (!rc && dnnl_impl_is_reference(dnnl_pd_impl(pd)) && !c->allow_ref) {
		rc = dnnl_ctx_fail(c, "%s: '%s': oneDNN chose a reference kernel; refusing",
				   what, dnnl_pd_impl(pd));
		dnnl_primitive_desc_destroy(pd);
	}
	if (rc) {
		free(key);
		return -1;
	}
	return insert(c, key, n, h, pd, what, out);
}

void prim_md(const struct prim *p, int arg, md_t *md)
{
	md_from_native(md, dnnl_primitive_desc_query_md(p->pd, dnnl_query_exec_arg_md, arg));
}

size_t prim_arg_bytes(const struct prim *p, int arg)
{
	md_native_t md = dnnl_primitive_desc_query_md(p->pd, dnnl_query_exec_arg_md, arg);
	return md_native_ndims(md) ? dnnl_memory_desc_get_size(md) : 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define MAX_ARGS 16

int prim_exec(struct dnnl_ctx *c, struct prim *p, int nargs, const struct prim_arg *args)
{
	dnnl_exec_arg_t ea[MAX_ARGS + 1];
	int n = 0, rc = 0;
	if (nargs > MAX_ARGS)
		return dnnl_ctx_fail(c, "%s: '%d args': too many", p->what, nargs);
	for (int i = 0; i < nargs; i++) {
		md_native_t md = dnnl_primitive_desc_query_md(p->pd, dnnl_query_exec_arg_md,
							      args[i].arg);
		if (!md_native_ndims(md))
			continue; /* an argument this implementation does not use */
		ea[n].arg = args[i].arg;
		if (dnnl_ctx_ok(c, dnnl_memory_create(&ea[n].memory, md, c->engine,
						      (void *)args[i].ptr), p->what)) {
			rc = -1;
			goto out;
		}
		n++;
	}
	if (p->scratch_bytes) {
		if ((rc = dnnl_ctx_scratch_ready(c)) != 0)
			goto out;
		ea[n].arg = DNNL_ARG_SCRATCHPAD;
		ea[n].memory = NULL;
		md_native_t smd = dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
		if ((rc = dnnl_ctx_ok(c, dnnl_memory_create(&ea[n].memory, smd, c->engine,
							    c->scratch), p->what)))
			goto out;
		n++;
	}
	double t0 = prim_profile ? now_s() : 0;
	rc = dnnl_ctx_ok(c, dnnl_primitive_execute(p->p, c->stream, n, ea), p->what);
	if (!rc)
		rc = dnnl_ctx_ok(c, dnnl_stream_wait(c->stream), p->what);
	if (prim_profile) {
		p->seconds += now_s() - t0;
		p->calls++;
	}
out:
	for (int i = 0; i < n; i++)
		dnnl_memory_destroy(ea[i].memory);
	return rc;
}
