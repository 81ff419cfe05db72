/* eval/auroc.c - exact AUROC by ranks (ties get their average rank), and the
 * table beside the paper's values. What it does not do: ROC curves or
 * confidence intervals.
 */
#include <math.h>
#include <stdlib.h>

#include "base/classes.h"
#include "eval/auroc.h"

const double auroc_chexnet_paper[14] = {
	0.8094, 0.9248, 0.8638, 0.7345, 0.8676, 0.7802, 0.7680,
	0.8887, 0.7901, 0.8878, 0.9371, 0.8047, 0.8062, 0.9164,
};

struct scored {
	float score;
	float label;
};

static int by_score(const void *a, const void *b)
{
	float x = ((const struct scored *)a)->score, y = ((const struct scored *)b)->score;
	return (x > y) - (x < y);
}

/* AUROC_NONFINITE when any score is NaN or ±Inf (a NaN breaks the sort
 * order and the tie scan; an infinite logit means the model diverged),
 * AUROC_ONE_LABEL when all labels are equal (or none), else defined. */
enum auroc_undefined auroc_check(const float *scores, const float *labels, size_t count,
				 size_t stride)
{
	size_t positives = 0;

	for (size_t i = 0; i < count; i++)
		if (!isfinite(scores[i * stride]))
			return AUROC_NONFINITE;
	for (size_t i = 0; i < count; i++)
		positives += labels[i * stride] > 0.5f;
	return positives == 0 || positives == count ? AUROC_ONE_LABEL : AUROC_DEFINED;
}

const char *auroc_reason(enum auroc_undefined why)
{
	switch (why) {
	case AUROC_DEFINED: return "defined";
	case AUROC_ONE_LABEL: return "no positives or no negatives";
	case AUROC_NONFINITE: return "non-finite scores";
	}
	return "?";
}

double auroc_one(const float *scores, const float *labels, size_t count, size_t stride)
{
	if (auroc_check(scores, labels, count, stride) != AUROC_DEFINED)
		return NAN;
	struct scored *s = malloc(count * sizeof(*s));
	double positives = 0, rank_sum = 0;

	if (!s)
		return NAN;
	for (size_t i = 0; i < count; i++) {
		s[i].score = scores[i * stride];
		s[i].label = labels[i * stride];
		positives += s[i].label > 0.5f;
	}
	qsort(s, count, sizeof(*s), by_score);
	for (size_t i = 0; i < count;) {
		size_t j = i;
		double pos_in_tie = 0;
		while (j < count && s[j].score == s[i].score)
			pos_in_tie += s[j++].label > 0.5f;
		rank_sum += pos_in_tie * ((double)(i + 1) + (double)j) / 2.0;  /* ranks i+1..j */
		i = j;
	}
	free(s);
	double negatives = (double)count - positives;
	return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives);
}

double auroc_all(const float *scores, const float *labels, size_t count, int classes,
		 double *out, enum auroc_undefined *why, int *defined)
{
	double sum = 0;

	*defined = 0;
	for (int c = 0; c < classes; c++) {
		if (why)
			why[c] = auroc_check(scores + c, labels + c, count, (size_t)classes);
		out[c] = auroc_one(scores + c, labels + c, count, (size_t)classes);
		if (!isnan(out[c])) {
			sum += out[c];
			(*defined)++;
		}
	}
	return *defined ? sum / *defined : NAN;
}

void auroc_print_table(FILE *f, const double *per_class, const enum auroc_undefined *why,
		       int classes)
{
	double sum = 0, paper_sum = 0;
	int defined = 0, nonfinite = 0;

	fprintf(f, "%-20s %8s %8s\n", "class", "AUROC", "CheXNet");
	for (int c = 0; c < classes && c < 14; c++) {
		int bad = why && why[c] == AUROC_NONFINITE;
		nonfinite += bad;
		if (isnan(per_class[c]))
			fprintf(f, "%-20s %8s %8.4f\n", data_class_names[c], bad ? "nan" : "n/a",
				auroc_chexnet_paper[c]);
		else
			fprintf(f, "%-20s %8.4f %8.4f\n", data_class_names[c], per_class[c],
				auroc_chexnet_paper[c]);
		if (!isnan(per_class[c])) {
			sum += per_class[c];
			paper_sum += auroc_chexnet_paper[c];
			defined++;
		}
	}
	if (defined)
		fprintf(f, "%-20s %8.4f %8.4f  (over %d of %d classes; n/a: no positives or no negatives)\n",
			"mean", sum / defined, paper_sum / defined, defined, classes);
	else
		fprintf(f, "%-20s %8s %8s  (no class has both positives and negatives)\n",
			"mean", "n/a", "n/a");
	if (nonfinite)
		fprintf(f, "(nan: %d classes have non-finite scores: the model's outputs are not finite)\n",
			nonfinite);
}
