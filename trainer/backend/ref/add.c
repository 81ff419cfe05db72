/* backend/ref/add.c - elementwise sum of two tensors (ResNet's shortcut), with an
 * optional ReLU after it. What it does not do: broadcasting.
 */
#include "backend/ref/layers.h"

void ref_add_forward(const struct ref_view *a, const struct ref_view *b, int relu,
		     const struct ref_view *y)
{
	for (int n = 0; n < a->n; n++)
		for (int c = 0; c < a->c; c++) {
			const float *pa = ref_at(a, n, c, 0, 0), *pb = ref_at(b, n, c, 0, 0);
			float *out = ref_at(y, n, c, 0, 0);
			for (int i = 0; i < a->h * a->w; i++) {
				float v = pa[i] + pb[i];
				out[i] = (relu && v < 0.0f) ? 0.0f : v;
			}
		}
}

static void pass_grad(const struct ref_view *y, const struct ref_view *dy, int relu,
		      const struct ref_view *dx, int accumulate)
{
	if (!dx)
		return;
	for (int n = 0; n < dy->n; n++)
		for (int c = 0; c < dy->c; c++) {
			const float *out = ref_at(y, n, c, 0, 0), *g = ref_at(dy, n, c, 0, 0);
			float *gin = ref_at(dx, n, c, 0, 0);
			for (int i = 0; i < dy->h * dy->w; i++) {
				float v = (relu && out[i] <= 0.0f) ? 0.0f : g[i];
				gin[i] = accumulate ? gin[i] + v : v;
			}
		}
}

void ref_add_backward(const struct ref_view *y, const struct ref_view *dy, int relu,
		      const struct ref_view *da, int accumulate_a,
		      const struct ref_view *db, int accumulate_b)
{
	pass_grad(y, dy, relu, da, accumulate_a);
	pass_grad(y, dy, relu, db, accumulate_b);
}
