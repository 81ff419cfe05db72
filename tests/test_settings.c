/* test_settings.c - the option tables (trainer/train/settings.h for
 * train, eval, predict, bench and locate; pack's, synth's and curves'
 * own, all read through trainer/base/option_table.h) reach every place an
 * option appears, row by row, so that a row added is checked here without
 * a new test: its default is one its own type accepts; the parser takes
 * it as `--opt value` and `--opt=value` for each of its commands and
 * refuses it for the others; `chexnet CMD --help` lists it;
 * man/chexnet.1's OPTIONS section is the tables'; run.json records each
 * recorded row with the kind its resume policy says, and a record read
 * back gives --resume every row it takes; a row's site default
 * (an environment variable) is taken, loses to the command line and is
 * refused in one line when bad.
 * The runner and build/test-row/chexnet are linked with one row more
 * (--test-row, SETTINGS_TEST_ROW in trainer/train/settings.c): each
 * check above sees it, and a run started with it records it, keeps it
 * on --resume and refuses a change of it without --allow-changes.
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
#include "cmd/curves.h"
#include "cmd/data_cmds.h"
#include "cmd/resume_defaults.h"
#include "runner.h"
#include "train/run_record.h"
#include "train/run_settings.h"
#include "train/settings.h"

/* Every command of chexnet with its table and its bit there, from the
 * tables main.c dispatches by: commands.h's rows of the settings table,
 * data_cmds.h's, then commands.h's with options of their own (curves). */
struct test_command {
	const char *name;
	const struct option_table *table;
	int bit;
	int operands;       /* arguments without an option: predict, pack, curves */
};

static int count_rows(int with_bit)
{
	int n = 0;
	for (const struct command *c = commands; c->name; c++)
		n += !c->bit == !with_bit;
	return n;
}

static int data_rows(void)
{
	int n = 0;
	while (data_commands[n].name)
		n++;
	return n;
}

#define COMMANDS count_rows(1)
#define ALL_COMMANDS (COMMANDS + data_rows() + count_rows(0))

static const struct command *row_at(int k, int with_bit)
{
	for (const struct command *c = commands; c->name; c++)
		if (!c->bit == !with_bit && k-- == 0)
			return c;
	return NULL;
}

static struct test_command command_at(int c)
{
	if (c < COMMANDS) {
		const struct command *r = row_at(c, 1);
		return (struct test_command){ r->name, &settings_options, r->bit, r->operands };
	}
	if (c >= COMMANDS + data_rows()) {
		const struct command *r = row_at(c - COMMANDS - data_rows(), 0);
		return (struct test_command){ r->name, r->options, 1, r->operands };
	}
	const struct data_command *d = &data_commands[c - COMMANDS];
	return (struct test_command){ d->name, d->options, 1, !strcmp(d->name, "pack") };
}

#define TEST_ROW "--test-row"

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
	void *values = calloc(1, 4096);   /* room for any command's own struct */

	for (int c = 0; c < COMMANDS; c++)
		CHECK_MSG(settings_init(&o, command_at(c).name, command_at(c).bit, &err) == 0, "%s",
			  err.msg);
	for (int c = COMMANDS; c < ALL_COMMANDS; c++) {
		struct test_command k = command_at(c);
		CHECK_MSG(option_defaults(k.table, k.bit, values, &err) == 0, "%s: %s", k.name, err.msg);
	}
	free(values);
	CHECK_MSG(settings_find(TEST_ROW, SETTING_TRAIN), "the runner's table lacks %s", TEST_ROW);
	for (int c = 0; c < ALL_COMMANDS; c++) {
		struct test_command k = command_at(c);
		for (int i = 0; i < k.table->count; i++) {
			const struct setting *row = &k.table->rows[i];
			if (!(row->commands & k.bit))
				continue;
			CHECK_MSG(row->help || !row->flag, "%s row %d: a flag without help", k.name, i);
			CHECK_MSG(row->flag || row->set_by, "row %d (%s): a derived value says what sets it",
				  i, row->key);
			CHECK_MSG(!row->key || settings_of_key(row->key) == row, "%s: two rows record it",
				  row->key);
			CHECK_MSG(!row->flag || option_find(k.table, row->flag, k.bit) == row,
				  "%s %s: two rows", k.name, row->flag);
		}
	}
}

/* argv of "CMD FLAG [VALUE]" or "CMD FLAG=VALUE" parsed by k's parser
 * into values (a struct settings for the trainer's commands). */
static int parse(const struct test_command *k, const char *flag, const char *value, int joined,
		 void *values)
{
	static char joined_arg[512];   /* text rows keep pointing into it */
	char *argv[4] = { (char *)k->name, (char *)flag, (char *)value, NULL }, *operands[4];
	int argc = value ? 3 : 2, n = 0, rc;

	if (value && joined) {
		snprintf(joined_arg, sizeof(joined_arg), "%s=%s", flag, value);
		argv[1] = joined_arg;
		argc = 2;
	}
	fflush(stderr);
	int saved = dup(2), quiet = open("/dev/null", O_WRONLY);   /* refusals are expected */
	dup2(quiet, 2);
	if (k->table == &settings_options)
		rc = cli_parse(command_find(k->name), argc, argv, values);
	else
		rc = option_parse(k->table, k->bit, NULL, argc, argv, values,
				  k->operands ? operands : NULL, &n);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(quiet);
	return rc;
}

/* The tables, each once. */
static const struct option_table *table_at(int t)
{
	return t == 0 ? &settings_options : command_at(COMMANDS + t - 1).table;
}
#define TABLES 4

/* A recipe without keys, in the case's folder. */
static const char *empty_recipe(void)
{
	static char path[4200];

	CHECK(test_put("empty.yaml", "") == 0);
	snprintf(path, sizeof(path), "%s/empty.yaml", test_tmpdir());
	return path;
}

/* Row r (of any table) given to command k: taken when k's table has a
 * row of its flag for k, then stored as that row says. */
static void row_to_command(const struct setting *r, const struct test_command *k, void *values)
{
	char buf[64], text[512];
	const struct setting *row = option_find(k->table, r->flag, k->bit);
	const char *v = sample(row ? row : r, buf, sizeof(buf));

	if (row && (!strcmp(r->flag, "--backend") || !strcmp(r->flag, "--precision")))
		v = row->type == SETTING_TEXT ? "ref" : "fp32";   /* ref computes fp32 only */
	if (row && !strcmp(r->flag, "--config"))
		v = empty_recipe();   /* a file it reads */
	for (int joined = 0; joined <= (v != NULL); joined++) {
		int rc = parse(k, r->flag, v, joined, values);
		CHECK_MSG(rc == (row ? 0 : -1), "%s %s%s%s: %d", k->name, r->flag, joined ? "=" : " ",
			  v ? v : "", rc);
		if (rc || !row)
			continue;
		if (k->table == &settings_options)
			CHECK_MSG(settings_given(values, row), "%s: not marked given", row->flag);
		option_format(values, row, text, sizeof(text));
		if (v && row->type != SETTING_DOUBLE)
			CHECK_STR(text, v);
	}
}

static void test_every_row_parses_for_its_commands_only(void)
{
	struct settings o;
	void *values = calloc(1, 4096);   /* room for any command's own struct */

	for (int t = 0; t < TABLES; t++)
		for (int i = 0; i < table_at(t)->count; i++) {
			const struct setting *r = &table_at(t)->rows[i];
			if (!r->flag || r->type == SETTING_HELP)
				continue;
			for (int c = 0; c < ALL_COMMANDS; c++) {
				struct test_command k = command_at(c);
				memset(values, 0, 4096);
				row_to_command(r, &k, c < COMMANDS ? (void *)&o : values);
			}
		}
	free(values);
}

/* A value outside a row's choices or range, or a switch given a value,
 * is refused naming the flag and the value. */
static void test_every_row_refuses_what_its_type_does_not_take(void)
{
	struct settings o;
	struct trainer_error err = { "" };
	char bad[64];
	void *values = calloc(1, 4096);

	CHECK(settings_init(&o, "train", SETTING_TRAIN, &err) == 0);
	for (int t = 0; t < TABLES; t++)
		for (int i = 0; i < table_at(t)->count; i++) {
			const struct setting *row = &table_at(t)->rows[i];
			if (!row->flag || row->type == SETTING_HELP ||
			    (row->type == SETTING_TEXT && !row->choices))
				continue;
			if (row->type == SETTING_LONG || row->type == SETTING_DOUBLE)
				snprintf(bad, sizeof(bad), "%.17g", row->hi * 2 + 1);
			else
				snprintf(bad, sizeof(bad), "%s", row->type == SETTING_U64 ? "-1" : "nonesuch");
			if (t == 0 && row->type == SETTING_LONG) {   /* without text, the same range */
				CHECK_MSG(settings_set_long(&o, row, (long)row->hi + 1, 1, &err) == -1 &&
					  settings_set_long(&o, row, (long)row->lo - 1, 1, &err) == -1,
					  "%s: out of range taken as a number", row->flag);
				CHECK_CONTAINS(err.msg, row->flag);
				CHECK_MSG(!settings_given(&o, row), "%s: marked given after a refusal",
					  row->flag);
				CHECK(settings_set_long(&o, row, (long)row->lo, 0, &err) == 0);
			} else if (t == 0 && row->type != SETTING_SWITCH) {
				CHECK_MSG(settings_set_long(&o, row, 1, 1, &err) == -1, "%s: a number taken "
					  "by a row of another type", row->flag);
			}
			if (t == 0) {
				CHECK_MSG(settings_set(&o, row, bad, 1, &err) == -1, "%s %s: taken",
					  row->flag, bad);
				CHECK_MSG(!settings_given(&o, row), "%s: marked given after a refusal",
					  row->flag);
			} else
				CHECK_MSG(option_set(values, row, bad, &err) == -1, "%s %s: taken", row->flag,
					  bad);
			CHECK_CONTAINS(err.msg, row->flag);
		}
	free(values);
}

/* `PROGRAM CMD --help` lists every row of k's and no other trainer row;
 * test_row: PROGRAM has the tests' row. */
static void help_lists_rows(const char *program, const struct test_command *k, int test_row)
{
	char cmd[4096], line[1024], help[512];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "'%s' %s --help", program, k->name);
	CHECK(test_run(cmd, 20, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	for (int t = 0; t < TABLES; t++)
		for (int i = 0; i < table_at(t)->count; i++) {
			const struct setting *row = &table_at(t)->rows[i];
			int own = table_at(t) == k->table;
			if (!row->flag || (!own && (t != 0 || option_find(k->table, row->flag, k->bit))))
				continue;   /* another table's row: absent unless k has that flag */
			option_row_help(row, help, sizeof(help));
			snprintf(line, sizeof(line), "  %-20s %s\n", row->flag, help);
			int listed = own && (row->commands & k->bit) &&
				     (test_row || strcmp(row->flag, TEST_ROW));
			CHECK_MSG((strstr(p.out, line) != NULL) == listed, "%s %s --help: %s%s", program,
				  k->name, listed ? "lacks " : "lists ", line);
		}
	test_proc_free(&p);
}

static void test_every_row_is_in_its_commands_help(void)
{
	char *chexnet = test_path(test_build_dir(), "chexnet");
	char *test_row = test_path(test_build_dir(), "test-row/chexnet");

	for (int c = 0; c < ALL_COMMANDS; c++) {
		struct test_command k = command_at(c);
		help_lists_rows(chexnet, &k, 0);
		if (c < COMMANDS)
			help_lists_rows(test_row, &k, 1);
	}
	free(chexnet);
	free(test_row);
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
	[RESUME_SESSION] = "recorded; each session its own, never compared",
	[RESUME_RECORDED] = "recorded; each session chooses it",
	[RESUME_FREE] = "recorded; --resume keeps it unless given",
	[RESUME_MEANING] = "recorded; --resume keeps it, a change needs --allow-changes",
	[RESUME_KEPT] = "recorded; --resume keeps it, never changes",
};

/* One row's entry: flag, help, and for the trainer's rows the commands
 * and the resume policy. */
static size_t row_entry(const struct setting *row, int trainer, char *out, size_t len)
{
	char flag[128], help[1024], text[1024], policy[256], cmds[64] = "";

	for (int c = 0; trainer && c < COMMANDS; c++)
		if (row->commands & command_at(c).bit)
			snprintf(cmds + strlen(cmds), sizeof(cmds) - strlen(cmds), "%s%s",
				 cmds[0] ? ", " : "", command_at(c).name);
	roff(row->flag, flag, sizeof(flag));
	option_row_help(row, text, sizeof(text));
	roff(text, help, sizeof(help));
	roff(row->key ? policy_names[row->resume] : "not recorded", policy, sizeof(policy));
	int takes = row->type != SETTING_SWITCH && row->type != SETTING_HELP;
	int n = snprintf(out, len, ".TP\n.B%s %s%s\n%s.\n", takes ? "I" : "", flag,
			 takes ? " \" VALUE\"" : "", help);
	if (trainer && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, "Commands: %s; %s.\n", cmds, policy);
	return n < 0 ? 0 : (size_t)n;
}

/* The OPTIONS section the tables give (with the tests' row or without). */
static void options_section(char *out, size_t len, int test_row)
{
	size_t n = (size_t)snprintf(out, len, ".SH OPTIONS\nThe options of train, eval, predict, "
				    "bench and locate, from one table\n(trainer/train/settings.c; "
				    "the test group trainer-settings checks this list).\n");

	for (int i = 0; i < settings_count && n < len; i++)
		if (settings_table[i].flag && (test_row || strcmp(settings_table[i].flag, TEST_ROW)))
			n += row_entry(&settings_table[i], 1, out + n, len - n);
	for (int c = COMMANDS; c < ALL_COMMANDS && n < len; c++) {
		struct test_command k = command_at(c);
		n += (size_t)snprintf(out + n, len - n, ".SS %s\nThe options of %s, from its own "
				      "table (trainer/cmd/%s.c).\n", k.name, k.name, k.name);
		for (int i = 0; i < k.table->count && n < len; i++)
			n += row_entry(&k.table->rows[i], 0, out + n, len - n);
	}
}

static void test_man_page_lists_the_table(void)
{
	char *file = test_path(test_src_dir(), "man/chexnet.1"), *man = test_read_file(file, NULL);
	static char expected[65536], with_test_row[65536];
	char *path;
	FILE *f;

	CHECK(man != NULL);
	if (!man)
		return;
	options_section(expected, sizeof(expected), 0);
	options_section(with_test_row, sizeof(with_test_row), 1);
	CHECK_MSG(strstr(with_test_row, ".BI \\-\\-test\\-row \" VALUE\"\n") &&
		  strlen(with_test_row) > strlen(expected), "the tests' row is not in the section "
		  "the table gives");
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
		CHECK_MSG(known, "%s", row->key);
		CHECK_MSG((kind == RUN_SETTING_MEANING) ==
			  (row->resume == RESUME_MEANING || row->resume == RESUME_KEPT), "%s", row->key);
		CHECK_STR(flag, row->flag ? row->flag : row->set_by);
	}
}

/* Every row --resume takes: a value other than its default recorded by
 * record_of into a run.json, read back by resume_defaults into a fresh
 * command line's settings: the same text; every other recorded row keeps
 * its default there. */
static void test_run_json_round_trip_gives_resume_every_row(void)
{
	struct settings o, back, fresh;
	struct run_settings record;
	struct trainer_error err = { "" };
	static char values[SETTINGS_MAX][64];   /* text rows point into them */
	char a[512], b[512];
	char *argv[] = { "train", NULL };

	CHECK(settings_init(&o, "train", SETTING_TRAIN, &err) == 0);
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (row->flag && row->key && (row->commands & SETTING_TRAIN) &&
		    row->resume != RESUME_SESSION)
			CHECK_MSG(settings_set(&o, row, row->type == SETTING_SWITCH ? NULL
					       : sample(row, values[i], sizeof(values[i])), 1, &err) == 0,
				  "%s: %s", row->flag, err.msg);
	}
	o.train.data.dir = "images";
	CHECK_MSG(record_of(&o, &record, &err) == 0, "%s", err.msg);
	CHECK(run_settings_set(&record, "data", "images", &err) == 0);
	struct run_session s = { .start_time = "2026-11-25T00:00:00Z", .argc = 1, .argv = argv,
				 .settings = &record };
	CHECK_MSG(run_record_create(test_tmpdir(), &s, &err) == 0, "%s", err.msg);

	CHECK(cli_parse(command_find("train"), 1, argv, &back) == 0);
	back.train.resume = test_tmpdir();
	CHECK_INT(resume_defaults(&back), 0);
	CHECK_STR(back.train.data.dir, "images");   /* the data: taken on its own */
	CHECK(cli_parse(command_find("train"), 1, argv, &fresh) == 0);
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || !row->key || !(row->commands & SETTING_TRAIN) ||
		    row == SETTING_OF(train.data.dir))
			continue;
		int takes = row->resume == RESUME_FREE || row->resume == RESUME_MEANING ||
			    row->resume == RESUME_KEPT;
		option_format(takes ? &o : &fresh, row, a, sizeof(a));
		option_format(&back, row, b, sizeof(b));
		CHECK_MSG(strcmp(a, b) == 0, "%s: %s '%s', resumed '%s'", row->flag,
			  takes ? "recorded" : "not taken: the default", a, b);
	}
}

/* PROGRAM (build/PROGRAM) with args in the case's folder: its exit. */
static int run_in_tmp(const char *program, const char *args, struct test_proc *p)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/%s' %s", test_tmpdir(), test_build_dir(), program,
		 args);
	CHECK(test_run(cmd, 120, p) == 0);
	return p->exit_code;
}

/* run/run.json's value of the tests' row. */
static void recorded_test_row(const char *want)
{
	char *path = test_path(test_tmpdir(), "run/" RUN_RECORD_FILE);
	struct run_settings rec;
	struct trainer_error err = { "" };

	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	const char *v = run_settings_get(&rec, "test_row");
	CHECK_MSG(v && !strcmp(v, want), "run.json: test_row %s, want %s", v ? v : "(none)", want);
	free(path);
}

#define RUN "train --synthetic --synthetic-images 16 --size 32 --batch 8 --threads 1 --quiet "

/* The row only the tests' build has, end to end: a run records it,
 * --resume keeps it, a change of it needs --allow-changes (its policy),
 * another command refuses it, and the real build refuses a record that
 * holds it. */
static void test_a_row_added_reaches_the_run(void)
{
	struct test_proc p;

	CHECK_MSG(run_in_tmp("test-row/chexnet", RUN "--steps 1 --out run --test-row 5", &p) == 0,
		  "%s", test_tail(p.err, 600));
	test_proc_free(&p);
	recorded_test_row("5");
	CHECK(run_in_tmp("test-row/chexnet", RUN "--steps 2 --resume run --test-row 6", &p) != 0);
	CHECK_CONTAINS(p.err, "test_row 5 -> 6 (--test-row); --allow-changes accepts that");
	test_proc_free(&p);
	recorded_test_row("5");
	CHECK_MSG(run_in_tmp("test-row/chexnet", RUN "--steps 2 --resume run", &p) == 0, "%s",
		  test_tail(p.err, 600));
	test_proc_free(&p);
	recorded_test_row("5");
	CHECK_MSG(run_in_tmp("test-row/chexnet", RUN "--steps 3 --resume run --test-row 6 "
			     "--allow-changes", &p) == 0, "%s", test_tail(p.err, 600));
	test_proc_free(&p);
	recorded_test_row("6");
	CHECK_INT(run_in_tmp("test-row/chexnet", "eval --checkpoint run/last --test-row 6", &p), 2);
	CHECK_CONTAINS(p.err, "'--test-row': unknown option");
	test_proc_free(&p);
	CHECK(run_in_tmp("chexnet", RUN "--steps 4 --resume run", &p) != 0);
	CHECK_CONTAINS(p.err, "'test_row': unknown setting");
	test_proc_free(&p);
}

/* Every row with a site default (.env): the variable set gives the row
 * its value without marking it given, the command line still wins, and
 * a value the row refuses is one line naming the variable and the value
 * (never the fallback instead). */
static void test_site_defaults_come_from_the_environment(void)
{
	int rows = 0;

	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		struct settings o;
		struct trainer_error err = { "" };
		char want[64], got[64], flag[160];
		if (!row->env)
			continue;
		rows++;
		CHECK_MSG(row->flag && row->fallback && (row->commands & SETTING_TRAIN),
			  "%s: a site default needs a flag, a fallback and train", row->env);
		sample(row, want, sizeof(want));
		setenv(row->env, want, 1);
		CHECK_MSG(settings_init(&o, "train", SETTING_TRAIN, &err) == 0, "%s", err.msg);
		option_format(&o, row, got, sizeof(got));
		CHECK_STR(got, want);
		CHECK(!settings_given(&o, row));
		char *argv[] = { "train", flag, NULL };
		snprintf(flag, sizeof(flag), "%s=%s", row->flag, row->fallback);
		CHECK(cli_parse(command_find("train"), 2, argv, &o) == 0);
		option_format(&o, row, got, sizeof(got));
		CHECK_STR(got, row->fallback);
		setenv(row->env, "no-such-value", 1);
		CHECK(settings_init(&o, "train", SETTING_TRAIN, &err) == -1);
		char head[160];
		snprintf(head, sizeof(head), "%s: 'no-such-value': ", row->env);
		CHECK_MSG(strncmp(err.msg, head, strlen(head)) == 0 && !strchr(err.msg, '\n') &&
			  strstr(err.msg, row->flag), "%s", err.msg);
		unsetenv(row->env);
	}
	CHECK_MSG(rows > 0, "no row has a site default (--conv-algorithms: CHEXNET_CONV_ALGORITHMS)");
}

/* A field's row, by the field (SETTING_OF): each flagged row is its
 * field's one row, except switches that set one enum field to their own
 * value (--quiet, --json: progress), for which there is none to give. */
static void test_every_field_has_one_row(void)
{
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i], *at = settings_at(row->offset);
		int shared = 0;
		if (!row->flag)
			continue;
		for (int k = 0; k < settings_count; k++)
			shared += k != i && settings_table[k].flag &&
				  settings_table[k].offset == row->offset;
		CHECK_MSG(shared ? !at && row->type == SETTING_SWITCH : at == row,
			  "%s: field at %zu: %d other row(s), SETTING_OF gives %s", row->flag,
			  row->offset, shared, at ? at->flag : "none");
	}
	CHECK_STR(SETTING_OF(train.accumulate)->flag, "--accumulate");
	CHECK(SETTING_OF(train.progress) == NULL);
}

const struct test_case settings_tests[] = {
	{ "every_default_is_accepted", test_every_default_is_accepted },
	{ "every_field_has_one_row", test_every_field_has_one_row },
	{ "every_row_parses_for_its_commands_only", test_every_row_parses_for_its_commands_only },
	{ "every_row_refuses_what_its_type_does_not_take",
	  test_every_row_refuses_what_its_type_does_not_take },
	{ "every_row_is_in_its_commands_help", test_every_row_is_in_its_commands_help },
	{ "man_page_lists_the_table", test_man_page_lists_the_table },
	{ "recorded_rows_have_their_kind", test_recorded_rows_have_their_kind },
	{ "run_json_round_trip_gives_resume_every_row",
	  test_run_json_round_trip_gives_resume_every_row },
	{ "a_row_added_reaches_the_run", test_a_row_added_reaches_the_run },
	{ "site_defaults_come_from_the_environment", test_site_defaults_come_from_the_environment },
	{ 0 }
};
