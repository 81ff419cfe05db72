/* eval/calibration.c - equal-mass-bin ECE and reliability bins. What it
 * does not do: recalibrate anything (no temperature scaling here).
 */
#include <math.h>
#include <stdlib.h>

#include "eval/calibration.h"

struct pair { float p; float y; size_t i; };

static int by_p(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;   /* ties by position: deterministic bins */
	if (x->p != y->p)
		return (x->p > y->p) - (x->p < y->p);
	return (x->i > y->i) - (x->i < y->i);
}

double eval_ece(const float *probs, const float *labels, size_t count, size_t stride,
		int bins, struct calibration_bin *out)
{
	if (count == 0 || bins < 1 || (size_t)bins > count)
		return NAN;
	struct pair *s = malloc(count * sizeof(*s));
	double ece = 0;

	if (!s)
		return NAN;
	for (size_t i = 0; i < count; i++) {
		s[i] = (struct pair){ probs[i * stride], labels[i * stride] > 0.5f, i };
		if (!isfinite(s[i].p)) {
			free(s);
			return NAN;
		}
	}
	qsort(s, count, sizeof(*s), by_p);
	for (int b = 0; b < bins; b++) {
		size_t lo = count * (size_t)b / (size_t)bins, hi = count * (size_t)(b + 1) / (size_t)bins;
		double sp = 0, sy = 0;
		for (size_t i = lo; i < hi; i++) {
			sp += s[i].p;
			sy += s[i].y;
		}
		double n = (double)(hi - lo);
		ece += fabs(sp - sy) / (double)count;
		if (out)
			out[b] = (struct calibration_bin){ sp / n, sy / n, hi - lo };
	}
	free(s);
	return ece;
}
