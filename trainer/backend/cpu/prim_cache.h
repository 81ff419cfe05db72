/* prim_cache.h - primitives created once and shared: a table keyed by the
 * operation descriptor's bytes (plus attributes and forward hint), so two
 * layers of the same shape run the same primitive object, and a step never
 * creates one. Execution binds pointers to the argument descriptors the
 * primitive itself reports, so a caller passes (argument, pointer) pairs.
 * What this is not: a memory allocator; it never owns tensors.
 */
#ifndef HVD_TRAINER_CPU_PRIM_CACHE_H
#define HVD_TRAINER_CPU_PRIM_CACHE_H

#include "backend/cpu/dnnl_ctx.h"

struct prim {
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t p;
	size_t scratch_bytes;
	char what[200];          /* primitive and shape, for errors/profile */
	double seconds;          /* time spent executing (profile) */
	long calls;
};

struct prim_cache;

int prim_cache_new(struct prim_cache **out);
void prim_cache_free(struct prim_cache *pc);
int prim_cache_count(const struct prim_cache *pc);
/* i-th cached primitive, creation order (tests, profile). */
struct prim *prim_cache_at(struct prim_cache *pc, int i);

/* Find or create the primitive for op (zeroed, then filled).
 * attr_key/attr_key_bytes tell apart attributes (may be NULL/0). */
int prim_get(struct dnnl_ctx *c, const struct op_desc *op, dnnl_primitive_attr_t attr,
	     const void *attr_key, size_t attr_key_bytes, const struct prim *hint,
	     const char *what, struct prim **out);
/* A reorder src_md -> dst_md; accumulate: dst += src (sum post-op). */
int prim_reorder(struct dnnl_ctx *c, const md_t *src_md, const md_t *dst_md, int accumulate,
		 const char *what, struct prim **out);

struct prim_arg {
	int arg;                 /* DNNL_ARG_* */
	const void *ptr;
};
int prim_exec(struct dnnl_ctx *c, struct prim *p, int nargs, const struct prim_arg *args);
/* The descriptor the primitive uses for argument `arg` (ndims 0: none). */
void prim_md(const struct prim *p, int arg, md_t *md);
size_t prim_arg_bytes(const struct prim *p, int arg);

/* Profile switch: prim_exec times each call when set. */
extern int prim_profile;

#endif
