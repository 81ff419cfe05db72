/* cpu_isa_caps.h - test helpers for running the cpu backend under
 * ONEDNN_MAX_CPU_ISA caps: whether a cap lowers anything on this machine
 * (asked of oneDNN in forked children, so the caller's oneDNN stays
 * unfixed), and whether bf16 cases must skip. What this does not do: set
 * a cap (the runner's group env does, per case).
 */
#ifndef HVD_TESTS_CPU_ISA_CAPS_H
#define HVD_TESTS_CPU_ISA_CAPS_H

#include <stddef.h>

#include "backend/cpu/cpu_isa.h"

/* The effective ISA (a dnnl_cpu_isa_t) of a child whose environment has
 * env "ONEDNN_MAX_CPU_ISA=X" (NULL: no cap); -1 when the child failed. */
int cpu_isa_effective_in_child(const char *env);

/* For a test_group's redundant(): NULL when env ("ONEDNN_MAX_CPU_ISA=X")
 * lowers this machine's ISA, else why the native run already is this run. */
const char *cpu_isa_cap_redundant(const char *env);

/* 1 (and the backend's one-line refusal in why) when the cpu backend has
 * no bf16 kernels under the current environment's ISA. */
int cpu_bf16_missing(char *why, size_t len);
/* 1 when the ISA computes bf16 natively (what --precision auto takes),
 * not emulated (avx512_core) or missing. */
int cpu_bf16_native(void);
#define SKIP_WITHOUT_BF16() do { char why_[512]; \
	if (cpu_bf16_missing(why_, sizeof(why_))) SKIP("%s", why_); } while (0)

#endif
