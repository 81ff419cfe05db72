/* train/run_settings.c - the table of a run's settings (run_settings.h):
 * which keys exist, their kind and flag, setting and comparing values.
 * What it does not do: read or write files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/run_settings.h"

#define M RUN_SETTING_MEANING
#define F RUN_SETTING_FREE

static const struct {
	const char *key;
	enum run_setting_kind kind;
	const char *flag;
	int numeric;
} defs[] = {
	{ "model", M, "--model", 0 },
	{ "backend", F, "--backend", 0 },
	{ "backend_detail", F, "--backend", 0 },
	{ "runtime_backend", F, "HVD_BACKEND", 0 },
	{ "precision", M, "--precision", 0 },
	{ "size", M, "--size", 1 },
	{ "stored_size", F, "--data", 1 },
	{ "pixels", F, "--data", 0 },
	{ "aspect", F, "--data", 0 },
	{ "crop", F, "--size", 0 },
	{ "normalise", F, "the build", 0 },
	{ "batch", F, "--batch", 1 },
	{ "ranks", F, "the rank count", 1 },
	{ "accumulate", F, "--accumulate", 1 },
	{ "global_batch", M, "--batch, --accumulate, the rank count", 1 },
	{ "optimizer", M, "--optimizer", 0 },
	{ "momentum", M, "--momentum", 1 },
	{ "weight_decay", M, "--weight-decay", 1 },
	{ "lr", F, "--lr", 1 },
	{ "lr_scale", F, "--lr-scale", 0 },
	{ "lr_effective", M, "--lr, --lr-scale, the rank count", 1 },
	{ "warmup_epochs", M, "--warmup-epochs", 1 },
	{ "patience", F, "--patience", 1 },
	{ "loss", M, "--loss", 0 },
	{ "seed", M, "--seed", 0 },
	{ "data", F, "--data, --synthetic", 0 },
	{ "data_fingerprint", M, "--data, --synthetic-images", 0 },
	{ "init", F, "--init", 0 },
	{ "memory_efficient", F, "--memory-efficient", 1 },
	{ "epochs", F, "--epochs", 1 },
	{ "steps", F, "--steps", 1 },
	{ "save_every", F, "--save-every", 1 },
	{ "threads", F, "--threads", 1 },
	{ "loader_threads", F, "--loader-threads", 1 },
	{ "progress_every", F, "--progress-every", 1 },
};

#undef M
#undef F

static int def_index(const char *key)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (strcmp(defs[i].key, key) == 0)
			return (int)i;
	return -1;
}

int run_setting_known(const char *key, enum run_setting_kind *kind, const char **flag,
		      int *numeric)
{
	int i = def_index(key);

	if (i < 0)
		return 0;
	if (kind)
		*kind = defs[i].kind;
	if (flag)
		*flag = defs[i].flag;
	if (numeric)
		*numeric = defs[i].numeric;
	return 1;
}

static struct run_setting *find(const struct run_settings *s, const char *key)
{
	for (int i = 0; i < s->count; i++)
		if (strcmp(s->items[i].key, key) == 0)
			return (struct run_setting *)&s->items[i];
	return NULL;
}

/* A whole finite decimal number. */
static int is_number(const char *v)
{
	char *end;
	double d = strtod(v, &end);

	return (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && *end == '\0' && isfinite(d);
}

int run_settings_set(struct run_settings *s, const char *key, const char *value,
		     struct trainer_error *err)
{
	struct run_setting *it = find(s, key);

	if (def_index(key) < 0)
		return trainer_error_set(err, "settings: '%s': unknown setting", key);
	if (strlen(value) >= RUN_SETTING_VALUE)
		return trainer_error_set(err, "settings: '%s': value longer than %d bytes", key,
					 RUN_SETTING_VALUE - 1);
	if (defs[def_index(key)].numeric && !is_number(value))
		return trainer_error_set(err, "settings: '%s': '%s': not a number", key, value);
	if (!it && s->count >= RUN_SETTINGS_MAX)
		return trainer_error_set(err, "settings: '%s': more than %d settings", key,
					 RUN_SETTINGS_MAX);
	if (!it) {
		it = &s->items[s->count++];
		snprintf(it->key, sizeof(it->key), "%s", key);
	}
	snprintf(it->value, sizeof(it->value), "%s", value);
	return 0;
}

int run_settings_set_long(struct run_settings *s, const char *key, long v,
			  struct trainer_error *err)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld", v);
	return run_settings_set(s, key, text, err);
}

void run_settings_number(double v, char *out, size_t len)
{
	for (int digits = 6; digits <= 17; digits++) {
		snprintf(out, len, "%.*g", digits, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

int run_settings_set_double(struct run_settings *s, const char *key, double v,
			    struct trainer_error *err)
{
	char text[40];

	run_settings_number(v, text, sizeof(text));
	return run_settings_set(s, key, text, err);
}

const char *run_settings_get(const struct run_settings *s, const char *key)
{
	const struct run_setting *it = find(s, key);

	return it ? it->value : NULL;
}

static int add_change(const char *key, const char *a, const char *b, struct run_change *out,
		      int n, int max)
{
	int i = def_index(key);

	if (a && b && strcmp(a, b) == 0)
		return n;
	if (n < max)
		out[n] = (struct run_change) {
			.key = key, .old_value = a ? a : "(none)", .new_value = b ? b : "(none)",
			.flag = i >= 0 ? defs[i].flag : "", .kind = i >= 0 ? defs[i].kind
									 : RUN_SETTING_MEANING,
		};
	return n + 1;
}

int run_settings_changes(const struct run_settings *old, const struct run_settings *now,
			 struct run_change *out, int max)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const char *a = run_settings_get(old, defs[i].key);
		const char *b = run_settings_get(now, defs[i].key);
		if (a || b)
			n = add_change(defs[i].key, a, b, out, n, max);
	}
	return n < max ? n : max;
}
