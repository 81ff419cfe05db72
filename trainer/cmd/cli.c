/* cli.c - strict option parsing for the trainer's own commands: a table
 * of flags, each naming the commands it applies to; numbers go through
 * base/args.h (whole string, range). What it does not do: run anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "base/args.h"

enum { C_TRAIN = 1, C_EVAL = 2, C_PREDICT = 4, C_BENCH = 8, C_LOCATE = 16, C_ALL = 31 };

struct flag {
	const char *name;
	int commands;
	int takes_value;
	const char *help;
};

static const struct flag flags[] = {
	{ "--model", C_ALL, 1, "densenet121 | resnet50 (default densenet121; eval, predict, locate: the checkpoint's)" },
	{ "--backend", C_ALL, 1, "auto | ref | cpu | gpu (default auto: gpu when a CUDA device is usable, else cpu, else ref)" },
	{ "--precision", C_ALL, 1, "fp32 | bf16 | fp16 | auto (default fp32; auto: bf16 on a GPU or a CPU with bf16 kernels)" },
	{ "--batch", C_ALL, 1, "images per step (default 16)" },
	{ "--size", C_ALL, 1, "image side in pixels (default 224; eval, predict, locate: the checkpoint's)" },
	{ "--threads", C_ALL, 1, "compute threads (default: allowed CPUs)" },
	{ "--seed", C_ALL, 1, "random seed (default 1)" },
	{ "--memory-efficient", C_TRAIN | C_BENCH, 0, "recompute BN+ReLU in backward" },
	{ "--steps", C_TRAIN | C_BENCH, 1, "stop after N steps (train: per run; default: whole epochs)" },
	{ "--epochs", C_TRAIN, 1, "epochs (default 1)" },
	{ "--out", C_TRAIN, 1, "run directory: run.json, metrics, checkpoints (last/, best/); default runs/YYYYMMDD-HHMMSS" },
	{ "--data", C_TRAIN | C_EVAL, 1, "data directory (packed or NIH/generic layout)" },
	{ "--synthetic", C_TRAIN | C_EVAL, 0, "random in-memory images and labels" },
	{ "--synthetic-images", C_TRAIN | C_EVAL, 1, "size of the synthetic set (default 64)" },
	{ "--loader-threads", C_TRAIN | C_EVAL, 1, "input pipeline workers (default: CPUs/4)" },
	{ "--init", C_TRAIN, 1, "start from a torchvision state dict (.safetensors)" },
	{ "--checkpoint", C_EVAL | C_PREDICT | C_LOCATE, 1, "checkpoint directory to evaluate" },
	{ "--split", C_EVAL, 1, "val | test (default test)" },
	{ "--optimizer", C_TRAIN, 1, "adam | sgd (default adam)" },
	{ "--lr", C_TRAIN, 1, "learning rate (default 1e-3)" },
	{ "--momentum", C_TRAIN, 1, "SGD momentum (default 0.9)" },
	{ "--weight-decay", C_TRAIN, 1, "L2 weight decay (default 0)" },
	{ "--lr-scale", C_TRAIN, 1, "none | linear: multiply the LR by the number of ranks (R1)" },
	{ "--accumulate", C_TRAIN, 1, "K micro-batches per optimizer step, one allreduce (C4; default 1)" },
	{ "--resume", C_TRAIN, 1, "continue from DIR/last (params, optimizer, schedule, data position); settings from DIR/run.json" },
	{ "--allow-changes", C_TRAIN, 0, "--resume with settings that change the run's meaning (recorded)" },
	{ "--shrink", C_TRAIN, 0, "after lost nodes the ranks left go on in their own processes (docs/lost-rank.md)" },
	{ "--overwrite", C_TRAIN, 0, "replace the run in --out (its own files; others renamed NAME.foreign-N)" },
	{ "--save-every", C_TRAIN, 1, "also write OUT/last every N steps (default: epoch ends)" },
	{ "--test", C_TRAIN, 0, "evaluate the test split at the end (the AUROC table, OUT/test.json)" },
	{ "--warmup-epochs", C_TRAIN, 1, "linear LR warm-up epochs (default 0)" },
	{ "--patience", C_TRAIN, 1, "epochs without val improvement before LR x0.1 (default 1)" },
	{ "--loss", C_TRAIN | C_EVAL, 1, "weighted | bce (default weighted: w+=N/(P+N), w-=P/(P+N))" },
	{ "--progress-every", C_TRAIN | C_BENCH, 1, "steps between progress lines (default 10)" },
	{ "--quiet", C_TRAIN | C_BENCH, 0, "no progress lines" },
	{ "--verbose", C_ALL, 0, "the runtime's start-up report (settings, rank table) on one process too" },
	{ "--json", C_TRAIN | C_BENCH | C_EVAL | C_PREDICT, 0,
	  "JSON on stdout (train/bench: progress lines, tables to stderr; eval/predict: the results)" },
	{ "--bootstrap", C_TRAIN | C_EVAL, 1, "resamples of patients for the 95% intervals (default 1000, 0 off; train: test.json)" },
	{ "--plots", C_EVAL, 1, "write ROC, reliability and AUROC-vs-CheXNet PNGs into DIR" },
	{ "--choose-thresholds", C_EVAL, 0, "choose operating thresholds on --split val, store them" },
	{ "--sensitivity", C_TRAIN | C_EVAL, 1, "threshold rule: reach this sensitivity (default Youden's J)" },
	{ "--specificity", C_TRAIN | C_EVAL, 1, "threshold rule: keep this specificity (default Youden's J)" },
	{ "--cam", C_PREDICT, 1, "write class activation map PNGs (heat map on the X-ray) into DIR" },
	{ "--cam-classes", C_PREDICT, 1,
	  "all | comma list of findings for --cam (default: those above their stored threshold)" },
	{ "--images", C_LOCATE, 1, "generated test images with the finding (default 100)" },
	{ "--finding", C_LOCATE, 1, "the finding to locate (default Effusion)" },
	{ "--min-ratio", C_LOCATE, 1, "fail below this many times chance (default 2)" },

	{ "--help", C_ALL, 0, "this help" },
};

static const struct { const char *name; int bit; const char *summary; } commands[] = {
	{ "train", C_TRAIN, "train a model (--data DIR or --synthetic)" },
	{ "eval", C_EVAL, "loss and per-class AUROC of a checkpoint" },
	{ "predict", C_PREDICT, "14 probabilities per image (--cam DIR: heat maps): predict --checkpoint DIR IMAGE..." },
	{ "bench", C_BENCH, "training throughput on synthetic in-memory data (images/s)" },
	{ "locate", C_LOCATE, "where CAMs point on generated images (chexnet synth's seed, --seed)" },
};

void cli_usage(FILE *f)
{
	fprintf(f, "usage: chexnet COMMAND [options]   (chexnet COMMAND --help)\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

static void command_help(FILE *f, const char *name, int bit)
{
	fprintf(f, "usage: chexnet %s [options]%s\n", name, bit == C_PREDICT ? " IMAGE..." : "");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (flags[i].commands & bit)
			fprintf(f, "  %-20s %s\n", flags[i].name, flags[i].help);
}

static void defaults(struct settings *o, const char *command)
{
	memset(o, 0, sizeof(*o));
	o->command = command;
	o->model = "densenet121";
	o->backend = "auto";
	o->batch = 16;
	o->size = 224;
	o->seed = 1;
	o->epochs = 1;
	o->split = "test";
	o->synthetic_images = 64;
	optim_config_default(&o->optim);
	o->optim.momentum = 0.9;
	o->lr = 1e-3;
	o->patience = 1;
	o->accumulate = 1;
	o->weighted_loss = 1;
	o->progress_every = 10;
	o->bootstrap = 1000;
	o->locate_images = 100;
	o->locate_finding = "Effusion";
	o->locate_min_ratio = 2;
}

static int fail(const char *msg)
{
	fprintf(stderr, "%s\n", msg);
	return -1;
}

/* Applies one flag with its value (NULL for switches). */
static int apply(struct settings *o, const char *flag, const char *v)
{
	char e[512];
	struct trainer_error err;
	double d;
	long l;
	int rc = 0;

#define LONG(f, lo, hi, dst) if (strcmp(flag, f) == 0) { \
	rc = data_arg_long(f, v, lo, hi, &l, e, sizeof(e)); dst = l; return rc ? fail(e) : 0; }
#define DBL(f, lo, hi, dst) if (strcmp(flag, f) == 0) { \
	rc = data_arg_double(f, v, lo, hi, &d, e, sizeof(e)); dst = d; return rc ? fail(e) : 0; }
#define STR(f, dst) if (strcmp(flag, f) == 0) { dst = v; return 0; }
	LONG("--batch", 1, 4096, o->batch)
	LONG("--size", 32, 4096, o->size)
	LONG("--threads", 0, 4096, o->threads)
	LONG("--steps", 1, 1L << 40, o->steps)
	LONG("--epochs", 1, 100000, o->epochs)
	LONG("--synthetic-images", 1, 1L << 24, o->synthetic_images)
	LONG("--loader-threads", 0, 1024, o->loader_threads)
	LONG("--accumulate", 1, 4096, o->accumulate)
	LONG("--save-every", 1, 1L << 40, o->save_every)
	LONG("--patience", 0, 100000, o->patience)
	LONG("--progress-every", 1, 1L << 30, o->progress_every)
	LONG("--bootstrap", 0, 1000000, o->bootstrap)
	LONG("--images", 1, 1000000, o->locate_images)
	DBL("--min-ratio", 0, 1000, o->locate_min_ratio)
	DBL("--sensitivity", 1e-9, 1, o->sensitivity)
	DBL("--specificity", 1e-9, 1, o->specificity)
	DBL("--lr", 0, 100, o->lr)
	DBL("--momentum", 0, 1, o->optim.momentum)
	DBL("--weight-decay", 0, 1, o->optim.weight_decay)
	DBL("--warmup-epochs", 0, 100000, o->warmup_epochs)
	STR("--model", o->model)
	STR("--backend", o->backend)
	STR("--out", o->out)
	STR("--data", o->data)
	STR("--init", o->init)
	STR("--checkpoint", o->checkpoint)
	STR("--resume", o->resume)
	STR("--plots", o->plots)
	STR("--cam", o->cam)
	STR("--cam-classes", o->cam_classes)
	STR("--finding", o->locate_finding)

#undef LONG
#undef DBL
#undef STR
	if (strcmp(flag, "--seed") == 0)
		return data_arg_u64(flag, v, &o->seed, e, sizeof(e)) ? fail(e) : 0;
	if (strcmp(flag, "--precision") == 0) {
		o->precision_auto = strcmp(v, "auto") == 0;
		rc = o->precision_auto ? 0 : precision_parse(v, &o->precision, &err);
	}
	else if (strcmp(flag, "--optimizer") == 0)
		rc = optim_parse(v, &o->optim.kind, &err);
	else if (strcmp(flag, "--lr-scale") == 0)
		rc = schedule_parse_scale(v, &o->lr_scale, &err);
	else if (strcmp(flag, "--split") == 0) {
		o->split = v;
		if (strcmp(v, "val") && strcmp(v, "test"))
			rc = trainer_error_set(&err, "--split: '%s': expected val or test", v);
	} else if (strcmp(flag, "--loss") == 0) {
		o->weighted_loss = strcmp(v, "weighted") == 0;
		if (!o->weighted_loss && strcmp(v, "bce"))
			rc = trainer_error_set(&err, "--loss: '%s': expected weighted or bce", v);
	} else if (strcmp(flag, "--synthetic") == 0)
		o->synthetic = 1;
	else if (strcmp(flag, "--test") == 0)
		o->test_at_end = 1;
	else if (strcmp(flag, "--choose-thresholds") == 0)
		o->choose_thresholds = 1;
	else if (strcmp(flag, "--allow-changes") == 0)
		o->allow_changes = 1;
	else if (strcmp(flag, "--shrink") == 0)
		o->shrink = 1;
	else if (strcmp(flag, "--overwrite") == 0)
		o->overwrite = 1;
	else if (strcmp(flag, "--memory-efficient") == 0)
		o->memory_efficient = 1;
	else if (strcmp(flag, "--verbose") == 0)
		o->verbose = 1;
	else if (strcmp(flag, "--quiet") == 0)
		o->progress = PROGRESS_QUIET;
	else if (strcmp(flag, "--json") == 0)
		o->progress = PROGRESS_JSON;
	if (rc)
		fprintf(stderr, "chexnet: %s\n", err.msg);
	return rc;
}

static int command_bit(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].bit;
	return 0;
}

static const struct flag *find_flag(const char *name, int bit)
{
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(flags[i].name, name) == 0 && (flags[i].commands & bit))
			return &flags[i];
	return NULL;
}

/* argv[i] ("--flag" or "--flag=value") applied; *i moves past its value.
 * 0, 1 (--help, printed) or -1 (printed). */
static int one_flag(int argc, char **argv, int *i, int bit, struct settings *o)
{
	char name[64];
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), arg);
	const struct flag *f = n < sizeof(name) ? find_flag(name, bit) : NULL;
	if (!f)
		return fprintf(stderr, "chexnet: %s: '%s': unknown option (chexnet %s --help)\n",
			       argv[0], name, argv[0]), -1;
	if (strcmp(f->name, "--help") == 0) {
		command_help(stdout, argv[0], bit);
		return 1;
	}
	if (eq && !f->takes_value)
		return fprintf(stderr, "chexnet: %s: '%s': takes no value\n", f->name, arg), -1;
	if (f->takes_value && !eq && *i + 1 >= argc)
		return fprintf(stderr, "chexnet: %s: missing value\n", f->name), -1;
	if (apply(o, f->name, !f->takes_value ? NULL : eq ? eq + 1 : argv[++*i]))
		return -1;
	o->model_given |= strcmp(f->name, "--model") == 0;
	o->size_given |= strcmp(f->name, "--size") == 0;
	return 0;
}

int cli_parse(int argc, char **argv, struct settings *o)
{
	static char **inputs;   /* predict's images in order (options may follow them) */
	int bit = command_bit(argv[0]);

	defaults(o, argv[0]);
	o->argc = argc;
	o->argv = argv;
	free(inputs);
	if (!(inputs = calloc((size_t)argc, sizeof(char *))))
		return fprintf(stderr, "chexnet: out of memory\n"), -1;
	o->inputs = inputs;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || argv[i][1] != '-') {   /* predict's images, among options */
			if (bit != C_PREDICT)
				return fprintf(stderr, "chexnet: %s: '%s': unexpected argument\n", argv[0], argv[i]), -1;
			inputs[o->input_count++] = argv[i];
			continue;
		}
		int rc = one_flag(argc, argv, &i, bit, o);
		if (rc)
			return rc;
	}
	if (strcmp(o->model, "densenet121") && strcmp(o->model, "resnet50"))
		return fprintf(stderr, "chexnet: --model: '%s': expected densenet121 or resnet50\n",
			       o->model), -1;
	struct trainer_error err = { "" };
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

int cli_apply(struct settings *o, const char *flag, const char *value)
{
	return apply(o, flag, value);
}

int cli_given(const struct settings *o, const char *flag)
{
	size_t n = strlen(flag);

	for (int i = 1; i < o->argc; i++)
		if (strncmp(o->argv[i], flag, n) == 0 && (!o->argv[i][n] || o->argv[i][n] == '='))
			return 1;
	return 0;
}
