/* base/option_table.h - a command line read by a table of rows. A row
 * declares one option once: its flag, type, range or choices, default,
 * help, the commands (bits) that take it and where its value lives in
 * the command's own struct (an offset). From the rows come: the strict
 * parse of `--opt value` and `--opt=value` (an unknown flag, a missing
 * value, a number out of range or a text outside the choices is one
 * line naming the flag and the value), the defaults, the value as text,
 * and a command's --help. The trainer's settings (train/settings.h) and
 * the pipeline's commands (pack, synth) and curves each keep their rows
 * in one table and read it through this file.
 * What this is not: what a record does with a value (the key and resume
 * policy are the trainer's; this file only carries them), or checks of
 * options against each other (the commands').
 */
#ifndef HVD_TRAINER_BASE_OPTION_TABLE_H
#define HVD_TRAINER_BASE_OPTION_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"

enum setting_type {
	SETTING_SWITCH,     /* no value: stores .on in an int */
	SETTING_LONG,       /* a whole number in [lo, hi] */
	SETTING_DOUBLE,     /* a finite number in [lo, hi] */
	SETTING_U64,        /* 0 .. 2^64-1 (a seed) */
	SETTING_TEXT,       /* a string; one of .choices when it has them */
	SETTING_CHOICE,     /* one of .choices, stored as its index in an int */
	SETTING_HELP,       /* --help */
};

/* What --resume does with a trainer setting, and what a change of it
 * means (train/settings.h says; every other command's rows: SESSION). */
enum setting_resume {
	RESUME_SESSION,     /* this session's only: never taken nor compared; recorded
			       (run.json, a recipe) when it has a key */
	RESUME_RECORDED,    /* recorded; each session chooses it anew (a change is noted) */
	RESUME_FREE,        /* recorded, taken unless given; a change is noted */
	RESUME_MEANING,     /* recorded, taken unless given; a change needs --allow-changes */
	RESUME_KEPT,        /* recorded and taken; never changes (another model: a new run) */
};

struct setting {
	const char *flag;           /* "--accumulate"; NULL: a derived value, recorded only */
	const char *key;            /* run.json's key; NULL: not recorded */
	enum setting_type type;
	int commands;               /* the bits of the commands that take it */
	enum setting_resume resume;
	double lo, hi;              /* LONG, DOUBLE */
	const char *choices;        /* TEXT, CHOICE: "adam|sgd" */
	const char *fallback;       /* the default, as given text; NULL: zero (the help says) */
	size_t offset;              /* the value in the command's struct */
	int on;                     /* SWITCH: the value it stores */
	const char *help;
	const char *set_by;         /* a derived value: what sets it */
	const char *env;            /* a site's default: this environment variable, when set,
				       replaces .fallback (option_env_defaults); NULL: none */
};

/* A command's table and how its values are stored. */
struct option_table {
	const struct setting *rows;
	int count;
	/* Sets a row's value from text (NULL: a switch); 0, or -1 (err names
	 * the flag and the value). NULL: option_set. given: 1 from argv. */
	int (*set)(void *values, const struct setting *row, const char *text, int given,
		   struct trainer_error *err);
};

/* The row of flag that command (a bit; 0: any) takes, or NULL. */
const struct setting *option_find(const struct option_table *t, const char *flag, int command);
/* Choice i of row's choices ("a|b|c"): its start and *len, or NULL past the last. */
const char *option_choice(const struct setting *row, int i, int *len);
/* row's value from text (NULL for a switch) into values, checked by its
 * type, range and choices. 0 or -1 (err: "--flag: 'text': why"). */
int option_set(void *values, const struct setting *row, const char *text, struct trainer_error *err);
/* A whole-number row's value v, checked against its range as option_set
 * checks text: 0 or -1 (err: "--flag 'v': expected an integer in lo..hi"). */
int option_set_long(void *values, const struct setting *row, long v, struct trainer_error *err);
/* The default of every row command takes (0: every row), in table order. */
int option_defaults(const struct option_table *t, int command, void *values,
		    struct trainer_error *err);
/* Then each row's site default: a row command takes that names an .env
 * variable set in the environment takes its value (given = 0). 0, or -1
 * with err "VAR: 'value': why (the site default of --flag)": a bad value
 * is refused, never replaced by the fallback. */
int option_env_defaults(const struct option_table *t, int command, void *values,
			struct trainer_error *err);
/* The shortest "%.Ng" of v that reads back to v (finite v). */
void option_number(double v, char *out, size_t len);
/* The row's value as text (a choice's name, a switch 0 or 1). */
void option_format(const void *values, const struct setting *row, char *out, size_t len);
/* One row's help: "a | b: " its choices, its text, " (default X)", and
 * " (site default: $VAR)" for a row with .env. */
void option_row_help(const struct setting *row, char *out, size_t len);
/* "usage: chexnet NAME [options]OPERANDS" and one line per row command takes. */
void option_print_help(FILE *f, const struct option_table *t, const char *name, int command,
		       const char *operands);

/* argv[1..argc) of command (argv[0] its name, a bit) into values, each
 * through the table's set (given = 1). Arguments not starting
 * with "--" go to operands[] (room for argc) when the command takes
 * them (operands not NULL), else are refused. 0; 1: --help was printed
 * (with operands_help); -1: one line printed ("chexnet: ..."). */
int option_parse(const struct option_table *t, int command, const char *operands_help, int argc,
		 char **argv, void *values, char **operands, int *operand_count);

#endif
