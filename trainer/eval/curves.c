/* eval/curves.c - ROC points and average precision of one class, from
 * one descending sort. What it does not do: AUROC, intervals, plotting.
 */
#include <math.h>
#include <stdlib.h>

#include "eval/auroc.h"
#include "eval/curves.h"

struct scored { float score; float label; };

static int by_score_desc(const void *a, const void *b)
{
	float x = ((const struct scored *)a)->score, y = ((const struct scored *)b)->score;
	return (x < y) - (x > y);
}

/* Sorted descending copy, NULL when a score is not finite or no memory. */
static struct scored *sorted_desc(const float *scores, const float *labels, size_t count,
				  size_t stride, size_t *positives)
{
	struct scored *s = malloc((count + 1) * sizeof(*s));

	*positives = 0;
	for (size_t i = 0; s && i < count; i++) {
		if (!isfinite(scores[i * stride])) {
			free(s);
			return NULL;
		}
		s[i] = (struct scored){ scores[i * stride], labels[i * stride] };
		*positives += s[i].label > 0.5f;
	}
	if (s)
		qsort(s, count, sizeof(*s), by_score_desc);
	return s;
}

double eval_auprc(const float *scores, const float *labels, size_t count, size_t stride)
{
	size_t positives;
	struct scored *s = sorted_desc(scores, labels, count, stride, &positives);
	double ap = 0, tp = 0, seen = 0, last_recall = 0;

	if (!s || positives == 0) {
		free(s);
		return NAN;
	}
	for (size_t i = 0; i < count;) {
		size_t j = i;
		while (j < count && s[j].score == s[i].score)
			tp += s[j++].label > 0.5f;
		seen = (double)j;
		double recall = tp / (double)positives;
		ap += (recall - last_recall) * (tp / seen);
		last_recall = recall;
		i = j;
	}
	free(s);
	return ap;
}

size_t eval_roc_points(const float *scores, const float *labels, size_t count, size_t stride,
		       float *fpr, float *tpr)
{
	size_t positives, points = 1;
	struct scored *s = sorted_desc(scores, labels, count, stride, &positives);
	double tp = 0, fp = 0;

	if (!s || positives == 0 || positives == count) {
		free(s);
		return 0;
	}
	double negatives = (double)(count - positives);
	fpr[0] = tpr[0] = 0;
	for (size_t i = 0; i < count;) {
		size_t j = i;
		for (; j < count && s[j].score == s[i].score; j++) {
			tp += s[j].label > 0.5f;
			fp += s[j].label <= 0.5f;
		}
		fpr[points] = (float)(fp / negatives);
		tpr[points] = (float)(tp / (double)positives);
		points++;
		i = j;
	}
	free(s);
	return points;
}
