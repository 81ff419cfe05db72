/* image_resize.c - area resize, crop and flip of grayscale images. Pure.
 *
 * Area filter in integers: along x, source pixel i covers [i*dw, (i+1)*dw)
 * and output pixel x covers [x*sw, (x+1)*sw) on a common grid, so each
 * weight is an exact integer overlap and the weights of one output pixel
 * sum to sw (to sh along y). Padding to a square is the same filter over
 * a canvas whose cells outside the image are 0, never a second resize.
 * What it does not do: gamma-aware filtering.
 */
#include <string.h>

#include "data/image/image_resize.h"

/* First source index and overlap weight of source i with output o, where
 * source cells have length d and output cells length s on the common grid. */
static inline uint32_t overlap(long i, long o, long s, long d)
{
	long lo = i * d > o * s ? i * d : o * s;
	long hi = (i + 1) * d < (o + 1) * s ? (i + 1) * d : (o + 1) * s;
	return hi > lo ? (uint32_t)(hi - lo) : 0;
}

/* Area resize of the (lw, lh) canvas holding src (sw, sh) at (ox, oy),
 * the rest of the canvas 0, to dst (dw, dh). */
static void resize_canvas(const uint8_t *src, int sw, int sh, int ox, int oy, int lw, int lh,
			  uint8_t *dst, int dw, int dh)
{
	uint32_t acc[lw];  /* vertical weighted sums of one output row; lw <= IMAGE_MAX_SIDE */
	const uint64_t total = (uint64_t)lw * (uint64_t)lh;
	for (int y = 0; y < dh; y++) {
		long y0 = (long)y * lh / dh, y1 = ((long)(y + 1) * lh + dh - 1) / dh;
		memset(acc, 0, sizeof(acc));
		for (long j = y0; j < y1 && j < lh; j++) {
			if (j < oy || j >= oy + sh)
				continue;
			uint32_t w = overlap(j, y, lh, dh);
			const uint8_t *row = src + (size_t)(j - oy) * sw;
			for (int i = 0; i < sw; i++)
				acc[ox + i] += w * row[i];
		}
		for (int x = 0; x < dw; x++) {
			long x0 = (long)x * lw / dw, x1 = ((long)(x + 1) * lw + dw - 1) / dw;
			uint64_t sum = 0;
			for (long i = x0; i < x1 && i < lw; i++)
				sum += (uint64_t)overlap(i, x, lw, dw) * acc[i];
			dst[(size_t)y * dw + x] = (uint8_t)((sum + total / 2) / total);
		}
	}
}

void image_resize_area(const uint8_t *src, int sw, int sh,
		       uint8_t *dst, int dw, int dh)
{
	resize_canvas(src, sw, sh, 0, 0, sw, sh, dst, dw, dh);
}

void image_resize_square(const uint8_t *src, int sw, int sh, enum image_aspect aspect,
			 uint8_t *dst, int side)
{
	int l = sw > sh ? sw : sh;

	if (aspect == IMAGE_ASPECT_SQUASH)
		l = 0;
	if (!l)
		resize_canvas(src, sw, sh, 0, 0, sw, sh, dst, side, side);
	else
		resize_canvas(src, sw, sh, (l - sw) / 2, (l - sh) / 2, l, l, dst, side, side);
}

const char *image_aspect_name(enum image_aspect aspect)
{
	return aspect == IMAGE_ASPECT_SQUASH ? "squash" : "pad";
}

int image_aspect_parse(const char *name, enum image_aspect *aspect)
{
	if (strcmp(name, "pad") == 0)
		*aspect = IMAGE_ASPECT_PAD;
	else if (strcmp(name, "squash") == 0)
		*aspect = IMAGE_ASPECT_SQUASH;
	else
		return -1;
	return 0;
}

int image_stored_side(int side)
{
	return (8 * side + 3) / 7;
}

void image_crop(const uint8_t *src, int sw, int x, int y, int side,
		int flip, uint8_t *dst)
{
	for (int r = 0; r < side; r++) {
		const uint8_t *in = src + (size_t)(y + r) * sw + x;
		uint8_t *out = dst + (size_t)r * side;
		if (!flip) {
			memcpy(out, in, (size_t)side);
			continue;
		}
		for (int c = 0; c < side; c++)
			out[c] = in[side - 1 - c];
	}
}

void image_crop_centre(const uint8_t *src, int sw, int side, int flip, uint8_t *dst)
{
	image_crop(src, sw, (sw - side) / 2, (sw - side) / 2, side, flip, dst);
}
