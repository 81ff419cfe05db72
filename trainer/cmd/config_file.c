/* cmd/config_file.c - a recipe's keys as settings, and the effective
 * settings as a recipe (config_file.h).
 * What it does not do: read the file (cmd/recipe_read.c) or check the
 * derived values (loop/run_dir.c, once the run has derived its own).
 */
#include <string.h>
#include <strings.h>

#include "cmd/config_file.h"
#include "cmd/recipe_read.h"
#include "train/run_settings.h"

/* One --config a process at a time: the settings point into it. */
static struct yaml_map map;
static struct run_settings derived;
static char sha256[65];

static int recipe_key(const struct setting *row)
{
	return row->flag && row->key && (row->commands & SETTING_TRAIN);
}

/* The command line gave row, or a row storing the same value (--quiet
 * and --json; --data and --synthetic). */
static int given_here(const unsigned char *cli, const struct setting *row)
{
	const struct setting *data = SETTING_OF(train.data.dir), *synthetic = SETTING_OF(synthetic);

	for (int i = 0; i < settings_count; i++) {
		const struct setting *r = &settings_table[i];
		if (!cli[i] || !r->flag)
			continue;
		if (r->offset == row->offset || (row == data && r == synthetic))
			return 1;
	}
	return 0;
}

static int is_word(const struct yaml_entry *e, const char *word)
{
	return e->plain && strcmp(e->value, word) == 0;
}

/* Why e's value is not of row's type, or NULL. record: a run.json's
 * values, typed by its own reader. */
static const char *wrong_type(const struct setting *row, const struct yaml_entry *e, int record)
{
	if (e->plain && (!e->value[0] || strcmp(e->value, "~") == 0 || strcasecmp(e->value, "null") == 0))
		return "no value";
	switch (row->type) {
	case SETTING_SWITCH:
		if (is_word(e, "true") || is_word(e, "false") ||
		    (record && (is_word(e, "0") || is_word(e, "1"))))
			return NULL;
		return "a switch: true or false";
	case SETTING_LONG:
	case SETTING_DOUBLE:
	case SETTING_U64:
		return e->plain || record ? NULL : "a number in quotes: write it without them";
	default:
		return !row->choices && (is_word(e, "true") || is_word(e, "false"))
		       ? "true or false: this key takes text" : NULL;
	}
}

/* Where in the file: "line N: " (a run.json has no lines). */
static const char *at(const struct yaml_entry *e, char *buf, size_t len)
{
	if (e->line)
		snprintf(buf, len, "line %d: ", e->line);
	else
		buf[0] = '\0';
	return buf;
}

/* A key no row of train's recipe has: a flag of this command line only,
 * or nothing at all. */
static int not_a_key(const char *path, const struct yaml_entry *e, const char *where)
{
	char flag[YAML_MAP_KEY + 2] = "--";

	for (size_t i = 0; e->key[i] && i + 3 < sizeof(flag); i++)
		flag[i + 2] = e->key[i] == '_' ? '-' : e->key[i];
	const struct setting *row = option_find(&settings_options, flag, SETTING_TRAIN);
	if (row && row->key)   /* batch-size for batch_size */
		fprintf(stderr, "chexnet: --config: '%s': %s'%s': not a key: %s's key is '%s'\n",
			path, where, e->key, row->flag, row->key);
	else if (row && row->type != SETTING_HELP)
		fprintf(stderr, "chexnet: --config: '%s': %s'%s': %s acts on this command line "
			"only: give it there, not in a recipe\n", path, where, e->key, row->flag);
	else
		fprintf(stderr, "chexnet: --config: '%s': %s'%s': not a setting of chexnet train "
			"(chexnet train --print-config lists them)\n", path, where, e->key);
	return 2;
}

static int set_value(struct settings *o, const struct setting *row, const struct yaml_entry *e,
		     struct trainer_error *err)
{
	if (row->type == SETTING_SWITCH) {
		settings_set_switch(o, row, is_word(e, "true") || is_word(e, "1"), 1);
		return 0;
	}
	if (row == SETTING_OF(train.data.dir) && strcmp(e->value, "synthetic") == 0) {
		settings_set_switch(o, SETTING_OF(synthetic), 1, 1);
		return 0;
	}
	return settings_set(o, row, e->value, 1, err);
}

static int apply_one(struct settings *o, const unsigned char *cli, const struct yaml_entry *e,
		     int record)
{
	const char *path = o->train.config;
	const struct setting *row = settings_of_key(e->key);
	struct trainer_error err = { "" };
	char where[32];
	const char *why;

	at(e, where, sizeof(where));
	if (row && !row->flag) {   /* a derived value: checked by the run */
		if (run_settings_set(&derived, e->key, e->value, &err) == 0)
			return 0;
		fprintf(stderr, "chexnet: --config: '%s': %s%s\n", path, where, err.msg);
		return 2;
	}
	if (!row || !recipe_key(row))
		return not_a_key(path, e, where);
	if ((why = wrong_type(row, e, record))) {
		fprintf(stderr, "chexnet: --config: '%s': %s'%s': '%s': %s\n", path, where, e->key,
			e->value, why);
		return 2;
	}
	if (given_here(cli, row) || (record && settings_recorded_unset(row, e->value)))
		return 0;
	if (set_value(o, row, e, &err) == 0)
		return 0;
	fprintf(stderr, "chexnet: --config: '%s': %s'%s': %s\n", path, where, e->key, err.msg);
	return 2;
}

int config_file_apply(struct settings *o)
{
	unsigned char cli[SETTINGS_MAX];
	struct trainer_error err = { "" };
	int record = 0, rc = 0;

	memcpy(cli, o->given, sizeof(cli));
	memset(&derived, 0, sizeof(derived));
	if (recipe_read(o->train.config, &map, &record, sha256, &err)) {
		fprintf(stderr, "chexnet: --config: %s\n", err.msg);
		return 2;
	}
	for (int i = 0; rc == 0 && i < map.count; i++)
		rc = apply_one(o, cli, &map.entries[i], record);
	o->train.config_sha256 = sha256;
	o->train.config_derived = derived.count ? &derived : NULL;
	return rc;
}

/* text as a YAML double-quoted scalar. */
static void print_quoted(FILE *f, const char *text)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void print_row(FILE *f, const struct settings *o, const struct setting *row)
{
	char v[RUN_SETTING_VALUE];
	const char *text = row->type == SETTING_TEXT
			   ? *(const char *const *)((const char *)o + row->offset) : NULL;

	option_format(o, row, v, sizeof(v));
	if (row == SETTING_OF(train.data.dir) && o->synthetic) {
		fprintf(f, "%s: synthetic\n", row->key);
		return;
	}
	if (row->type == SETTING_TEXT && row->choices && text)
		fprintf(f, "%s: %s\n", row->key, text);
	else if (row->type == SETTING_TEXT) {
		if (!text)
			return;   /* not set: no --init, a run not named yet */
		fprintf(f, "%s: ", row->key);
		print_quoted(f, text);
		fputc('\n', f);
	} else if (row->type == SETTING_SWITCH)
		fprintf(f, "%s: %s\n", row->key, strcmp(v, "1") == 0 ? "true" : "false");
	else if (row->fallback || row->type == SETTING_CHOICE || strcmp(v, "0"))
		fprintf(f, "%s: %s\n", row->key, v);   /* a zero without a default: unset */
}

void config_file_print(FILE *f, const struct settings *o)
{
	fprintf(f, "# chexnet train's effective settings (--print-config); "
		"chexnet train --config FILE reads them back\n");
	for (int i = 0; i < settings_count; i++)
		if (recipe_key(&settings_table[i]))
			print_row(f, o, &settings_table[i]);
}
