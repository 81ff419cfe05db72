/* test_settings.c - the settings table (trainer/train/settings.h) reaches
 * every place a setting appears, row by row, so that a row added there is
 * checked here without a new test: its default is one its own type
 * accepts; the parser takes it as `--opt value` and `--opt=value` for each
 * of its commands and refuses it for the others; `chexnet CMD --help`
 * lists it; man/chexnet.1's OPTIONS section is the table's; run.json
 * records each recorded row with the kind its resume policy says, and a
 * record read back gives --resume every row it takes.
 * What it does not test: training with the values (trainer-record,
 * trainer-cli and the loops' groups do).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/config.h"
#include "cmd/resume_defaults.h"
#include "runner.h"
#include "train/run_record.h"
#include "train/run_settings.h"
#include "train/settings.h"

static const char *const command_names[] = { "train", "eval", "predict", "bench", "locate" };
#define COMMANDS 5

/* A value the row accepts that differs from its default where it can. */
static const char *sample(const struct setting *row, char *buf, size_t len)
{
	switch (row->type) {
	case SETTING_LONG:
		snprintf(buf, len, "%ld", (long)row->lo + 1 < (long)row->hi ? (long)row->lo + 1
									     : (long)row->lo);
		return buf;
	case SETTING_DOUBLE:
		snprintf(buf, len, "%g", row->hi);
		return buf;
	case SETTING_U64:
		return "18446744073709551615";
	case SETTING_TEXT:
	case SETTING_CHOICE:
		if (!row->choices)
			return "some/path";
		{
			const char *c = row->choices;   /* the second choice, or the first */
			size_t n = strcspn(c, "|");
			if (c[n])
				c += n + 1;
			snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c);
		}
		return buf;
	default:
		return NULL;
	}
}

static void test_every_default_is_accepted(void)
{
	struct settings o;
	struct trainer_error err = { "" };

	for (int c = 0; c < COMMANDS; c++)
		CHECK_MSG(settings_init(&o, command_names[c], &err) == 0, "%s", err.msg);
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		CHECK_MSG(row->help || !row->flag, "row %d: a flag without help", i);
		CHECK_MSG(row->flag || row->set_by, "row %d (%s): a derived value says what sets it",
			  i, row->key);
		CHECK_MSG(!row->key || settings_of_key(row->key) == row, "%s: two rows record it",
			  row->key);
		CHECK_MSG(!row->flag || settings_find(row->flag, 0) == row, "%s: two rows", row->flag);
	}
}

/* argv of "CMD FLAG [VALUE]" or "CMD FLAG=VALUE" parsed. */
static int parse(const char *command, const char *flag, const char *value, int joined,
		 struct settings *o)
{
	char joined_arg[512];
	char *argv[4] = { (char *)command, (char *)flag, (char *)value, NULL };
	int argc = value ? 3 : 2;

	if (value && joined) {
		snprintf(joined_arg, sizeof(joined_arg), "%s=%s", flag, value);
		argv[1] = joined_arg;
		argc = 2;
	}
	fflush(stderr);
	int saved = dup(2), quiet = open("/dev/null", O_WRONLY);   /* refusals are expected */
	dup2(quiet, 2);
	int rc = cli_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(quiet);
	return rc;
}

static void test_every_row_parses_for_its_commands_only(void)
{
	char buf[64], text[512];
	struct settings o;

	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || row->type == SETTING_HELP)
			continue;
		const char *v = sample(row, buf, sizeof(buf));
		if (!strcmp(row->flag, "--backend") || !strcmp(row->flag, "--precision"))
			v = row->type == SETTING_TEXT ? "ref" : "fp32";   /* ref computes fp32 only */
		for (int c = 0; c < COMMANDS; c++) {
			int mine = (row->commands & settings_command(command_names[c])) != 0;
			for (int joined = 0; joined <= (v != NULL); joined++) {
				int rc = parse(command_names[c], row->flag, v, joined, &o);
				CHECK_MSG(rc == (mine ? 0 : -1), "%s %s%s%s: %d", command_names[c],
					  row->flag, joined ? "=" : " ", v ? v : "", rc);
				if (rc || !mine)
					continue;
				CHECK_MSG(settings_given(&o, row), "%s: not marked given", row->flag);
				settings_format(&o, row, text, sizeof(text));
				if (v && row->type != SETTING_DOUBLE)
					CHECK_STR(text, v);
			}
		}
	}
}

/* A value outside a row's choices or range, or a switch given a value,
 * is refused naming the flag and the value. */
static void test_every_row_refuses_what_its_type_does_not_take(void)
{
	struct settings o;
	struct trainer_error err = { "" };
	char bad[64];

	CHECK(settings_init(&o, "train", &err) == 0);
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || row->type == SETTING_HELP || (row->type == SETTING_TEXT && !row->choices))
			continue;
		if (row->type == SETTING_LONG || row->type == SETTING_DOUBLE)
			snprintf(bad, sizeof(bad), "%.17g", row->hi * 2 + 1);
		else
			snprintf(bad, sizeof(bad), "%s", row->type == SETTING_U64 ? "-1" : "nonesuch");
		CHECK_MSG(settings_set(&o, row, bad, 1, &err) == -1, "%s %s: taken", row->flag, bad);
		CHECK_CONTAINS(err.msg, row->flag);
		CHECK_MSG(!settings_given(&o, row), "%s: marked given after a refusal", row->flag);
	}
}

static void test_every_row_is_in_its_commands_help(void)
{
	char cmd[4096], line[1024];

	for (int c = 0; c < COMMANDS; c++) {
		struct test_proc p;
		snprintf(cmd, sizeof(cmd), "'%s/chexnet' %s --help", test_build_dir(), command_names[c]);
		CHECK(test_run(cmd, 20, &p) == 0);
		CHECK_INT(p.exit_code, 0);
		for (int i = 0; i < settings_count; i++) {
			const struct setting *row = &settings_table[i];
			if (!row->flag)
				continue;
			char help[512];
			cli_row_help(row, help, sizeof(help));
			snprintf(line, sizeof(line), "  %-20s %s\n", row->flag, help);
			int mine = (row->commands & settings_command(command_names[c])) != 0;
			CHECK_MSG((strstr(p.out, line) != NULL) == mine, "%s --help: %s%s",
				  command_names[c], mine ? "lacks " : "lists ", line);
		}
		test_proc_free(&p);
	}
}

/* roff text: '-' as "\-". */
static void roff(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '-' || *s == '\\')
			out[n++] = '\\';
		out[n++] = *s == '\\' ? 'e' : *s;
	}
	out[n] = '\0';
}

static const char *const policy_names[] = {
	[RESUME_SESSION] = "this session only",
	[RESUME_RECORDED] = "recorded; each session chooses it",
	[RESUME_FREE] = "recorded; --resume keeps it unless given",
	[RESUME_MEANING] = "recorded; --resume keeps it, a change needs --allow-changes",
	[RESUME_KEPT] = "recorded; --resume keeps it, never changes",
};

/* The OPTIONS section the table gives. */
static void options_section(char *out, size_t len)
{
	char flag[128], help[1024], text[1024], policy[256];
	size_t n = (size_t)snprintf(out, len, ".SH OPTIONS\nThe options of train, eval, predict, "
				    "bench and locate, from one table\n(trainer/train/settings.c; "
				    "the test group trainer-settings checks this list).\n");

	for (int i = 0; i < settings_count && n < len; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag)
			continue;
		char cmds[64] = "";
		for (int c = 0; c < COMMANDS; c++)
			if (row->commands & settings_command(command_names[c]))
				snprintf(cmds + strlen(cmds), sizeof(cmds) - strlen(cmds), "%s%s",
					 cmds[0] ? ", " : "", command_names[c]);
		roff(row->flag, flag, sizeof(flag));
		cli_row_help(row, text, sizeof(text));
		roff(text, help, sizeof(help));
		roff(row->key ? policy_names[row->resume] : "not recorded", policy, sizeof(policy));
		int takes = row->type != SETTING_SWITCH && row->type != SETTING_HELP;
		n += (size_t)snprintf(out + n, len - n, ".TP\n.B%s %s%s\n%s.\nCommands: %s; %s.\n",
				      takes ? "I" : "", flag, takes ? " \" VALUE\"" : "", help, cmds,
				      policy);
	}
}

static void test_man_page_lists_the_table(void)
{
	char *file = test_path(test_src_dir(), "man/chexnet.1"), *man = test_read_file(file, NULL);
	static char expected[32768];
	char *path;
	FILE *f;

	CHECK(man != NULL);
	if (!man)
		return;
	options_section(expected, sizeof(expected));
	char *start = strstr(man, ".SH OPTIONS\n"), *end = start ? strstr(start + 1, "\n.SH ") : NULL;
	size_t n = start && end ? (size_t)(end + 1 - start) : 0;
	int same = n == strlen(expected) && memcmp(start, expected, n) == 0;
	if (!same) {
		path = test_path(test_tmpdir(), "OPTIONS.roff");
		if ((f = fopen(path, "w"))) {
			fputs(expected, f);
			fclose(f);
		}
		CHECK_MSG(0, "man/chexnet.1: its OPTIONS section is not the table's; the table's is "
			  "in %s (HVD_TEST_KEEP=1 keeps it)", path);
		free(path);
	}
	free(man);
	free(file);
}

static void test_recorded_rows_have_their_kind(void)
{
	enum run_setting_kind kind;
	const char *flag;

	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->key)
			continue;
		int known = run_setting_known(row->key, &kind, &flag, NULL);
		CHECK_MSG(known == (row->resume != RESUME_SESSION), "%s", row->key);
		if (!known)
			continue;
		CHECK_MSG((kind == RUN_SETTING_MEANING) ==
			  (row->resume == RESUME_MEANING || row->resume == RESUME_KEPT), "%s", row->key);
		CHECK_STR(flag, row->flag ? row->flag : row->set_by);
	}
}

/* Every row --resume takes: a value other than its default recorded by
 * record_of into a run.json, read back by resume_defaults into a fresh
 * command line's settings: the same text. */
static void test_run_json_round_trip_gives_resume_every_row(void)
{
	struct settings o, back;
	struct run_settings record;
	struct trainer_error err = { "" };
	static char values[SETTINGS_MAX][64];   /* text rows point into them */
	char a[512], b[512];
	char *argv[] = { "train", NULL };

	CHECK(settings_init(&o, "train", &err) == 0);
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (row->flag && row->key && (row->commands & SETTING_TRAIN) &&
		    row->resume != RESUME_SESSION)
			CHECK_MSG(settings_set(&o, row, row->type == SETTING_SWITCH ? NULL
					       : sample(row, values[i], sizeof(values[i])), 1, &err) == 0,
				  "%s: %s", row->flag, err.msg);
	}
	o.data = "images";
	CHECK_MSG(record_of(&o, &record, &err) == 0, "%s", err.msg);
	CHECK(run_settings_set(&record, "data", "images", &err) == 0);
	struct run_session s = { .start_time = "2026-11-25T00:00:00Z", .argc = 1, .argv = argv,
				 .settings = &record };
	CHECK_MSG(run_record_create(test_tmpdir(), &s, &err) == 0, "%s", err.msg);

	CHECK(cli_parse(1, argv, &back) == 0);
	back.resume = test_tmpdir();
	CHECK_INT(resume_defaults(&back), 0);
	CHECK_STR(back.data, "images");
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || !row->key || !(row->commands & SETTING_TRAIN))
			continue;
		settings_format(&o, row, a, sizeof(a));
		settings_format(&back, row, b, sizeof(b));
		int takes = row->resume == RESUME_FREE || row->resume == RESUME_MEANING ||
			    row->resume == RESUME_KEPT;
		CHECK_MSG((strcmp(a, b) == 0) == takes, "%s: recorded '%s', resumed '%s' (%s)", row->flag,
			  a, b, takes ? "taken" : "not taken");
	}
}

const struct test_case settings_tests[] = {
	{ "every_default_is_accepted", test_every_default_is_accepted },
	{ "every_row_parses_for_its_commands_only", test_every_row_parses_for_its_commands_only },
	{ "every_row_refuses_what_its_type_does_not_take",
	  test_every_row_refuses_what_its_type_does_not_take },
	{ "every_row_is_in_its_commands_help", test_every_row_is_in_its_commands_help },
	{ "man_page_lists_the_table", test_man_page_lists_the_table },
	{ "recorded_rows_have_their_kind", test_recorded_rows_have_their_kind },
	{ "run_json_round_trip_gives_resume_every_row",
	  test_run_json_round_trip_gives_resume_every_row },
	{ 0 }
};
