/* dnnl_ctx_open.c - opens and closes the cpu backend's oneDNN context
 * (dnnl_ctx.h): engine, stream, threads, ISA, the primitive cache and the
 * scratchpad. What it does not do: make primitives (dnnl_ctx.c,
 * prim_cache.c).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/dnnl_ctx.h"
#include "backend/cpu/prim_cache.h"

int dnnl_ctx_init(struct dnnl_ctx *c, int threads)
{
	memset(c, 0, sizeof(*c));
	c->threads = threads > 0 ? threads : dnnl_ctx_allowed_cpus();
	omp_set_num_threads(c->threads);
	if (dnnl_ctx_ok(c, dnnl_engine_create(&c->engine, dnnl_cpu, 0), "engine") ||
	    dnnl_ctx_ok(c, dnnl_stream_create(&c->stream, c->engine,
					      dnnl_stream_default_flags), "stream"))
		return -1;
	cpu_isa_probe(c->engine, &c->isa);
	if (prim_cache_new(&c->cache) != 0)
		return dnnl_ctx_fail(c, "primitive cache: 'alloc': out of memory");
	return 0;
}

void dnnl_ctx_free(struct dnnl_ctx *c)
{
	if (c->cache)
		prim_cache_free(c->cache);
	if (c->scratch_mem)
		dnnl_memory_destroy(c->scratch_mem);
	free(c->scratch);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	if (c->engine)
		dnnl_engine_destroy(c->engine);
	memset(c, 0, sizeof(*c));
}
