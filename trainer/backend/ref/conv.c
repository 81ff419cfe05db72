/* backend/ref/conv.c - 2-D convolution (groups 1, square kernel, symmetric zero
 * padding), forward and backward, as direct loops.
 * What it does not do: im2col, blocking, threads — on purpose.
 */
#include <string.h>

#include "backend/ref/layers.h"

/* Output column range [x0, x1) for which input column ox*stride - pad + k
 * falls inside [0, width). */
static void valid_range(int out, int in, int k, struct ref_conv_shape s, int *lo, int *hi)
{
	*lo = 0;
	while (*lo < out && *lo * s.stride - s.pad + k < 0)
		(*lo)++;
	*hi = out;
	while (*hi > *lo && (*hi - 1) * s.stride - s.pad + k >= in)
		(*hi)--;
}

void ref_conv_forward(const struct ref_view *x, const float *w, const float *bias,
		      struct ref_conv_shape s, const struct ref_view *y)
{
	int k = s.kernel;

	for (int n = 0; n < y->n; n++)
		for (int co = 0; co < y->c; co++) {
			for (int oy = 0; oy < y->h; oy++)
				for (int ox = 0; ox < y->w; ox++)
					*ref_at(y, n, co, oy, ox) = bias ? bias[co] : 0.0f;
			for (int ci = 0; ci < x->c; ci++)
				for (int ky = 0; ky < k; ky++)
					for (int kx = 0; kx < k; kx++) {
						float wv = w[(((size_t)co * x->c + ci) * k + ky) * k + kx];
						int x0, x1, y0, y1;
						valid_range(y->w, x->w, kx, s, &x0, &x1);
						valid_range(y->h, x->h, ky, s, &y0, &y1);
						for (int oy = y0; oy < y1; oy++) {
							int iy = oy * s.stride - s.pad + ky;
							float *out = ref_at(y, n, co, oy, 0);
							const float *in = ref_at(x, n, ci, iy, 0);
							for (int ox = x0; ox < x1; ox++)
								out[ox] += wv * in[ox * s.stride - s.pad + kx];
						}
					}
		}
}

static void zero_view(const struct ref_view *v)
{
	for (int n = 0; n < v->n; n++)
		memset(ref_at(v, n, 0, 0, 0), 0, sizeof(float) * v->c * v->h * v->w);
}

void ref_conv_backward(const struct ref_view *x, const float *w, const struct ref_view *dy,
		       struct ref_conv_shape s, const struct ref_view *dx, int accumulate,
		       float *dw, float *db)
{
	int k = s.kernel;

	if (dx && !accumulate)
		zero_view(dx);
	for (int co = 0; co < dy->c; co++) {
		if (db) {
			double sum = 0.0;
			for (int n = 0; n < dy->n; n++)
				for (int oy = 0; oy < dy->h; oy++)
					for (int ox = 0; ox < dy->w; ox++)
						sum += *ref_at(dy, n, co, oy, ox);
			db[co] = (float)sum;
		}
		for (int ci = 0; ci < x->c; ci++)
			for (int ky = 0; ky < k; ky++)
				for (int kx = 0; kx < k; kx++) {
					size_t wi = (((size_t)co * x->c + ci) * k + ky) * k + kx;
					int x0, x1, y0, y1;
					double sum = 0.0;
					valid_range(dy->w, x->w, kx, s, &x0, &x1);
					valid_range(dy->h, x->h, ky, s, &y0, &y1);
					for (int n = 0; n < dy->n; n++)
						for (int oy = y0; oy < y1; oy++) {
							int iy = oy * s.stride - s.pad + ky;
							const float *g = ref_at(dy, n, co, oy, 0);
							const float *in = ref_at(x, n, ci, iy, 0);
							float *gin = dx ? ref_at(dx, n, ci, iy, 0) : NULL;
							for (int ox = x0; ox < x1; ox++) {
								int ix = ox * s.stride - s.pad + kx;
								sum += (double)g[ox] * in[ix];
								if (gin)
									gin[ix] += w[wi] * g[ox];
							}
						}
					dw[wi] = (float)sum;
				}
	}
}
