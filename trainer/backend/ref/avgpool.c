/* backend/ref/avgpool.c - average pooling over a k x k window (divisor k*k, zero
 * padding counted, as torch's count_include_pad=True) and global average
 * pooling to 1x1, forward and backward.
 * What it does not do: ceil mode or adaptive output sizes other than 1x1.
 */
#include <string.h>

#include "backend/ref/layers.h"

static void clear(const struct ref_view *v)
{
	for (int n = 0; n < v->n; n++)
		memset(ref_at(v, n, 0, 0, 0), 0, sizeof(float) * v->c * v->h * v->w);
}

static int inside(const struct ref_view *v, int y, int x)
{
	return y >= 0 && y < v->h && x >= 0 && x < v->w;
}

void ref_avgpool_forward(const struct ref_view *x, struct ref_conv_shape s,
			 const struct ref_view *y)
{
	float inv = 1.0f / (float)(s.kernel * s.kernel);

	for (int n = 0; n < y->n; n++)
		for (int c = 0; c < y->c; c++)
			for (int oy = 0; oy < y->h; oy++)
				for (int ox = 0; ox < y->w; ox++) {
					float sum = 0.0f;
					for (int ky = 0; ky < s.kernel; ky++)
						for (int kx = 0; kx < s.kernel; kx++) {
							int iy = oy * s.stride - s.pad + ky;
							int ix = ox * s.stride - s.pad + kx;
							if (inside(x, iy, ix))
								sum += *ref_at(x, n, c, iy, ix);
						}
					*ref_at(y, n, c, oy, ox) = sum * inv;
				}
}

void ref_avgpool_backward(const struct ref_view *dy, struct ref_conv_shape s,
			  const struct ref_view *dx, int accumulate)
{
	float inv = 1.0f / (float)(s.kernel * s.kernel);

	if (!dx)
		return;
	if (!accumulate)
		clear(dx);
	for (int n = 0; n < dy->n; n++)
		for (int c = 0; c < dy->c; c++)
			for (int oy = 0; oy < dy->h; oy++)
				for (int ox = 0; ox < dy->w; ox++) {
					float g = *ref_at(dy, n, c, oy, ox) * inv;
					for (int ky = 0; ky < s.kernel; ky++)
						for (int kx = 0; kx < s.kernel; kx++) {
							int iy = oy * s.stride - s.pad + ky;
							int ix = ox * s.stride - s.pad + kx;
							if (inside(dx, iy, ix))
								*ref_at(dx, n, c, iy, ix) += g;
						}
				}
}

void ref_global_avgpool_forward(const struct ref_view *x, const struct ref_view *y)
{
	int plane = x->h * x->w;

	for (int n = 0; n < x->n; n++)
		for (int c = 0; c < x->c; c++) {
			const float *in = ref_at(x, n, c, 0, 0);
			double sum = 0.0;
			for (int i = 0; i < plane; i++)
				sum += in[i];
			*ref_at(y, n, c, 0, 0) = (float)(sum / plane);
		}
}

void ref_global_avgpool_backward(const struct ref_view *dy, const struct ref_view *dx,
				 int accumulate)
{
	int plane = dx ? dx->h * dx->w : 0;

	if (!dx)
		return;
	for (int n = 0; n < dx->n; n++)
		for (int c = 0; c < dx->c; c++) {
			float g = *ref_at(dy, n, c, 0, 0) / (float)plane;
			float *gin = ref_at(dx, n, c, 0, 0);
			for (int i = 0; i < plane; i++)
				gin[i] = accumulate ? gin[i] + g : g;
		}
}
