/* predict_output.c - predict's per-image text or JSON. What it does not
 * do: decide thresholds (they come from thresholds_file.h).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "data/sets/labels.h"
#include "cmd/predict_output.h"

void predict_print_header(FILE *f, int json)
{
	if (json)
		return;
	fprintf(f, "image");
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		fprintf(f, " %s", data_class_names[c]);
	fprintf(f, "\n");
}

static void print_json(FILE *f, const char *path, const float *probs, const struct thresholds *t)
{
	cJSON *root = cJSON_CreateObject(), *list = cJSON_CreateArray();
	cJSON_AddStringToObject(root, "image", path);
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		cJSON *o = cJSON_CreateObject();
		int known = t && !isnan(t->value[c]);
		cJSON_AddStringToObject(o, "finding", data_class_names[c]);
		cJSON_AddNumberToObject(o, "probability", probs[c]);
		if (known) {
			cJSON_AddNumberToObject(o, "threshold", t->value[c]);
			cJSON_AddBoolToObject(o, "positive", probs[c] >= t->value[c]);
		} else {
			cJSON_AddNullToObject(o, "threshold");
			cJSON_AddNullToObject(o, "positive");
		}
		cJSON_AddItemToArray(list, o);
	}
	cJSON_AddItemToObject(root, "findings", list);
	char *text = cJSON_PrintUnformatted(root);
	if (text)
		fprintf(f, "%s\n", text);
	free(text);
	cJSON_Delete(root);
}

void predict_print(FILE *f, const char *path, const float *probs, const struct thresholds *t,
		   int json)
{
	if (json) {
		print_json(f, path, probs, t);
		return;
	}
	fprintf(f, "%s", path);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		fprintf(f, " %.6f", probs[c]);
	fprintf(f, "\n");
	for (int c = 0; t && c < CHEXNET_CLASSES; c++) {
		if (isnan(t->value[c]))
			fprintf(f, "  %-20s %.6f  n/a (no threshold)\n", data_class_names[c], probs[c]);
		else
			fprintf(f, "  %-20s %.6f  %s (threshold %.6f)\n", data_class_names[c], probs[c],
				probs[c] >= t->value[c] ? "positive" : "negative", t->value[c]);
	}
}
