/* loss.c - weighted or plain sigmoid + binary cross-entropy, computed
 * stably from logits (log sigmoid(z) = -softplus(-z)).
 * What it does not do: reduce across ranks (the runtime does).
 */
#include <math.h>

#include "model/loss.h"

int loss_class_weights(const size_t *positives, size_t total, int classes,
		       float *w_pos, float *w_neg)
{
	int degenerate = 0;

	for (int c = 0; c < classes; c++) {
		size_t p = positives[c], n = total - positives[c];
		if (p == 0 || n == 0 || positives[c] > total) {
			w_pos[c] = w_neg[c] = 1.0f;
			degenerate++;
			continue;
		}
		w_pos[c] = (float)((double)n / (double)total);
		w_neg[c] = (float)((double)p / (double)total);
	}
	return degenerate;
}

float loss_sigmoid(float z)
{
	if (z >= 0.0f)
		return 1.0f / (1.0f + expf(-z));
	float e = expf(z);
	return e / (1.0f + e);
}

static double softplus(double z)
{
	return z > 0.0 ? z + log1p(exp(-z)) : log1p(exp(z));
}

double loss_bce(const float *logits, const float *labels, int count, int classes,
		const float *w_pos, const float *w_neg, float *dlogits)
{
	double total = 0.0, scale = 1.0 / ((double)count * classes);

	for (int n = 0; n < count; n++)
		for (int c = 0; c < classes; c++) {
			size_t i = (size_t)n * classes + c;
			double z = logits[i], y = labels[i];
			double wp = w_pos ? w_pos[c] : 1.0, wn = w_neg ? w_neg[c] : 1.0;
			total += wp * y * softplus(-z) + wn * (1.0 - y) * softplus(z);
			if (dlogits) {
				double p = loss_sigmoid((float)z);
				dlogits[i] = (float)(scale * (wp * y * (p - 1.0) + wn * (1.0 - y) * p));
			}
		}
	return total * scale;
}
