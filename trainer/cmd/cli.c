/* cli.c - strict option parsing for the trainer's own commands by the
 * rows of the settings table (train/settings.h): --opt value or
 * --opt=value, each row's own commands, type, range and choices; the
 * commands' help from the same rows. What it does not do: run anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"

static const struct { const char *name; const char *summary; } commands[] = {
	{ "train", "train a model (--data DIR or --synthetic)" },
	{ "eval", "loss and per-class AUROC of a checkpoint" },
	{ "predict", "14 probabilities per image (--cam DIR: heat maps): predict --checkpoint DIR IMAGE..." },
	{ "bench", "training throughput on synthetic in-memory data (images/s)" },
	{ "locate", "where CAMs point on generated images (chexnet synth's seed, --seed)" },
};

void cli_usage(FILE *f)
{
	fprintf(f, "usage: chexnet COMMAND [options]   (chexnet COMMAND --help)\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* One row's help: "a | b: " its choices, its text, " (default X)". */
void cli_row_help(const struct setting *row, char *out, size_t len)
{
	size_t used = 0;
	const char *c;
	int n;

	out[0] = '\0';
	for (int i = 0; (c = settings_choice(row, i, &n)) && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%.*s", i ? " | " : "", n, c);
	if (used < len)
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ": " : "", row->help);
	if (row->fallback && used < len)
		snprintf(out + used, len - used, " (default %s)", row->fallback);
}

static void command_help(FILE *f, const char *name, int bit)
{
	char help[512];

	fprintf(f, "usage: chexnet %s [options]%s\n", name, bit == SETTING_PREDICT ? " IMAGE..." : "");
	for (int i = 0; i < settings_count; i++)
		if (settings_table[i].flag && (settings_table[i].commands & bit)) {
			cli_row_help(&settings_table[i], help, sizeof(help));
			fprintf(f, "  %-20s %s\n", settings_table[i].flag, help);
		}
}

/* argv[i] ("--flag" or "--flag=value") applied; *i moves past its value.
 * 0, 1 (--help, printed) or -1 (printed). */
static int one_flag(int argc, char **argv, int *i, int bit, struct settings *o)
{
	char name[64];
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), arg);
	const struct setting *f = n < sizeof(name) ? settings_find(name, bit) : NULL;
	struct trainer_error err = { "" };
	int takes_value = f && f->type != SETTING_SWITCH && f->type != SETTING_HELP;

	if (!f)
		return fprintf(stderr, "chexnet: %s: '%s': unknown option (chexnet %s --help)\n",
			       argv[0], name, argv[0]), -1;
	if (f->type == SETTING_HELP) {
		command_help(stdout, argv[0], bit);
		return 1;
	}
	if (eq && !takes_value)
		return fprintf(stderr, "chexnet: %s: '%s': takes no value\n", f->flag, arg), -1;
	if (takes_value && !eq && *i + 1 >= argc)
		return fprintf(stderr, "chexnet: %s: missing value\n", f->flag), -1;
	if (settings_set(o, f, !takes_value ? NULL : eq ? eq + 1 : argv[++*i], 1, &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	return 0;
}

int cli_parse(int argc, char **argv, struct settings *o)
{
	static char **inputs;   /* predict's images in order (options may follow them) */
	int bit = settings_command(argv[0]);
	struct trainer_error err = { "" };

	if (settings_init(o, argv[0], &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	o->argc = argc;
	o->argv = argv;
	free(inputs);
	if (!(inputs = calloc((size_t)argc, sizeof(char *))))
		return fprintf(stderr, "chexnet: out of memory\n"), -1;
	o->inputs = inputs;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || argv[i][1] != '-') {   /* predict's images, among options */
			if (bit != SETTING_PREDICT)
				return fprintf(stderr, "chexnet: %s: '%s': unexpected argument\n", argv[0], argv[i]), -1;
			inputs[o->input_count++] = argv[i];
			continue;
		}
		int rc = one_flag(argc, argv, &i, bit, o);
		if (rc)
			return rc;
	}
	if (backend_resolve(o->backend, &o->chosen, &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	o->backend = o->chosen.name;
	if (o->precision_auto)
		o->precision = backend_precision_auto(o->backend, o->chosen.precision_why,
						      sizeof(o->chosen.precision_why));
	if (!strcmp(o->backend, "ref") && o->precision != PRECISION_FP32)   /* as ref_create says */
		return fprintf(stderr, "chexnet: --precision: '%s': the ref backend computes in fp32 "
			       "only\n", precision_name(o->precision)), -1;
	return 0;
}

int cli_given(const struct settings *o, const char *flag)
{
	return settings_given(o, settings_find(flag, 0));
}
