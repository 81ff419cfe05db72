/* backend/ref/batchnorm.c - batch normalisation per channel over (N, H, W), with
 * an optional ReLU on the output: training (batch statistics, running
 * statistics updated as torch: momentum 0.1, unbiased running variance),
 * evaluation (running statistics) and backward. Sums in double.
 * What it does not do: keep any state (the caller owns saved/running).
 */
#include <math.h>

#include "backend/ref/layers.h"

static double channel_sum(const struct ref_view *v, int c)
{
	double sum = 0.0;

	for (int n = 0; n < v->n; n++)
		for (int i = 0; i < v->h * v->w; i++)
			sum += ref_at(v, n, c, 0, 0)[i];
	return sum;
}

/* y = x*scale + shift per channel, then ReLU if relu. */
static void affine(const struct ref_view *x, int c, float scale, float shift, int relu,
		   const struct ref_view *y)
{
	for (int n = 0; n < x->n; n++) {
		const float *in = ref_at(x, n, c, 0, 0);
		float *out = ref_at(y, n, c, 0, 0);
		for (int i = 0; i < x->h * x->w; i++) {
			float v = in[i] * scale + shift;
			out[i] = (relu && v < 0.0f) ? 0.0f : v;
		}
	}
}

void ref_batchnorm_forward_train(const struct ref_view *x, const float *gamma,
				 const float *beta, int relu, const struct ref_view *y,
				 float *saved_mean, float *saved_invstd,
				 float *running_mean, float *running_var)
{
	double count = (double)x->n * x->h * x->w;

	for (int c = 0; c < x->c; c++) {
		double mean = channel_sum(x, c) / count, sq = 0.0;
		for (int n = 0; n < x->n; n++) {
			const float *in = ref_at(x, n, c, 0, 0);
			for (int i = 0; i < x->h * x->w; i++)
				sq += (in[i] - mean) * (in[i] - mean);
		}
		double var = sq / count;
		double invstd = 1.0 / sqrt(var + REF_BN_EPS);
		saved_mean[c] = (float)mean;
		saved_invstd[c] = (float)invstd;
		if (running_mean) {
			double unbiased = count > 1 ? sq / (count - 1) : var;
			running_mean[c] = (float)((1 - REF_BN_MOMENTUM) * running_mean[c] + REF_BN_MOMENTUM * mean);
			running_var[c] = (float)((1 - REF_BN_MOMENTUM) * running_var[c] + REF_BN_MOMENTUM * unbiased);
		}
		float scale = (float)(gamma[c] * invstd);
		affine(x, c, scale, (float)(beta[c] - mean * gamma[c] * invstd), relu, y);
	}
}

void ref_batchnorm_forward_eval(const struct ref_view *x, const float *gamma,
				const float *beta, const float *running_mean,
				const float *running_var, int relu, const struct ref_view *y)
{
	for (int c = 0; c < x->c; c++) {
		double invstd = 1.0 / sqrt((double)running_var[c] + REF_BN_EPS);
		float scale = (float)(gamma[c] * invstd);
		affine(x, c, scale, (float)(beta[c] - running_mean[c] * gamma[c] * invstd), relu, y);
	}
}

/* dy masked by the ReLU (y > 0) when relu is set. */
static float grad_out(const struct ref_view *y, const struct ref_view *dy, int relu,
		      int n, int c, int i)
{
	float g = ref_at(dy, n, c, 0, 0)[i];
	return (relu && ref_at(y, n, c, 0, 0)[i] <= 0.0f) ? 0.0f : g;
}

/* dx = gamma*invstd * (g - mean(g) - xhat*mean(g*xhat)). */
void ref_batchnorm_backward(const struct ref_view *x, const struct ref_view *y,
			    const struct ref_view *dy, const float *gamma, int relu,
			    const float *saved_mean, const float *saved_invstd,
			    const struct ref_view *dx, int accumulate,
			    float *dgamma, float *dbeta)
{
	double count = (double)x->n * x->h * x->w;

	for (int c = 0; c < x->c; c++) {
		double sum_g = 0.0, sum_gx = 0.0;
		for (int n = 0; n < x->n; n++)
			for (int i = 0; i < x->h * x->w; i++) {
				double g = grad_out(y, dy, relu, n, c, i);
				double xhat = (ref_at(x, n, c, 0, 0)[i] - saved_mean[c]) * saved_invstd[c];
				sum_g += g;
				sum_gx += g * xhat;
			}
		dgamma[c] = (float)sum_gx;
		dbeta[c] = (float)sum_g;
		if (!dx)
			continue;
		for (int n = 0; n < x->n; n++) {
			float *out = ref_at(dx, n, c, 0, 0);
			for (int i = 0; i < x->h * x->w; i++) {
				double xhat = (ref_at(x, n, c, 0, 0)[i] - saved_mean[c]) * saved_invstd[c];
				double g = grad_out(y, dy, relu, n, c, i);
				float v = (float)(gamma[c] * saved_invstd[c] *
						  (g - sum_g / count - xhat * sum_gx / count));
				out[i] = accumulate ? out[i] + v : v;
			}
		}
	}
}
