/* train/run_settings.c - a run's recorded settings (run_settings.h):
 * which keys exist, their kind and flag (the rows of train/settings.c
 * with a run.json key), setting and comparing values.
 * What it does not do: read or write files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/run_settings.h"
#include "train/settings.h"

int run_setting_known(const char *key, enum run_setting_kind *kind, const char **flag,
		      int *numeric)
{
	const struct setting *row = settings_of_key(key);

	if (!row)
		return 0;
	if (kind)
		*kind = settings_changes_meaning(row) ? RUN_SETTING_MEANING : RUN_SETTING_FREE;
	if (flag)
		*flag = settings_set_by(row);
	if (numeric)
		*numeric = settings_numeric(row);
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

	int numeric;

	if (!run_setting_known(key, NULL, NULL, &numeric))
		return trainer_error_set(err, "settings: '%s': unknown setting", key);
	if (strlen(value) >= RUN_SETTING_VALUE)
		return trainer_error_set(err, "settings: '%s': value longer than %d bytes", key,
					 RUN_SETTING_VALUE - 1);
	if (numeric && !is_number(value))
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

int run_settings_set_double(struct run_settings *s, const char *key, double v,
			    struct trainer_error *err)
{
	char text[40];

	option_number(v, text, sizeof(text));
	return run_settings_set(s, key, text, err);
}

const char *run_settings_get(const struct run_settings *s, const char *key)
{
	const struct run_setting *it = find(s, key);

	return it ? it->value : NULL;
}

int run_settings_join(const struct run_settings *first, const struct run_settings *second,
		      struct run_settings *out, struct trainer_error *err)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < settings_count; i++) {
		const char *key = settings_table[i].key, *v = NULL;
		if (!key || !run_setting_known(key, NULL, NULL, NULL))
			continue;
		v = run_settings_get(first, key);
		if (!v && second)
			v = run_settings_get(second, key);
		if (v && run_settings_set(out, key, v, err))
			return -1;
	}
	return 0;
}

static int add_change(const char *key, const char *a, const char *b, struct run_change *out,
		      int n, int max)
{
	enum run_setting_kind kind = RUN_SETTING_MEANING;
	const char *flag = "";

	if (a && b && strcmp(a, b) == 0)
		return n;
	run_setting_known(key, &kind, &flag, NULL);
	if (n < max)
		out[n] = (struct run_change) {
			.key = key, .old_value = a ? a : "(none)", .new_value = b ? b : "(none)",
			.flag = flag, .kind = kind,
		};
	return n + 1;
}

int run_settings_changes(const struct run_settings *old, const struct run_settings *now,
			 struct run_change *out, int max)
{
	int n = 0;

	for (int i = 0; i < settings_count; i++) {
		const char *key = settings_table[i].key;
		if (!key || settings_table[i].resume == RESUME_SESSION)
			continue;   /* each session's own: recorded, never compared */
		const char *a = run_settings_get(old, key), *b = run_settings_get(now, key);
		if (a || b)
			n = add_change(key, a, b, out, n, max);
	}
	return n < max ? n : max;
}
