/* precision.c - what each --precision name means, the same on every
 * backend (backend.h: precision_name, precision_storage,
 * precision_approximate, precision_check), and which backends take it:
 *
 *   name  activations  fp32 math               ref  cpu  gpu
 *   fp32  fp32         exact                   yes  yes  yes
 *   tf32  fp32         may be approximated     no   yes  yes
 *   bf16  bf16         (fp32 accumulation)     no   yes  yes
 *   fp16  fp16         (fp32 accumulation)     no   no   yes
 *
 * "Exact" is the direct convolution on the cpu (oneDNN never picks
 * Winograd), CUDNN_FMA_MATH and CUBLAS_COMPUTE_32F on the gpu: every
 * backend within fp32 rounding of ref. "May be approximated" is oneDNN's
 * own choice of algorithm (Winograd F(4x4,3x3) on AVX-512 for 3x3s at
 * batch > 8) and TF32 tensor cores for the gpu's convolutions and GEMMs
 * (PyTorch's defaults: cudnn.allow_tf32, set_float32_matmul_precision
 * ('high')). Each backend maps these two columns onto its library in one
 * place: cpu/conv.c (the algorithm), gpu/gpu_backend.c (math types).
 * What it does not do: pick a backend (registry.c) or resolve `auto`
 * (choice.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"

static const struct {
	const char *name;
	enum precision storage;
	int approximate;
	const char *backends;   /* those that take it, "|"-separated */
} meaning[] = {
	[PRECISION_FP32] = { "fp32", PRECISION_FP32, 0, "ref|cpu|gpu" },
	[PRECISION_TF32] = { "tf32", PRECISION_FP32, 1, "cpu|gpu" },
	[PRECISION_BF16] = { "bf16", PRECISION_BF16, 1, "cpu|gpu" },
	[PRECISION_FP16] = { "fp16", PRECISION_FP16, 1, "gpu" },
};

#define MEANINGS ((int)(sizeof(meaning) / sizeof(meaning[0])))

const char *precision_name(enum precision p)
{
	return meaning[p].name;
}

enum precision precision_storage(enum precision p)
{
	return meaning[p].storage;
}

int precision_approximate(enum precision p)
{
	return meaning[p].approximate;
}

static int takes(int p, const char *backend)
{
	size_t n = strlen(backend);
	for (const char *s = meaning[p].backends; s; s = strchr(s, '|'), s = s ? s + 1 : NULL)
		if (!strncmp(s, backend, n) && (s[n] == '|' || !s[n]))
			return 1;
	return 0;
}

/* "fp32", "fp32 and bf16", "fp32, tf32 and bf16": the names backend takes. */
static void names_of(const char *backend, char *out, size_t len)
{
	int count = 0, total = 0;
	for (int p = 0; p < MEANINGS; p++)
		total += takes(p, backend);
	out[0] = 0;
	for (int p = 0; p < MEANINGS; p++) {
		if (!takes(p, backend))
			continue;
		size_t at = strlen(out);
		snprintf(out + at, len - at, "%s%s", count == 0 ? "" : count == total - 1 ? " and "
			 : ", ", meaning[p].name);
		count++;
	}
}

int precision_check(enum precision p, const char *backend, struct trainer_error *err)
{
	char names[64];
	if ((int)p >= 0 && (int)p < MEANINGS && takes((int)p, backend))
		return 0;
	names_of(backend, names, sizeof(names));
	if ((int)p < 0 || (int)p >= MEANINGS)
		return trainer_error_set(err, "--precision: '%d': unknown", (int)p);
	if (!strchr(names, ' '))
		return trainer_error_set(err, "--precision: '%s': the %s backend computes in %s only",
					 meaning[p].name, backend, names);
	return trainer_error_set(err, "--precision: '%s': the %s backend has %s", meaning[p].name,
				 backend, names);
}
