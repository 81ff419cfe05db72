/* base/option_table.c - a command line read by a table of rows
 * (option_table.h): finding a row, storing a value by its type, the
 * defaults, the value as text, the help, and the walk over argv.
 * What it does not do: know any command's rows or run anything.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "base/option_table.h"

const struct setting *option_find(const struct option_table *t, const char *flag, int command)
{
	for (int i = 0; i < t->count; i++)
		if (t->rows[i].flag && strcmp(t->rows[i].flag, flag) == 0 &&
		    (!command || (t->rows[i].commands & command)))
			return &t->rows[i];
	return NULL;
}

static void *field(void *values, const struct setting *row)
{
	return (char *)values + row->offset;
}

const char *option_choice(const struct setting *row, int i, int *len)
{
	const char *c = row->choices;

	for (; c && *c && i > 0; i--)
		c += strcspn(c, "|") + (c[strcspn(c, "|")] == '|');
	if (!c || !*c || i < 0)
		return NULL;
	*len = (int)strcspn(c, "|");
	return c;
}

/* The index of text among row's choices, or -1. */
static int choice_index(const struct setting *row, const char *text)
{
	const char *c;
	int n;

	for (int i = 0; (c = option_choice(row, i, &n)); i++)
		if ((size_t)n == strlen(text) && strncmp(c, text, (size_t)n) == 0)
			return i;
	return -1;
}

/* "a, b or c" of row's choices. */
static void choices_text(const struct setting *row, char *out, size_t len)
{
	const char *c;
	size_t used = 0;
	int n, m;

	out[0] = '\0';
	for (int i = 0; (c = option_choice(row, i, &n)) && used < len; i++) {
		const char *sep = !i ? "" : option_choice(row, i + 1, &m) ? ", " : " or ";
		used += (size_t)snprintf(out + used, len - used, "%s%.*s", sep, n, c);
	}
}

static int set_choice(void *values, const struct setting *row, const char *text,
		      struct trainer_error *err)
{
	char expected[128];
	int i = choice_index(row, text);

	if (i < 0) {
		choices_text(row, expected, sizeof(expected));
		return trainer_error_set(err, "%s: '%s': expected %s", row->flag, text, expected);
	}
	if (row->type == SETTING_TEXT)
		*(const char **)field(values, row) = text;
	else
		*(int *)field(values, row) = i;
	return 0;
}

/* A number of row's type from text into its field. */
static int set_number(void *values, const struct setting *row, const char *text,
		      struct trainer_error *err)
{
	char e[512];
	long l;
	double d;
	int rc;

	if (row->type == SETTING_LONG) {
		rc = data_arg_long(row->flag, text, (long)row->lo, (long)row->hi, &l, e, sizeof(e));
		if (rc == 0)
			*(long *)field(values, row) = l;
	} else if (row->type == SETTING_DOUBLE) {
		rc = data_arg_double(row->flag, text, row->lo, row->hi, &d, e, sizeof(e));
		if (rc == 0)
			*(double *)field(values, row) = d;
	} else
		rc = data_arg_u64(row->flag, text, (uint64_t *)field(values, row), e, sizeof(e));
	/* data_arg_* says "chexnet: ..." */
	return rc ? trainer_error_set(err, "%s", strncmp(e, "chexnet: ", 9) ? e : e + 9) : 0;
}

int option_set(void *values, const struct setting *row, const char *text, struct trainer_error *err)
{
	if (!row->flag || row->type == SETTING_HELP)
		return trainer_error_set(err, "settings: '%s': not a setting a command gives",
					 row->flag ? row->flag : row->key);
	if (row->type == SETTING_SWITCH) {
		if (text && strcmp(text, "1") && strcmp(text, "0"))
			return trainer_error_set(err, "%s: '%s': a switch is 0 or 1", row->flag, text);
		if (!text || strcmp(text, "1") == 0)
			*(int *)field(values, row) = row->on;
		return 0;
	}
	if (!text)
		return trainer_error_set(err, "%s: missing value", row->flag);
	if (row->type == SETTING_CHOICE || (row->type == SETTING_TEXT && row->choices))
		return set_choice(values, row, text, err);
	if (row->type == SETTING_TEXT) {
		*(const char **)field(values, row) = text;
		return 0;
	}
	return set_number(values, row, text, err);
}

int option_set_long(void *values, const struct setting *row, long v, struct trainer_error *err)
{
	if (!row->flag || row->type != SETTING_LONG)
		return trainer_error_set(err, "settings: '%s': not a whole-number setting",
					 row->flag ? row->flag : row->key);
	if (v < (long)row->lo || v > (long)row->hi)
		return trainer_error_set(err, "%s '%ld': expected an integer in %ld..%ld", row->flag, v,
					 (long)row->lo, (long)row->hi);
	*(long *)field(values, row) = v;
	return 0;
}

static int set_any(const struct option_table *t, void *values, const struct setting *row,
		   const char *text, int given, struct trainer_error *err)
{
	return t->set ? t->set(values, row, text, given, err) : option_set(values, row, text, err);
}

int option_defaults(const struct option_table *t, int command, void *values,
		    struct trainer_error *err)
{
	for (int i = 0; i < t->count; i++)
		if (t->rows[i].fallback && (!command || (t->rows[i].commands & command)) &&
		    set_any(t, values, &t->rows[i], t->rows[i].fallback, 0, err))
			return -1;
	return 0;
}

void option_number(double v, char *out, size_t len)
{
	for (int digits = 6; digits <= 17; digits++) {
		snprintf(out, len, "%.*g", digits, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

void option_format(const void *values, const struct setting *row, char *out, size_t len)
{
	const void *v = (const char *)values + row->offset;

	out[0] = '\0';
	if (row->type == SETTING_LONG)
		snprintf(out, len, "%ld", *(const long *)v);
	else if (row->type == SETTING_DOUBLE)
		option_number(*(const double *)v, out, len);
	else if (row->type == SETTING_U64)
		snprintf(out, len, "%llu", (unsigned long long)*(const uint64_t *)v);
	else if (row->type == SETTING_SWITCH)
		snprintf(out, len, "%d", *(const int *)v == row->on);
	else if (row->type == SETTING_TEXT)
		snprintf(out, len, "%s", *(const char *const *)v ? *(const char *const *)v : "");
	else if (row->type == SETTING_CHOICE) {
		int n;
		const char *c = option_choice(row, *(const int *)v, &n);
		snprintf(out, len, "%.*s", c ? n : 0, c ? c : "");
	}
}

int option_env_defaults(const struct option_table *t, int command, void *values,
			struct trainer_error *err)
{
	for (int i = 0; i < t->count; i++) {
		const struct setting *row = &t->rows[i];
		const char *text = row->env ? getenv(row->env) : NULL;
		struct trainer_error why = { "" };
		if (!text || (command && !(row->commands & command)) ||
		    !set_any(t, values, row, text, 0, &why))
			continue;
		char head[TRAINER_ERROR_LEN];   /* option_set's "--flag: 'text': " */
		int n = snprintf(head, sizeof(head), "%s: '%s': ", row->flag, text);
		const char *reason = n > 0 && strncmp(why.msg, head, (size_t)n) == 0 ? why.msg + n : why.msg;
		return trainer_error_set(err, "%s: '%s': %s (the site default of %s)", row->env, text,
					 reason, row->flag);
	}
	return 0;
}

void option_row_help(const struct setting *row, char *out, size_t len)
{
	size_t used = 0;
	const char *c;
	int n;

	out[0] = '\0';
	for (int i = 0; (c = option_choice(row, i, &n)) && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%.*s", i ? " | " : "", n, c);
	if (used < len)
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ": " : "", row->help);
	if (row->fallback && used < len)
		used += (size_t)snprintf(out + used, len - used, " (default %s)", row->fallback);
	if (row->env && used < len)
		snprintf(out + used, len - used, " (site default: $%s)", row->env);
}

void option_print_help(FILE *f, const struct option_table *t, const char *name, int command,
		       const char *operands)
{
	char help[512];

	fprintf(f, "usage: chexnet %s [options]%s\n", name, operands ? operands : "");
	for (int i = 0; i < t->count; i++)
		if (t->rows[i].flag && (t->rows[i].commands & command)) {
			option_row_help(&t->rows[i], help, sizeof(help));
			fprintf(f, "  %-20s %s\n", t->rows[i].flag, help);
		}
}

/* argv[*i] ("--flag" or "--flag=value") applied; *i moves past its value.
 * 0, 1 (--help, printed) or -1 (printed). */
static int one_flag(const struct option_table *t, int command, const char *operands_help,
		    int argc, char **argv, int *i, void *values)
{
	char name[64];
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), arg);
	const struct setting *f = n < sizeof(name) ? option_find(t, name, command) : NULL;
	struct trainer_error err = { "" };
	int takes_value = f && f->type != SETTING_SWITCH && f->type != SETTING_HELP;

	if (!f)
		return fprintf(stderr, "chexnet: %s: '%s': unknown option (chexnet %s --help)\n",
			       argv[0], name, argv[0]), -1;
	if (f->type == SETTING_HELP) {
		option_print_help(stdout, t, argv[0], command, operands_help);
		return 1;
	}
	if (eq && !takes_value)
		return fprintf(stderr, "chexnet: %s: '%s': takes no value\n", f->flag, arg), -1;
	if (takes_value && !eq && *i + 1 >= argc)
		return fprintf(stderr, "chexnet: %s: missing value\n", f->flag), -1;
	if (set_any(t, values, f, !takes_value ? NULL : eq ? eq + 1 : argv[++*i], 1, &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	return 0;
}

int option_parse(const struct option_table *t, int command, const char *operands_help, int argc,
		 char **argv, void *values, char **operands, int *operand_count)
{
	if (operand_count)
		*operand_count = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || argv[i][1] != '-') {
			if (!operands)
				return fprintf(stderr, "chexnet: %s: '%s': unexpected argument\n", argv[0],
					       argv[i]), -1;
			operands[(*operand_count)++] = argv[i];
			continue;
		}
		int rc = one_flag(t, command, operands_help, argc, argv, &i, values);
		if (rc)
			return rc;
	}
	return 0;
}
