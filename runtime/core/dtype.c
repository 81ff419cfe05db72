/* dtype.c - see dtype.h. Conversions are bit-exact IEEE half / bfloat16
 * with round to nearest even; NaN stays NaN, overflow becomes infinity.
 */
#include "core/dtype.h"

#include <math.h>
#include <string.h>

const char *dtype_name(enum hvd_dtype t)
{
	static const char *const names[HVD_DTYPE_COUNT] = {
		[HVD_F32] = "float32", [HVD_F16] = "float16", [HVD_BF16] = "bfloat16",
		[HVD_I32] = "int32", [HVD_I64] = "int64",
	};
	return (unsigned)t < HVD_DTYPE_COUNT ? names[t] : "invalid";
}

int dtype_is_float(enum hvd_dtype t)
{
	return t == HVD_F32 || t == HVD_F16 || t == HVD_BF16;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

float dtype_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	if (exp == 0x1f)
		return f32_from_bits(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		float v = ldexpf((float)man, -24); /* subnormal or zero */
		return sign ? -v : v;
	}
	return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t dtype_f32_to_f16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return sign | 0x7e00; /* NaN */
	if (a >= 0x477ff000u)     /* rounds to >= 65520: infinity */
		return sign | 0x7c00;
	if (a < 0x38800000u) {    /* below the smallest normal: subnormal */
		float m = fabsf(f) * 16777216.0f; /* units of 2^-24 */
		return sign | (uint16_t)lrintf(m);
	}
	uint32_t rounded = a + 0xfffu + ((a >> 13) & 1); /* nearest even */
	return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

float dtype_bf16_to_f32(uint16_t h)
{
	return f32_from_bits((uint32_t)h << 16);
}

uint16_t dtype_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void dtype_to_f32(float *dst, const void *src, size_t count, enum hvd_dtype t)
{
	const uint16_t *h = src;
	if (t == HVD_F16)
		for (size_t i = 0; i < count; i++)
			dst[i] = dtype_f16_to_f32(h[i]);
	else if (t == HVD_BF16)
		for (size_t i = 0; i < count; i++)
			dst[i] = dtype_bf16_to_f32(h[i]);
}

void dtype_from_f32(void *dst, const float *src, size_t count, enum hvd_dtype t)
{
	uint16_t *h = dst;
	if (t == HVD_F16)
		for (size_t i = 0; i < count; i++)
			h[i] = dtype_f32_to_f16(src[i]);
	else if (t == HVD_BF16)
		for (size_t i = 0; i < count; i++)
			h[i] = dtype_f32_to_bf16(src[i]);
}

void dtype_round_f32_through(float *buf, size_t count, enum hvd_dtype t)
{
	if (t == HVD_F16)
		for (size_t i = 0; i < count; i++)
			buf[i] = dtype_f16_to_f32(dtype_f32_to_f16(buf[i]));
	else if (t == HVD_BF16)
		for (size_t i = 0; i < count; i++)
			buf[i] = dtype_bf16_to_f32(dtype_f32_to_bf16(buf[i]));
}

/* Eight floats at a time (SSE, on any x86-64): -O2 leaves the plain loop
 * scalar. Each element is still one IEEE add and one multiply: the
 * result is the plain loop's. */
typedef float f32x4 __attribute__((vector_size(16)));

void dtype_add_scale_f32(float *dst, const float *x, const float *y, size_t count, float factor)
{
	size_t i = 0;
	for (; i + 8 <= count; i += 8) {
		f32x4 a, b, c, e;
		memcpy(&a, x + i, sizeof(a));
		memcpy(&b, x + i + 4, sizeof(b));
		memcpy(&c, y + i, sizeof(c));
		memcpy(&e, y + i + 4, sizeof(e));
		a = (a + c) * factor;
		b = (b + e) * factor;
		memcpy(dst + i, &a, sizeof(a));
		memcpy(dst + i + 4, &b, sizeof(b));
	}
	for (; i < count; i++)
		dst[i] = (x[i] + y[i]) * factor;
}
