/* eval_report.c - the evaluation's numbers from the gathered outputs, and
 * their table and JSON. What it does not do: choose thresholds, plot.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "data/sets/labels.h"
#include "eval/curves.h"
#include "cmd/eval_report.h"
#include "model/loss.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static size_t count_patients(const uint32_t *patient, size_t n)
{
	uint32_t *ids = malloc(n * sizeof(uint32_t) + 1);
	size_t distinct = 0;

	if (!ids)
		return 0;
	memcpy(ids, patient, n * sizeof(uint32_t));
	qsort(ids, n, sizeof(uint32_t), cmp_u32);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || ids[i] != ids[i - 1];
	free(ids);
	return distinct;
}

static void per_class(struct eval_report *r, const float *p, const float *y, size_t n)
{
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		r->auprc[c] = eval_auprc(p + c, y + c, n, CHEXNET_CLASSES);
		r->ece[c] = n >= EVAL_ECE_BINS ? eval_ece(p + c, y + c, n, CHEXNET_CLASSES,
							  EVAL_ECE_BINS, NULL) : NAN;
		if (r->have_thresholds)
			r->at[c] = eval_operating_point(p + c, y + c, n, CHEXNET_CLASSES,
							r->thresholds.value[c]);
	}
	r->ece_all = n * CHEXNET_CLASSES >= EVAL_ECE_BINS
		? eval_ece(p, y, n * CHEXNET_CLASSES, 1, EVAL_ECE_BINS, r->bins) : NAN;
}

int eval_report_compute(const struct evaluation *ev, int bootstrap, uint64_t seed,
			const struct thresholds *thresholds, struct eval_report *r,
			struct trainer_error *err)
{
	size_t n = ev->images, values = n * CHEXNET_CLASSES;

	memset(r, 0, sizeof(*r));
	if (!ev->logits || !ev->labels || !ev->patient)
		return trainer_error_set(err, "evaluation report: the outputs were not kept");
	r->probs = malloc(values * sizeof(float));
	if (!r->probs)
		return trainer_error_set(err, "evaluation report: out of memory");
	for (size_t i = 0; i < values; i++)
		r->probs[i] = loss_sigmoid(ev->logits[i]);
	r->labels = ev->labels;
	r->images = n;
	r->patients = count_patients(ev->patient, n);
	r->bootstrap = bootstrap;
	r->seed = seed;
	r->mean_auroc = auroc_all(ev->logits, ev->labels, n, CHEXNET_CLASSES, r->auroc, NULL,
				  &r->defined);
	if (thresholds) {
		r->have_thresholds = 1;
		r->thresholds = *thresholds;
	}
	per_class(r, r->probs, ev->labels, n);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		r->ci[c] = (struct eval_interval){ NAN, NAN, 0 };
	r->mean_ci = r->ci[0];
	if (bootstrap > 0) {
		struct bootstrap_config cfg = { bootstrap, seed, 0.95 };
		if (eval_bootstrap_auroc(ev->logits, ev->labels, ev->patient, n, CHEXNET_CLASSES,
					 &cfg, r->ci, &r->mean_ci, err))
			return -1;
	}
	return 0;
}

void eval_report_free(struct eval_report *r)
{
	free(r->probs);
	memset(r, 0, sizeof(*r));
}

static void print_value(FILE *f, int width, double v)
{
	if (isnan(v))
		fprintf(f, " %*s", width, "n/a");
	else
		fprintf(f, " %*.4f", width, v);
}

static void print_interval(FILE *f, struct eval_interval iv)
{
	if (isnan(iv.lo))
		fprintf(f, " %15s", "n/a");
	else
		fprintf(f, " [%.4f,%.4f]", iv.lo, iv.hi);
}

void eval_report_print(FILE *f, const struct eval_report *r)
{
	fprintf(f, "%-20s %7s %15s %7s %7s %7s", "finding", "AUROC", "95% CI", "CheXNet", "AUPRC",
		"ECE");
	if (r->have_thresholds)
		fprintf(f, " %9s %7s %7s %7s %7s %7s", "threshold", "sens", "spec", "PPV", "NPV", "F1");
	fprintf(f, "\n");
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		fprintf(f, "%-20s", data_class_names[c]);
		print_value(f, 7, r->auroc[c]);
		print_interval(f, r->ci[c]);
		print_value(f, 7, auroc_chexnet_paper[c]);
		print_value(f, 7, r->auprc[c]);
		print_value(f, 7, r->ece[c]);
		if (r->have_thresholds) {
			const struct operating_point *o = &r->at[c];
			print_value(f, 9, r->thresholds.value[c]);
			print_value(f, 7, o->sensitivity);
			print_value(f, 7, o->specificity);
			print_value(f, 7, o->ppv);
			print_value(f, 7, o->npv);
			print_value(f, 7, o->f1);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "%-20s", "mean");
	print_value(f, 7, r->mean_auroc);
	print_interval(f, r->mean_ci);
	fprintf(f, "  ECE over all findings %.4f\n", r->ece_all);
	fprintf(f, "(%zu images of %zu patients; ", r->images, r->patients);
	if (r->bootstrap)
		fprintf(f, "95%% CI: percentile bootstrap over patients, %d resamples, seed %llu; ",
			r->bootstrap, (unsigned long long)r->seed);
	else
		fprintf(f, "no intervals (--bootstrap 0); ");
	fprintf(f, "ECE: %d equal-mass bins", EVAL_ECE_BINS);
	if (r->have_thresholds)
		fprintf(f, "; thresholds: %s on %s", threshold_rule_name(r->thresholds.rule.rule),
			r->thresholds.split);
	fprintf(f, ")\n");
}

static void add_number(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *interval_json(struct eval_interval iv)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, isfinite(iv.lo) ? cJSON_CreateNumber(iv.lo) : cJSON_CreateNull());
	cJSON_AddItemToArray(a, isfinite(iv.hi) ? cJSON_CreateNumber(iv.hi) : cJSON_CreateNull());
	return a;
}

static cJSON *class_json(const struct eval_report *r, int c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "finding", data_class_names[c]);
	add_number(o, "auroc", r->auroc[c]);
	cJSON_AddItemToObject(o, "auroc_ci95", interval_json(r->ci[c]));
	add_number(o, "chexnet_auroc", auroc_chexnet_paper[c]);
	add_number(o, "auprc", r->auprc[c]);
	add_number(o, "ece", r->ece[c]);
	if (r->have_thresholds) {
		const struct operating_point *p = &r->at[c];
		add_number(o, "threshold", r->thresholds.value[c]);
		add_number(o, "sensitivity", p->sensitivity);
		add_number(o, "specificity", p->specificity);
		add_number(o, "ppv", p->ppv);
		add_number(o, "npv", p->npv);
		add_number(o, "f1", p->f1);
		cJSON_AddNumberToObject(o, "tp", (double)p->tp);
		cJSON_AddNumberToObject(o, "fp", (double)p->fp);
		cJSON_AddNumberToObject(o, "tn", (double)p->tn);
		cJSON_AddNumberToObject(o, "fn", (double)p->fn);
	}
	return o;
}

static cJSON *bins_json(const struct eval_report *r)
{
	cJSON *a = cJSON_CreateArray();
	for (int b = 0; b < EVAL_ECE_BINS && isfinite(r->ece_all); b++) {
		cJSON *o = cJSON_CreateObject();
		add_number(o, "mean_probability", r->bins[b].mean_p);
		add_number(o, "observed_rate", r->bins[b].mean_y);
		cJSON_AddNumberToObject(o, "count", (double)r->bins[b].count);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

void eval_report_json(FILE *f, const struct eval_report *r, const char *checkpoint,
		      const char *split, double loss)
{
	cJSON *root = cJSON_CreateObject(), *classes = cJSON_CreateArray();

	cJSON_AddStringToObject(root, "checkpoint", checkpoint);
	cJSON_AddStringToObject(root, "split", split);
	cJSON_AddNumberToObject(root, "images", (double)r->images);
	cJSON_AddNumberToObject(root, "patients", (double)r->patients);
	add_number(root, "loss", loss);
	add_number(root, "mean_auroc", r->mean_auroc);
	cJSON_AddItemToObject(root, "mean_auroc_ci95", interval_json(r->mean_ci));
	cJSON_AddNumberToObject(root, "classes_with_auroc", r->defined);
	cJSON_AddNumberToObject(root, "bootstrap_resamples", r->bootstrap);
	cJSON_AddNumberToObject(root, "bootstrap_seed", (double)r->seed);
	cJSON_AddStringToObject(root, "interval", "percentile bootstrap over patients");
	add_number(root, "ece", r->ece_all);
	cJSON_AddNumberToObject(root, "ece_bins", EVAL_ECE_BINS);
	cJSON_AddItemToObject(root, "reliability", bins_json(r));
	if (r->have_thresholds) {
		cJSON_AddStringToObject(root, "threshold_rule", threshold_rule_name(r->thresholds.rule.rule));
		cJSON_AddStringToObject(root, "thresholds_chosen_on", r->thresholds.split);
	} else {
		cJSON_AddNullToObject(root, "threshold_rule");
	}
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		cJSON_AddItemToArray(classes, class_json(r, c));
	cJSON_AddItemToObject(root, "classes", classes);
	char *text = cJSON_PrintUnformatted(root);
	if (text)
		fprintf(f, "%s\n", text);
	free(text);
	cJSON_Delete(root);
}
