/* eval/thresholds_file.c - thresholds.json beside a checkpoint's weights, and
 * the check that it belongs to them. What it does not do: choose
 * thresholds or decide which split may.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/classes.h"
#include "base/whole_file.h"
#include "eval/thresholds_file.h"

#define THRESHOLDS_FORMAT "chexnet-thresholds 1"

static int is_directory(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void thresholds_path(const char *checkpoint, char *path, size_t bytes)
{
	if (is_directory(checkpoint))
		snprintf(path, bytes, "%s/thresholds.json", checkpoint);
	else
		snprintf(path, bytes, "%s.thresholds.json", checkpoint);
}

/* CRC32C of the checkpoint's weights file. */
static int weights_crc(const char *checkpoint, uint32_t *crc, struct trainer_error *err)
{
	char path[4096];
	if (is_directory(checkpoint))
		snprintf(path, sizeof(path), "%s/model.safetensors", checkpoint);
	else
		snprintf(path, sizeof(path), "%s", checkpoint);
	FILE *f = fopen(path, "rb");
	if (!f)
		return trainer_error_set(err, "thresholds: '%s': %s", path, strerror(errno));
	static char buf[1 << 16];
	size_t got;
	*crc = 0;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		*crc = crc32c(*crc, buf, got);
	int bad = ferror(f);
	fclose(f);
	return bad ? trainer_error_set(err, "thresholds: '%s': read error", path) : 0;
}

static cJSON *to_json(const struct thresholds *t, uint32_t crc)
{
	char hex[16];
	cJSON *root = cJSON_CreateObject(), *values = cJSON_CreateObject();

	snprintf(hex, sizeof(hex), "%08x", crc);
	cJSON_AddStringToObject(root, "format", THRESHOLDS_FORMAT);
	cJSON_AddStringToObject(root, "model", t->model);
	cJSON_AddStringToObject(root, "model_crc32c", hex);
	cJSON_AddStringToObject(root, "split", t->split);
	cJSON_AddStringToObject(root, "rule", threshold_rule_name(t->rule.rule));
	if (t->rule.rule == THRESHOLD_YOUDEN)
		cJSON_AddNullToObject(root, "target");
	else
		cJSON_AddNumberToObject(root, "target", t->rule.target);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		if (isnan(t->value[c]))
			cJSON_AddNullToObject(values, data_class_names[c]);
		else
			cJSON_AddNumberToObject(values, data_class_names[c], t->value[c]);
	cJSON_AddItemToObject(root, "thresholds", values);
	return root;
}

int thresholds_save(const char *checkpoint, const struct thresholds *t,
		    struct trainer_error *err)
{
	char path[4096];
	uint32_t crc;

	if (weights_crc(checkpoint, &crc, err))
		return -1;
	thresholds_path(checkpoint, path, sizeof(path));
	cJSON *root = to_json(t, crc);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return trainer_error_set(err, "thresholds: '%s': out of memory", path);
	int rc = whole_file_put_line(path, text, 0644);
	free(text);
	return rc == 0 ? 0 : trainer_error_set(err, "thresholds: '%s': %s", path,
					       whole_file_why(errno));
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long size;

	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && size < (1 << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = calloc(1, (size_t)size + 1)) &&
	    fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		text = NULL;
	}
	if (f)
		fclose(f);
	return text;
}

static const char *string_of(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The 14 values, by class name; NULL or a reason. */
static const char *read_values(const cJSON *values, struct thresholds *t)
{
	static char why[160];
	if (!cJSON_IsObject(values) || cJSON_GetArraySize(values) != CHEXNET_CLASSES)
		return "\"thresholds\" must be an object of the 14 findings";
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(values, data_class_names[c]);
		if (cJSON_IsNull(v))
			t->value[c] = NAN;
		else if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1.0000001)
			t->value[c] = (float)v->valuedouble;  /* thresholds are float probabilities;
								 cJSON may print only 15 digits */
		else {
			snprintf(why, sizeof(why), "finding '%s': missing or not a probability",
				 data_class_names[c]);
			return why;
		}
	}
	return NULL;
}

static const char *read_rule(const cJSON *root, struct thresholds *t)
{
	const char *rule = string_of(root, "rule");
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(root, "target");
	if (!rule)
		return "no \"rule\"";
	for (int r = THRESHOLD_YOUDEN; r <= THRESHOLD_SPECIFICITY; r++)
		if (strcmp(rule, threshold_rule_name(r)) == 0)
			t->rule.rule = r;
	if (strcmp(rule, threshold_rule_name(t->rule.rule)))
		return "unknown \"rule\"";
	t->rule.target = cJSON_IsNumber(target) ? target->valuedouble : 0;
	return NULL;
}

/* Fields into t and the match with this checkpoint; NULL or a reason. */
static const char *parse(const cJSON *root, const char *model, uint32_t crc, struct thresholds *t,
			 char *why, size_t why_bytes)
{
	const char *format = string_of(root, "format"), *m = string_of(root, "model");
	const char *hex = string_of(root, "model_crc32c"), *split = string_of(root, "split");
	const char *bad;
	char want[16];

	if (!format || strcmp(format, THRESHOLDS_FORMAT))
		return "not a thresholds file (\"format\": \"" THRESHOLDS_FORMAT "\" missing)";
	if (!m || !hex || !split)
		return "\"model\", \"model_crc32c\" or \"split\" missing";
	if (strcmp(m, model)) {
		snprintf(why, why_bytes, "made for model '%s', this checkpoint is '%s'", m, model);
		return why;
	}
	snprintf(want, sizeof(want), "%08x", crc);
	if (strcmp(hex, want)) {
		snprintf(why, why_bytes, "made for other weights (model_crc32c %.8s, these weights "
			 "%s): choose again with chexnet eval --split val --choose-thresholds", hex, want);
		return why;
	}
	if ((bad = read_rule(root, t)) || (bad = read_values(cJSON_GetObjectItemCaseSensitive(root, "thresholds"), t)))
		return bad;
	snprintf(t->model, sizeof(t->model), "%s", m);
	snprintf(t->split, sizeof(t->split), "%s", split);
	return NULL;
}

int thresholds_load(const char *checkpoint, const char *model, struct thresholds *t,
		    struct trainer_error *err)
{
	char path[4096], why[256];
	uint32_t crc;

	thresholds_path(checkpoint, path, sizeof(path));
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return 1;
	char *text = read_text(path);
	if (!text)
		return trainer_error_set(err, "thresholds: '%s': cannot read (or over 1 MiB)", path);
	cJSON *root = cJSON_Parse(text);
	free(text);
	const char *bad = root ? NULL : "not valid JSON";
	memset(t, 0, sizeof(*t));
	if (!bad && weights_crc(checkpoint, &crc, err)) {
		cJSON_Delete(root);
		return -1;
	}
	if (!bad)
		bad = parse(root, model, crc, t, why, sizeof(why));
	cJSON_Delete(root);
	return bad ? trainer_error_set(err, "thresholds: '%s': %s", path, bad) : 0;
}
