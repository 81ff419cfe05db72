/* dnnl_ctx.h - the oneDNN context the cpu backend runs on: engine, stream,
 * threads, error text, the implementation check, memory descriptor helpers.
 *
 * Every primitive descriptor is made through dnnl_ctx_pd(), which reads the
 * chosen implementation name and refuses reference kernels (`ref:any`,
 * `bnorm_ref:any`, ...): oneDNN 2.6 falls back to them silently on
 * strided views or on a layout that is not the ISA's own (16-channel
 * blocks on AVX2), 50-5000x slower. What this does not do: own tensors or
 * know any layer.
 */
#ifndef HVD_TRAINER_CPU_DNNL_CTX_H
#define HVD_TRAINER_CPU_DNNL_CTX_H

#include <stddef.h>
#include <oneapi/dnnl/dnnl.h>

#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/dnnl_md.h"
#include "backend/cpu/dnnl_op.h"

struct prim_cache;

struct dnnl_ctx {
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	int threads;
	struct cpu_isa isa;          /* ISA, channel block, bf16 (cpu_isa.h) */
	int allow_ref;               /* tests only: report instead of refusing */
	int refused_ref;             /* the last dnnl_ctx_pd refused a reference
					kernel (callers may try another layout) */
	struct prim_cache *cache;
	void *scratch;               /* one user scratchpad for every primitive */
	size_t scratch_bytes;
	dnnl_memory_t scratch_mem;
	size_t scratch_want_bytes;   /* largest scratchpad asked for so far */
	char err[512];               /* last error, one line */
};

/* threads <= 0: the CPUs in this process's affinity mask. */
int dnnl_ctx_init(struct dnnl_ctx *c, int threads);
void dnnl_ctx_free(struct dnnl_ctx *c);
int dnnl_ctx_allowed_cpus(void);

/* Record "chexnet: cpu: WHAT: 'VALUE': REASON" in c->err; returns -1. */
int dnnl_ctx_fail(struct dnnl_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Returns 0 on dnnl_success, else fails naming `what`. */
int dnnl_ctx_ok(struct dnnl_ctx *c, dnnl_status_t st, const char *what);

/* Implementation names that are oneDNN reference kernels. */
int dnnl_impl_is_reference(const char *impl);

/* Make a primitive descriptor for op (user scratchpad mode; attr may be
 * NULL) and check its implementation. `what` names primitive and shape
 * in the error. */
int dnnl_ctx_pd(struct dnnl_ctx *c, dnnl_primitive_desc_t *pd, const struct op_desc *op,
		dnnl_primitive_attr_t attr, const_dnnl_primitive_desc_t hint,
		const char *what);
const char *dnnl_pd_impl(const_dnnl_primitive_desc_t pd);

/* Run a primitive (scratchpad added) and wait. */
int dnnl_ctx_exec(struct dnnl_ctx *c, dnnl_primitive_t p, int nargs,
		  const dnnl_exec_arg_t *args, const char *what);
/* Grow the shared scratchpad before execution if needed. */
int dnnl_ctx_scratch_ready(struct dnnl_ctx *c);

/* Memory descriptors used by the layers. dt: dnnl_f32 / dnnl_bf16.
 * block: channels per block (the context's isa.block: 8 or 16). */
void md_blocked(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt,
		int block);
void md_nhwc(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt);
void md_nchw(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt);
/* "C<b>nhw<b>c": channel blocks outermost, batch inside. The tensor
 * (N, ch, H, W) seen with its real image boundaries (for reorders only). */
void md_stacked_4d(md_t *md, int n, int ch, int h, int w, dnnl_data_type_t dt,
		   int block);
void md_1d(md_t *md, int count, dnnl_data_type_t dt);
/* The elements of a dense md (padding included) as one plain row, for
 * element-wise ops whose operands share md: oneDNN 3.x has jit binary
 * kernels below AVX2 only on plain layouts. -1 when md has gaps. */
int md_flat(const md_t *md, md_t *flat);
void md_weights(md_t *md, int oc, int ic, int kh, int kw, dnnl_data_type_t dt,
		dnnl_format_tag_t tag);

size_t dt_bytes(dnnl_data_type_t dt);

#endif
