/* train/settings.c - the one table of chexnet's settings (settings.h):
 * one row per setting, and the code every use of the rows shares: the
 * defaults, setting a value from text, formatting it for run.json.
 * What it does not do: walk a command line (cmd/cli.c) or read a file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "train/settings.h"

#define OFF(field) offsetof(struct settings, field)
#define T SETTING_TRAIN
#define E SETTING_EVAL
#define P SETTING_PREDICT
#define B SETTING_BENCH
#define L SETTING_LOCATE
#define BIG (double)(1L << 40)

const struct setting settings_table[] = {
	{ "--model", "model", SETTING_TEXT, SETTING_ALL, RESUME_KEPT, .choices = "densenet121|resnet50",
	  .fallback = "densenet121", .offset = OFF(model),
	  .help = "the network (eval, predict, locate: the checkpoint's)" },
	{ "--backend", "backend", SETTING_TEXT, SETTING_ALL, RESUME_RECORDED,
	  .choices = "auto|ref|cpu|gpu", .fallback = "auto", .offset = OFF(backend),
	  .help = "auto chooses gpu when a CUDA device is usable, else cpu, else ref" },
	{ NULL, "backend_detail", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--backend" },
	{ NULL, "runtime_backend", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "HVD_BACKEND" },
	{ "--precision", "precision", SETTING_CHOICE, SETTING_ALL, RESUME_MEANING,
	  .choices = "fp32|bf16|fp16|auto", .fallback = "fp32", .offset = OFF(precision),
	  .help = "auto chooses bf16 on a GPU or a CPU with bf16 kernels" },
	{ "--size", "size", SETTING_LONG, SETTING_ALL, RESUME_MEANING, 32, 4096, .fallback = "224",
	  .offset = OFF(size), .help = "image side in pixels (eval, predict, locate: the checkpoint's)" },
	{ NULL, "stored_size", SETTING_LONG, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "pixels", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "aspect", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "crop", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--size" },
	{ NULL, "normalise", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "the build" },
	{ "--batch", "batch", SETTING_LONG, SETTING_ALL, RESUME_FREE, 1, 4096, .fallback = "16",
	  .offset = OFF(batch), .help = "images per step and rank" },
	{ NULL, "ranks", SETTING_LONG, T, RESUME_RECORDED, .set_by = "the rank count" },
	{ "--accumulate", "accumulate", SETTING_LONG, T, RESUME_FREE, 1, 4096, .fallback = "1",
	  .offset = OFF(accumulate), .help = "K micro-batches per optimizer step, one allreduce" },
	{ NULL, "global_batch", SETTING_LONG, T, RESUME_MEANING,
	  .set_by = "--batch, --accumulate, the rank count" },
	{ "--optimizer", "optimizer", SETTING_CHOICE, T, RESUME_MEANING, .choices = "adam|sgd",
	  .fallback = "adam", .offset = OFF(optim.kind), .help = "the optimizer" },
	{ "--momentum", "momentum", SETTING_DOUBLE, T, RESUME_MEANING, 0, 1, .fallback = "0.9",
	  .offset = OFF(optim.momentum), .help = "SGD momentum" },
	{ "--weight-decay", "weight_decay", SETTING_DOUBLE, T, RESUME_MEANING, 0, 1, .fallback = "0",
	  .offset = OFF(optim.weight_decay), .help = "L2 weight decay" },
	{ "--lr", "lr", SETTING_DOUBLE, T, RESUME_FREE, 0, 100, .fallback = "1e-3", .offset = OFF(lr),
	  .help = "learning rate" },
	{ "--lr-scale", "lr_scale", SETTING_CHOICE, T, RESUME_FREE, .choices = "none|linear",
	  .fallback = "none", .offset = OFF(lr_scale),
	  .help = "linear: multiply the LR by the micro-batches of a step (ranks x --accumulate)" },
	{ NULL, "lr_effective", SETTING_DOUBLE, T, RESUME_MEANING,
	  .set_by = "--lr, --lr-scale, the global batch" },
	{ "--warmup-epochs", "warmup_epochs", SETTING_DOUBLE, T, RESUME_MEANING, 0, 100000,
	  .fallback = "0", .offset = OFF(warmup_epochs), .help = "linear LR warm-up epochs" },
	{ "--patience", "patience", SETTING_LONG, T, RESUME_FREE, 0, 100000, .fallback = "1",
	  .offset = OFF(patience), .help = "epochs without val improvement before LR x0.1" },
	{ "--loss", "loss", SETTING_CHOICE, T | E, RESUME_MEANING, .choices = "bce|weighted",
	  .fallback = "weighted", .offset = OFF(weighted_loss),
	  .help = "weighted: w+=N/(P+N), w-=P/(P+N)" },
	{ "--seed", "seed", SETTING_U64, SETTING_ALL, RESUME_MEANING, .fallback = "1",
	  .offset = OFF(seed), .help = "random seed" },
	{ "--data", NULL, SETTING_TEXT, T | E, RESUME_SESSION, .offset = OFF(data),
	  .help = "data directory (packed or NIH/generic layout)" },
	{ "--synthetic", NULL, SETTING_SWITCH, T | E, RESUME_SESSION, .offset = OFF(synthetic), .on = 1,
	  .help = "random in-memory images and labels" },
	{ NULL, "data", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--data, --synthetic" },
	{ NULL, "data_fingerprint", SETTING_TEXT, T, RESUME_MEANING,
	  .set_by = "--data, --synthetic-images" },
	{ "--synthetic-images", NULL, SETTING_LONG, T | E, RESUME_SESSION, 1, 1L << 24,
	  .fallback = "64", .offset = OFF(synthetic_images), .help = "size of the synthetic set" },
	{ "--init", "init", SETTING_TEXT, T, RESUME_RECORDED, .offset = OFF(init),
	  .help = "start from a torchvision state dict (.safetensors)" },
	{ "--memory-efficient", "memory_efficient", SETTING_SWITCH, T | B, RESUME_FREE,
	  .offset = OFF(memory_efficient), .on = 1, .help = "recompute BN+ReLU in backward" },
	{ "--epochs", "epochs", SETTING_LONG, T, RESUME_FREE, 1, 100000, .fallback = "1",
	  .offset = OFF(epochs), .help = "epochs" },
	{ "--steps", "steps", SETTING_LONG, T | B, RESUME_FREE, 1, BIG, .offset = OFF(steps),
	  .help = "stop after N steps (train: per run; default: whole epochs)" },
	{ "--save-every", "save_every", SETTING_LONG, T, RESUME_FREE, 1, BIG,
	  .offset = OFF(save_every), .help = "also write OUT/last every N steps (default: epoch ends)" },
	{ "--threads", "threads", SETTING_LONG, SETTING_ALL, RESUME_FREE, 0, 4096,
	  .offset = OFF(threads), .help = "compute threads (default: allowed CPUs)" },
	{ "--loader-threads", "loader_threads", SETTING_LONG, T | E, RESUME_FREE, 0, 1024,
	  .offset = OFF(loader_threads), .help = "input pipeline workers (default: CPUs/4)" },
	{ "--progress-every", "progress_every", SETTING_LONG, T | B, RESUME_FREE, 1, 1L << 30,
	  .fallback = "10", .offset = OFF(progress_every), .help = "steps between progress lines" },
	{ "--out", NULL, SETTING_TEXT, T, RESUME_SESSION, .offset = OFF(out),
	  .help = "run directory: run.json, metrics, checkpoints (last/, best/); "
		  "default runs/YYYYMMDD-HHMMSS" },
	{ "--checkpoint", NULL, SETTING_TEXT, E | P | L, RESUME_SESSION, .offset = OFF(checkpoint),
	  .help = "checkpoint directory to evaluate" },
	{ "--split", NULL, SETTING_TEXT, E, RESUME_SESSION, .choices = "val|test", .fallback = "test",
	  .offset = OFF(split), .help = "the split to evaluate" },
	{ "--resume", NULL, SETTING_TEXT, T, RESUME_SESSION, .offset = OFF(resume),
	  .help = "continue from DIR/last (params, optimizer, schedule, data position); "
		  "settings from DIR/run.json" },
	{ "--allow-changes", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(allow_changes),
	  .on = 1, .help = "--resume with settings that change the run's meaning (recorded)" },
	{ "--shrink", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(shrink), .on = 1,
	  .help = "after lost nodes the ranks left go on in their own processes (docs/lost-rank.md)" },
	{ "--overwrite", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(overwrite), .on = 1,
	  .help = "replace the run in --out (its own files; others renamed NAME.foreign-N)" },
	{ "--test", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(test_at_end), .on = 1,
	  .help = "evaluate the test split at the end (the AUROC table, OUT/test.json)" },
	{ "--quiet", NULL, SETTING_SWITCH, T | B, RESUME_SESSION, .offset = OFF(progress),
	  .on = PROGRESS_QUIET, .help = "no progress lines" },
	{ "--verbose", NULL, SETTING_SWITCH, SETTING_ALL, RESUME_SESSION, .offset = OFF(verbose),
	  .on = 1, .help = "the runtime's start-up report (settings, rank table) on one process too" },
	{ "--json", NULL, SETTING_SWITCH, T | B | E | P, RESUME_SESSION, .offset = OFF(progress),
	  .on = PROGRESS_JSON, .help = "JSON on stdout (train/bench: progress lines, tables to "
				      "stderr; eval/predict: the results)" },
	{ "--bootstrap", NULL, SETTING_LONG, T | E, RESUME_SESSION, 0, 1000000, .fallback = "1000",
	  .offset = OFF(bootstrap),
	  .help = "resamples of patients for the 95% intervals (0 off; train: test.json)" },
	{ "--plots", NULL, SETTING_TEXT, E, RESUME_SESSION, .offset = OFF(plots),
	  .help = "write ROC, reliability and AUROC-vs-CheXNet PNGs into DIR" },
	{ "--choose-thresholds", NULL, SETTING_SWITCH, E, RESUME_SESSION,
	  .offset = OFF(choose_thresholds), .on = 1,
	  .help = "choose operating thresholds on --split val, store them" },
	{ "--sensitivity", NULL, SETTING_DOUBLE, T | E, RESUME_SESSION, 1e-9, 1,
	  .offset = OFF(sensitivity), .help = "threshold rule: reach this sensitivity (default Youden's J)" },
	{ "--specificity", NULL, SETTING_DOUBLE, T | E, RESUME_SESSION, 1e-9, 1,
	  .offset = OFF(specificity), .help = "threshold rule: keep this specificity (default Youden's J)" },
	{ "--cam", NULL, SETTING_TEXT, P, RESUME_SESSION, .offset = OFF(cam),
	  .help = "write class activation map PNGs (heat map on the X-ray) into DIR" },
	{ "--cam-classes", NULL, SETTING_TEXT, P, RESUME_SESSION, .offset = OFF(cam_classes),
	  .help = "all | comma list of findings for --cam (default: those above their stored "
		  "threshold)" },
	{ "--images", NULL, SETTING_LONG, L, RESUME_SESSION, 1, 1000000, .fallback = "100",
	  .offset = OFF(locate_images), .help = "generated test images with the finding" },
	{ "--finding", NULL, SETTING_TEXT, L, RESUME_SESSION, .fallback = "Effusion",
	  .offset = OFF(locate_finding), .help = "the finding to locate" },
	{ "--min-ratio", NULL, SETTING_DOUBLE, L, RESUME_SESSION, 0, 1000, .fallback = "2",
	  .offset = OFF(locate_min_ratio), .help = "fail below this many times chance" },
	{ "--help", NULL, SETTING_HELP, SETTING_ALL, RESUME_SESSION, .help = "this help" },
};

#undef T
#undef E
#undef P
#undef B
#undef L

const int settings_count = (int)(sizeof(settings_table) / sizeof(settings_table[0]));

_Static_assert(sizeof(settings_table) / sizeof(settings_table[0]) <= SETTINGS_MAX,
	       "struct settings' given[] holds one byte per row");
_Static_assert(sizeof(enum precision) == sizeof(int) && sizeof(enum optim_kind) == sizeof(int),
	       "CHOICE rows store an int");

static const struct { const char *name; int bit; } commands[] = {
	{ "train", SETTING_TRAIN }, { "eval", SETTING_EVAL }, { "predict", SETTING_PREDICT },
	{ "bench", SETTING_BENCH }, { "locate", SETTING_LOCATE },
};

int settings_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].bit;
	return 0;
}

const struct setting *settings_find(const char *flag, int command)
{
	for (int i = 0; i < settings_count; i++)
		if (settings_table[i].flag && strcmp(settings_table[i].flag, flag) == 0 &&
		    (!command || (settings_table[i].commands & command)))
			return &settings_table[i];
	return NULL;
}

const struct setting *settings_of_key(const char *key)
{
	for (int i = 0; i < settings_count; i++)
		if (settings_table[i].key && strcmp(settings_table[i].key, key) == 0)
			return &settings_table[i];
	return NULL;
}

int settings_index(const struct setting *row)
{
	return (int)(row - settings_table);
}

static void *field(struct settings *o, const struct setting *row)
{
	return (char *)o + row->offset;
}

static const void *field_of(const struct settings *o, const struct setting *row)
{
	return (const char *)o + row->offset;
}

const char *settings_choice(const struct setting *row, int i, int *len)
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

	for (int i = 0; (c = settings_choice(row, i, &n)); i++)
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
	for (int i = 0; (c = settings_choice(row, i, &n)) && used < len; i++) {
		const char *sep = !i ? "" : settings_choice(row, i + 1, &m) ? ", " : " or ";
		used += (size_t)snprintf(out + used, len - used, "%s%.*s", sep, n, c);
	}
}

static int set_choice(struct settings *o, const struct setting *row, const char *text,
		      struct trainer_error *err)
{
	char expected[128];
	int i = choice_index(row, text);

	if (i < 0) {
		choices_text(row, expected, sizeof(expected));
		return trainer_error_set(err, "%s: '%s': expected %s", row->flag, text, expected);
	}
	if (row->type == SETTING_TEXT) {
		*(const char **)field(o, row) = text;
		return 0;
	}
	if (row->offset == OFF(precision)) {   /* auto: resolved by the backend (cli_parse) */
		o->precision_auto = strcmp(text, "auto") == 0;
		i = o->precision_auto ? PRECISION_FP32 : i;
	}
	*(int *)field(o, row) = i;
	return 0;
}

/* A number of row's type from text into its field. */
static int set_number(struct settings *o, const struct setting *row, const char *text,
		      struct trainer_error *err)
{
	char e[512];
	long l;
	double d;
	int rc;

	if (row->type == SETTING_LONG) {
		rc = data_arg_long(row->flag, text, (long)row->lo, (long)row->hi, &l, e, sizeof(e));
		if (rc == 0)
			*(long *)field(o, row) = l;
	} else if (row->type == SETTING_DOUBLE) {
		rc = data_arg_double(row->flag, text, row->lo, row->hi, &d, e, sizeof(e));
		if (rc == 0)
			*(double *)field(o, row) = d;
	} else
		rc = data_arg_u64(row->flag, text, (uint64_t *)field(o, row), e, sizeof(e));
	/* data_arg_* says "chexnet: ..." */
	return rc ? trainer_error_set(err, "%s", strncmp(e, "chexnet: ", 9) ? e : e + 9) : 0;
}

int settings_set(struct settings *o, const struct setting *row, const char *text, int given,
		 struct trainer_error *err)
{
	int rc = 0;

	if (!row->flag || row->type == SETTING_HELP)
		return trainer_error_set(err, "settings: '%s': not a setting a command gives",
					 row->flag ? row->flag : row->key);
	if (row->type == SETTING_SWITCH) {
		if (text && strcmp(text, "1") && strcmp(text, "0"))
			return trainer_error_set(err, "%s: '%s': a switch is 0 or 1", row->flag, text);
		if (!text || strcmp(text, "1") == 0)
			*(int *)field(o, row) = row->on;
	} else if (!text)
		return trainer_error_set(err, "%s: missing value", row->flag);
	else if (row->type == SETTING_CHOICE || (row->type == SETTING_TEXT && row->choices))
		rc = set_choice(o, row, text, err);
	else if (row->type == SETTING_TEXT)
		*(const char **)field(o, row) = text;
	else
		rc = set_number(o, row, text, err);
	if (rc == 0 && given)
		o->given[settings_index(row)] = 1;
	return rc;
}

int settings_given(const struct settings *o, const struct setting *row)
{
	return row && o->given[settings_index(row)];
}

int settings_init(struct settings *o, const char *command, struct trainer_error *err)
{
	memset(o, 0, sizeof(*o));
	o->command = command;
	optim_config_default(&o->optim);
	for (int i = 0; i < settings_count; i++)
		if (settings_table[i].fallback && settings_set(o, &settings_table[i],
							       settings_table[i].fallback, 0, err))
			return -1;
	return 0;
}

void settings_number(double v, char *out, size_t len)
{
	for (int digits = 6; digits <= 17; digits++) {
		snprintf(out, len, "%.*g", digits, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

void settings_format(const struct settings *o, const struct setting *row, char *out, size_t len)
{
	const void *v = field_of(o, row);

	out[0] = '\0';
	if (row->type == SETTING_LONG)
		snprintf(out, len, "%ld", *(const long *)v);
	else if (row->type == SETTING_DOUBLE)
		settings_number(*(const double *)v, out, len);
	else if (row->type == SETTING_U64)
		snprintf(out, len, "%llu", (unsigned long long)*(const uint64_t *)v);
	else if (row->type == SETTING_SWITCH)
		snprintf(out, len, "%d", *(const int *)v == row->on);
	else if (row->type == SETTING_TEXT)
		snprintf(out, len, "%s", *(const char *const *)v ? *(const char *const *)v : "");
	else if (row->type == SETTING_CHOICE) {
		int n;
		const char *c = settings_choice(row, *(const int *)v, &n);
		snprintf(out, len, "%.*s", c ? n : 0, c ? c : "");
	}
}

int settings_numeric(const struct setting *row)
{
	return row->type == SETTING_LONG || row->type == SETTING_DOUBLE ||
	       row->type == SETTING_SWITCH;
}

int settings_changes_meaning(const struct setting *row)
{
	return row->resume == RESUME_MEANING || row->resume == RESUME_KEPT;
}

const char *settings_set_by(const struct setting *row)
{
	return row->flag ? row->flag : row->set_by;
}
