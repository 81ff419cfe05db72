/* backend/ref/linear.c - fully connected layer y = x W^T + b with x flattened per
 * image to C*H*W (torch's flatten order), forward and backward.
 * What it does not do: activation (the loss applies the sigmoid).
 */
#include "backend/ref/layers.h"

void ref_linear_forward(const struct ref_view *x, const float *w, const float *bias,
			const struct ref_view *y)
{
	size_t in = (size_t)x->c * x->h * x->w;

	for (int n = 0; n < x->n; n++) {
		const float *xi = ref_at(x, n, 0, 0, 0);
		for (int o = 0; o < y->c; o++) {
			double sum = bias[o];
			for (size_t i = 0; i < in; i++)
				sum += (double)w[o * in + i] * xi[i];
			*ref_at(y, n, o, 0, 0) = (float)sum;
		}
	}
}

void ref_linear_backward(const struct ref_view *x, const float *w, const struct ref_view *dy,
			 const struct ref_view *dx, int accumulate, float *dw, float *db)
{
	size_t in = (size_t)x->c * x->h * x->w;

	for (int o = 0; o < dy->c; o++) {
		double sum_b = 0.0;
		for (int n = 0; n < dy->n; n++)
			sum_b += *ref_at(dy, n, o, 0, 0);
		db[o] = (float)sum_b;
		for (size_t i = 0; i < in; i++) {
			double sum = 0.0;
			for (int n = 0; n < dy->n; n++)
				sum += (double)*ref_at(dy, n, o, 0, 0) * ref_at(x, n, 0, 0, 0)[i];
			dw[o * in + i] = (float)sum;
		}
	}
	if (!dx)
		return;
	for (int n = 0; n < x->n; n++) {
		float *gx = ref_at(dx, n, 0, 0, 0);
		for (size_t i = 0; i < in; i++) {
			double sum = 0.0;
			for (int o = 0; o < dy->c; o++)
				sum += (double)*ref_at(dy, n, o, 0, 0) * w[o * in + i];
			gx[i] = accumulate ? gx[i] + (float)sum : (float)sum;
		}
	}
}
