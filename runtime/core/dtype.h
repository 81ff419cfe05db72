/* dtype.h - element sizes, names and host conversions for hvd dtypes
 * (f16 and bf16 through f32, round to nearest even). Pure.
 * What it does not do: device conversions (NCCL reduces f16/bf16 natively).
 */
#ifndef HVD_DTYPE_H
#define HVD_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "hvd.h"

/* Bytes per element, 0 for an unknown dtype. Inline: the engine asks
 * once per tensor per step. */
static inline size_t dtype_size(enum hvd_dtype t)
{
	static const size_t sizes[HVD_DTYPE_COUNT] = { [HVD_F32] = 4, [HVD_F16] = 2, [HVD_BF16] = 2,
						       [HVD_I32] = 4, [HVD_I64] = 8 };
	return (unsigned)t < HVD_DTYPE_COUNT ? sizes[t] : 0;
}

const char *dtype_name(enum hvd_dtype t); /* "float32", ... as Horovod's timeline */
int dtype_is_float(enum hvd_dtype t);

float dtype_f16_to_f32(uint16_t h);
uint16_t dtype_f32_to_f16(float f);
float dtype_bf16_to_f32(uint16_t h);
uint16_t dtype_f32_to_bf16(float f);

/* Widen `count` elements of f16 or bf16 `src` into f32 `dst` (the
 * engine's f32 buffer for a backend without half sums, widens_halves). */
void dtype_to_f32(float *dst, const void *src, size_t count, enum hvd_dtype t);
/* Narrow f32 `src` into `dst` of dtype t (f16 or bf16). */
void dtype_from_f32(void *dst, const float *src, size_t count, enum hvd_dtype t);
/* Round f32 values through f16/bf16 in place (what compression keeps). */
void dtype_round_f32_through(float *buf, size_t count, enum hvd_dtype t);
/* dst[i] = (x[i] + y[i]) * factor (dst may be x or y): one add, one
 * multiply (factor 1: the plain sum), the bits of a sum scaled
 * afterwards: the backends fold an average's 1/size into their last
 * addition. */
void dtype_add_scale_f32(float *dst, const float *x, const float *y, size_t count, float factor);

#endif
