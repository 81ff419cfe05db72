/* eval/cam.c - class activation maps from feature maps and classifier weights,
 * their upsampling to the image, argmax and normalisation (cam.h).
 * What it does not do: run the model or draw.
 */
#include <math.h>

#include "eval/cam.h"

void cam_compute(const float *weights, const float *maps, int channels, int h, int w,
		 float *cam)
{
	size_t hw = (size_t)h * w;

	for (size_t p = 0; p < hw; p++)
		cam[p] = 0;
	for (int k = 0; k < channels; k++) {
		const float *m = maps + (size_t)k * hw;
		for (size_t p = 0; p < hw; p++)
			cam[p] += weights[k] * m[p];
	}
}

/* Source coordinate of destination pixel d (half-pixel centres): the lower
 * cell i0, the upper i1 and the weight t of i1. */
static void source_of(int d, int side, int n, int *i0, int *i1, float *t)
{
	double s = (d + 0.5) * n / side - 0.5;

	if (s < 0)
		s = 0;
	*i0 = (int)floor(s);
	if (*i0 > n - 1)
		*i0 = n - 1;
	*i1 = *i0 + 1 < n ? *i0 + 1 : n - 1;
	*t = (float)(s - *i0);
}

void cam_upsample(const float *cam, int h, int w, int side, float *out)
{
	for (int y = 0; y < side; y++) {
		int y0, y1, x0, x1;
		float ty, tx;
		source_of(y, side, h, &y0, &y1, &ty);
		for (int x = 0; x < side; x++) {
			source_of(x, side, w, &x0, &x1, &tx);
			float top = cam[y0 * w + x0] * (1 - tx) + cam[y0 * w + x1] * tx;
			float bottom = cam[y1 * w + x0] * (1 - tx) + cam[y1 * w + x1] * tx;
			out[(size_t)y * side + x] = top * (1 - ty) + bottom * ty;
		}
	}
}

int cam_argmax(const float *cam, int h, int w)
{
	int best = 0;

	for (int p = 1; p < h * w; p++)
		if (cam[p] > cam[best])
			best = p;
	return best;
}

void cam_normalise(float *v, size_t n)
{
	float lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < n; i++) {
		lo = fminf(lo, v[i]);
		hi = fmaxf(hi, v[i]);
	}
	for (size_t i = 0; i < n; i++)
		v[i] = hi > lo ? (v[i] - lo) / (hi - lo) : 0;
}
