/* cpu_isa.c - the ISA oneDNN runs on, the channel block its blocked
 * kernels use there, and bf16 support. What it does not do: decide any
 * tensor's layout (cpu_plan.c) or refuse anything (backend_cpu.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/dnnl_op.h"

/* The ISA values are bit sets: avx2_vnni (0x407) is numerically above
 * avx512_core (0x27) without containing it, so never compare with <. */
int cpu_isa_has(dnnl_cpu_isa_t isa, dnnl_cpu_isa_t feature)
{
	return ((unsigned)isa & (unsigned)feature) == (unsigned)feature;
}

const char *cpu_isa_name(dnnl_cpu_isa_t isa)
{
	static const struct { dnnl_cpu_isa_t isa; const char *name; } names[] = {
		{ dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx" },
		{ dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16" },
		{ dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni" },
		{ dnnl_cpu_isa_avx512_core, "avx512_core" },
#if DNNL_VERSION_MAJOR < 3
		{ dnnl_cpu_isa_avx512_mic_4ops, "avx512_mic_4ops" },
		{ dnnl_cpu_isa_avx512_mic, "avx512_mic" },
#endif
		{ dnnl_cpu_isa_avx2_vnni, "avx2_vnni" },
		{ dnnl_cpu_isa_avx2, "avx2" },
		{ dnnl_cpu_isa_avx, "avx" },
		{ dnnl_cpu_isa_sse41, "sse41" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (cpu_isa_has(isa, names[i].isa))
			return names[i].name;
	return "no SIMD (oneDNN's reference kernels only)";
}

int cpu_isa_block_for(dnnl_cpu_isa_t isa)
{
#if DNNL_VERSION_MAJOR < 3
	if (cpu_isa_has(isa, dnnl_cpu_isa_avx512_mic))
		return 16;
#endif
	return cpu_isa_has(isa, dnnl_cpu_isa_avx512_core) ? 16 : 8;
}

/* The channel block a 3x3 fp32 convolution picks for `format_tag any`:
 * oneDNN's own choice of its fastest layout on this ISA. 0 if it picked
 * something other than one channel block. */
static int probe_block(dnnl_engine_t engine)
{
	dnnl_dims_t sd = { 1, 64, 14, 14 }, wd = { 64, 64, 3, 3 };
	struct op_desc op;
	dnnl_primitive_desc_t pd = NULL;
	md_t md;
	int block = 0;

	memset(&op, 0, sizeof(op));
	op.kind = OP_CONV_FWD;
	op.prop = dnnl_forward_training;
	op.alg = dnnl_convolution_direct;
	op.strides[0] = op.strides[1] = op.pad[0] = op.pad[1] = 1;
	if (md_tag(&op.src, 4, sd, dnnl_f32, dnnl_format_tag_any) ||
	    md_tag(&op.wei, 4, wd, dnnl_f32, dnnl_format_tag_any) ||
	    md_tag(&op.dst, 4, sd, dnnl_f32, dnnl_format_tag_any) ||
	    op_pd_create(&pd, engine, &op, NULL, NULL) != dnnl_success)
		return 0;
	md_from_native(&md, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0));
	const md_blocking_t *b = &md.format_desc.blocking;
	if (md.format_kind == dnnl_blocked && b->inner_nblks == 1 && b->inner_idxs[0] == 1)
		block = (int)b->inner_blks[0];
	dnnl_primitive_desc_destroy(pd);
	return block;
}

static void read_cap(char *cap, size_t len)
{
	static const char *const vars[] = { "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA" };
	cap[0] = '\0';
	for (size_t i = 0; i < 2; i++) {
		const char *v = getenv(vars[i]);
		if (v && v[0] && strcmp(v, "ALL") != 0 && strcmp(v, "DEFAULT") != 0) {
			snprintf(cap, len, "%s=%s", vars[i], v);
			return;
		}
	}
}

void cpu_isa_probe(dnnl_engine_t engine, struct cpu_isa *isa)
{
	memset(isa, 0, sizeof(*isa));
	isa->isa = dnnl_get_effective_cpu_isa();
	isa->name = cpu_isa_name(isa->isa);
	isa->block = probe_block(engine);
	if (isa->block != 8 && isa->block != 16)
		isa->block = cpu_isa_block_for(isa->isa);
	/* oneDNN 2.6: bf16 kernels from avx512_core up (emulated there,
	 * native with avx512_core_bf16 and AMX); none below */
	isa->bf16 = cpu_isa_has(isa->isa, dnnl_cpu_isa_avx512_core);
	isa->bf16_native = cpu_isa_has(isa->isa, dnnl_cpu_isa_avx512_core_bf16);
	isa->amx = cpu_isa_has(isa->isa, dnnl_cpu_isa_avx512_core_amx);
	read_cap(isa->cap, sizeof(isa->cap));
}

void cpu_isa_describe(const struct cpu_isa *isa, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %d-channel blocks", isa->name, isa->block);
}

void cpu_isa_where(const struct cpu_isa *isa, char *buf, size_t len)
{
	if (isa->cap[0])
		snprintf(buf, len, "oneDNN runs %s here (capped by %s)", isa->name, isa->cap);
	else
		snprintf(buf, len, "oneDNN runs %s here", isa->name);
}
