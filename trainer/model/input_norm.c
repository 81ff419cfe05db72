/* input_norm.c - uint8 gray images to normalised 3-channel fp32 (NCHW).
 * What it does not do: any other layout (backends reorder themselves).
 */
#include <stddef.h>

#include "model/input_norm.h"

const float input_norm_mean[3] = { 0.485f, 0.456f, 0.406f };
const float input_norm_std[3] = { 0.229f, 0.224f, 0.225f };

void input_norm_nchw(const struct batch *b, int count, float *x)
{
	size_t plane = (size_t)b->size * b->size;

	for (int n = 0; n < count; n++) {
		const uint8_t *px = b->pixels + (size_t)n * plane;
		for (int c = 0; c < 3; c++) {
			float *dst = x + ((size_t)n * 3 + c) * plane;
			for (size_t i = 0; i < plane; i++)
				dst[i] = ((float)px[i] / 255.0f - input_norm_mean[c])
					 / input_norm_std[c];
		}
	}
}
