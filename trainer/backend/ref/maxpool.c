/* backend/ref/maxpool.c - max pooling (square window, stride, implicit -inf
 * padding), forward and backward; ties go to the first element of the
 * window in row-major order. What it does not do: ceil mode or dilation.
 */
#include <string.h>

#include "backend/ref/layers.h"

/* Input position (iy, ix) of the window maximum for output (oy, ox). */
static void window_max(const struct ref_view *x, int n, int c, int oy, int ox,
		       struct ref_conv_shape s, int *best_y, int *best_x)
{
	float best = 0.0f;
	int found = 0;

	*best_y = *best_x = -1;
	for (int ky = 0; ky < s.kernel; ky++)
		for (int kx = 0; kx < s.kernel; kx++) {
			int iy = oy * s.stride - s.pad + ky, ix = ox * s.stride - s.pad + kx;
			if (iy < 0 || iy >= x->h || ix < 0 || ix >= x->w)
				continue;
			float v = *ref_at(x, n, c, iy, ix);
			if (!found || v > best) {
				best = v;
				*best_y = iy;
				*best_x = ix;
				found = 1;
			}
		}
}

void ref_maxpool_forward(const struct ref_view *x, struct ref_conv_shape s,
			 const struct ref_view *y)
{
	for (int n = 0; n < y->n; n++)
		for (int c = 0; c < y->c; c++)
			for (int oy = 0; oy < y->h; oy++)
				for (int ox = 0; ox < y->w; ox++) {
					int iy, ix;
					window_max(x, n, c, oy, ox, s, &iy, &ix);
					*ref_at(y, n, c, oy, ox) = *ref_at(x, n, c, iy, ix);
				}
}

void ref_maxpool_backward(const struct ref_view *x, const struct ref_view *dy,
			  struct ref_conv_shape s, const struct ref_view *dx, int accumulate)
{
	if (!dx)
		return;
	if (!accumulate)
		for (int n = 0; n < dx->n; n++)
			memset(ref_at(dx, n, 0, 0, 0), 0, sizeof(float) * dx->c * dx->h * dx->w);
	for (int n = 0; n < dy->n; n++)
		for (int c = 0; c < dy->c; c++)
			for (int oy = 0; oy < dy->h; oy++)
				for (int ox = 0; ox < dy->w; ox++) {
					int iy, ix;
					window_max(x, n, c, oy, ox, s, &iy, &ix);
					*ref_at(dx, n, c, iy, ix) += *ref_at(dy, n, c, oy, ox);
				}
}
