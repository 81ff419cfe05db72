/* cpu_isa.h - which instruction set oneDNN dispatches to on this machine
 * and what follows from it for the cpu backend: the channel block of the
 * blocked layouts (8 on SSE4.1/AVX/AVX2, 16 on AVX-512/AMX, read from the
 * format a convolution picks, so a future ISA needs no edit), whether
 * bf16 kernels exist, and whether ONEDNN_MAX_CPU_ISA capped it.
 *
 * oneDNN fixes its ISA at the first query: the cap must be in the
 * environment before the process's first oneDNN call. What this does not
 * do: set the cap, or choose any layer's layout (cpu_plan.c).
 */
#ifndef HVD_TRAINER_CPU_ISA_H
#define HVD_TRAINER_CPU_ISA_H

#include <stddef.h>
#include <oneapi/dnnl/dnnl.h>

struct cpu_isa {
	dnnl_cpu_isa_t isa;   /* dnnl_get_effective_cpu_isa() */
	const char *name;     /* "avx2", "avx512_core_bf16", ... */
	int block;            /* channels per block of nChw{8,16}c */
	int bf16;             /* oneDNN has bf16 kernels for this ISA */
	int bf16_native;      /* ...computed in bf16 instructions, not emulated */
	int amx;              /* AMX tiles (bf16 convs want NHWC) */
	char cap[64];         /* "ONEDNN_MAX_CPU_ISA=AVX2" when set, else "" */
};

/* Fill isa for the engine's CPU. Never fails: when the probe convolution
 * cannot be made the block follows from the ISA. */
void cpu_isa_probe(dnnl_engine_t engine, struct cpu_isa *isa);

/* Pure parts (unit-tested without oneDNN state). */
const char *cpu_isa_name(dnnl_cpu_isa_t isa);
int cpu_isa_has(dnnl_cpu_isa_t isa, dnnl_cpu_isa_t feature);   /* bitmask test */
int cpu_isa_block_for(dnnl_cpu_isa_t isa);                      /* 8 or 16 */
/* "avx2, 8-channel blocks" */
void cpu_isa_describe(const struct cpu_isa *isa, char *buf, size_t len);
/* "oneDNN runs avx2 here (capped by ONEDNN_MAX_CPU_ISA=AVX2)" */
void cpu_isa_where(const struct cpu_isa *isa, char *buf, size_t len);

#endif
