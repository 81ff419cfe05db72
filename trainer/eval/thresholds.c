/* eval/thresholds.c - choosing a threshold per class from one descending
 * sort, and the confusion numbers at a threshold. What it does not do:
 * read or write files, or decide which split may choose.
 */
#include <math.h>
#include <stdlib.h>

#include "eval/thresholds.h"

const char *threshold_rule_name(enum threshold_rule r)
{
	switch (r) {
	case THRESHOLD_YOUDEN: return "youden";
	case THRESHOLD_SENSITIVITY: return "sensitivity";
	case THRESHOLD_SPECIFICITY: return "specificity";
	}
	return "?";
}

static int by_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

/* pairs (p, y) sorted by p descending, in one float array of 2*count. */
static float *sorted_pairs(const float *probs, const float *labels, size_t count, size_t stride,
			   size_t *positives)
{
	float *s = malloc(2 * count * sizeof(float) + 1);

	*positives = 0;
	for (size_t i = 0; s && i < count; i++) {
		if (!isfinite(probs[i * stride])) {
			free(s);
			return NULL;
		}
		s[2 * i] = probs[i * stride];
		s[2 * i + 1] = labels[i * stride] > 0.5f;
		*positives += labels[i * stride] > 0.5f;
	}
	if (s)
		qsort(s, count, 2 * sizeof(float), by_desc);
	return s;
}

/* Is (sens, spec) at this candidate better than the best so far?
 * Candidates come from the highest threshold down. */
static int better(const struct threshold_choice *rule, double sens, double spec, double *best)
{
	switch (rule->rule) {
	case THRESHOLD_YOUDEN:
		if (sens + spec - 1 > *best) {
			*best = sens + spec - 1;
			return 1;
		}
		return 0;
	case THRESHOLD_SENSITIVITY:  /* the first (highest) that reaches it */
		if (*best == 0 && sens >= rule->target) {
			*best = 1;
			return 1;
		}
		return 0;
	case THRESHOLD_SPECIFICITY:  /* the last (lowest) that still keeps it */
		return spec >= rule->target;
	}
	return 0;
}

double eval_threshold_choose(const float *probs, const float *labels, size_t count,
			     size_t stride, const struct threshold_choice *rule)
{
	size_t positives;
	float *s = sorted_pairs(probs, labels, count, stride, &positives);

	if (!s || positives == 0 || positives == count) {
		free(s);
		return NAN;
	}
	double negatives = (double)(count - positives), tp = 0, fp = 0;
	double best = 0;
	/* "above the highest": nothing positive, sensitivity 0, specificity 1 */
	double chosen = nextafterf(s[0], INFINITY);
	for (size_t i = 0; i < count;) {
		size_t j = i;
		for (; j < count && s[2 * j] == s[2 * i]; j++) {
			tp += s[2 * j + 1];
			fp += 1 - s[2 * j + 1];
		}
		if (better(rule, tp / (double)positives, 1 - fp / negatives, &best))
			chosen = s[2 * i];
		i = j;
	}
	free(s);
	return chosen;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

struct operating_point eval_operating_point(const float *probs, const float *labels,
					    size_t count, size_t stride, double threshold)
{
	struct operating_point o = { 0 };

	for (size_t i = 0; i < count; i++) {
		int pred = probs[i * stride] >= threshold, truth = labels[i * stride] > 0.5f;
		o.tp += pred && truth;
		o.fp += pred && !truth;
		o.tn += !pred && !truth;
		o.fn += !pred && truth;
	}
	o.sensitivity = ratio((double)o.tp, (double)(o.tp + o.fn));
	o.specificity = ratio((double)o.tn, (double)(o.tn + o.fp));
	o.ppv = ratio((double)o.tp, (double)(o.tp + o.fp));
	o.npv = ratio((double)o.tn, (double)(o.tn + o.fn));
	o.f1 = ratio(2.0 * (double)o.tp, (double)(2 * o.tp + o.fp + o.fn));
	return o;
}
