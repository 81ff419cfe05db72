/* backend/ref/relu.c - ReLU forward and backward (mask from the output).
 * What it does not do: leaky or clipped variants.
 */
#include "backend/ref/layers.h"

void ref_relu_forward(const struct ref_view *x, const struct ref_view *y)
{
	for (int n = 0; n < x->n; n++)
		for (int c = 0; c < x->c; c++) {
			const float *in = ref_at(x, n, c, 0, 0);
			float *out = ref_at(y, n, c, 0, 0);
			for (int i = 0; i < x->h * x->w; i++)
				out[i] = in[i] > 0.0f ? in[i] : 0.0f;
		}
}

void ref_relu_backward(const struct ref_view *y, const struct ref_view *dy,
		       const struct ref_view *dx, int accumulate)
{
	if (!dx)
		return;
	for (int n = 0; n < y->n; n++)
		for (int c = 0; c < y->c; c++) {
			const float *out = ref_at(y, n, c, 0, 0);
			const float *g = ref_at(dy, n, c, 0, 0);
			float *gin = ref_at(dx, n, c, 0, 0);
			for (int i = 0; i < y->h * y->w; i++) {
				float v = out[i] > 0.0f ? g[i] : 0.0f;
				gin[i] = accumulate ? gin[i] + v : v;
			}
		}
}
