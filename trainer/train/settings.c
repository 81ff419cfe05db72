/* train/settings.c - the one table of chexnet's settings (settings.h):
 * one row per setting, and what the trainer adds to base/option_table.h
 * for them: the given marks, --precision auto, the lookups by key.
 * What it does not do: walk a command line (base/option_table.c, for
 * cmd/cli.c) or read a file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	  .fallback = "densenet121", .offset = OFF(train.session.model),
	  .help = "the network (eval, predict, locate: the checkpoint's)" },
	{ "--backend", "backend", SETTING_TEXT, SETTING_ALL, RESUME_RECORDED,
	  .choices = "auto|ref|cpu|gpu", .fallback = "auto", .offset = OFF(train.session.backend),
	  .help = "auto chooses gpu when a CUDA device is usable, else cpu, else ref" },
	{ NULL, "backend_detail", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--backend" },
	{ NULL, "runtime_backend", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "HVD_BACKEND" },
	{ "--precision", "precision", SETTING_CHOICE, SETTING_ALL, RESUME_FREE,
	  .choices = "fp32|bf16|fp16|tf32|auto", .fallback = "fp32", .offset = OFF(train.session.precision),
	  .help = "fp32: exact on every backend, GPU included; tf32: fp32 the hardware may "
		  "approximate (TF32 tensor cores, Winograd); auto: bf16 on a GPU or a CPU with "
		  "native bf16 kernels, else fp32" },
	{ "--conv-algorithms", "conv_algorithms", SETTING_CHOICE, SETTING_ALL, RESUME_FREE,
	  .choices = "timed|heuristic|timed-any", .fallback = "timed", .env = "CHEXNET_CONV_ALGORITHMS",
	  .offset = OFF(train.session.conv_algorithms),
	  .help = "timed: the GPU's cuDNN convolution algorithms timed once per shape by one rank, "
		  "deterministic ones only, cached in $XDG_CACHE_HOME/chexnet; heuristic: cuDNN's "
		  "heuristics, deterministic ones only; timed-any: timed, non-deterministic allowed "
		  "(--resume then not bit-identical); no effect on cpu and ref" },
	{ "--gpu-layout", "gpu_layout", SETTING_CHOICE, SETTING_ALL, RESUME_FREE,
	  .choices = "nchw|nhwc", .fallback = "nhwc", .env = "CHEXNET_GPU_LAYOUT",
	  .offset = OFF(train.session.gpu_layout),
	  .help = "the GPU's activations and gradients channels-first (nchw) or channels-last "
		  "(nhwc, conv filters KRSC: cuDNN's fast tensor-core layout); checkpoints keep "
		  "torchvision's layout either way; no effect on cpu and ref" },
	{ "--cuda-graph", "cuda_graph", SETTING_CHOICE, T | B, RESUME_FREE, .choices = "off|on",
	  .fallback = "off", .env = "CHEXNET_CUDA_GRAPH", .offset = OFF(train.session.cuda_graph),
	  .help = "on: the GPU's training step (forward, loss, backward, optimizer; with more "
		  "ranks up to backward, NCCL after it) captured once per batch shape as one CUDA "
		  "graph and replayed; --accumulate 1, not fp16; no effect on cpu and ref" },
	{ "--size", "size", SETTING_LONG, SETTING_ALL, RESUME_MEANING, 32, 4096, .fallback = "224",
	  .offset = OFF(train.session.size), .help = "image side in pixels (eval, predict, locate: the checkpoint's)" },
	{ NULL, "stored_size", SETTING_LONG, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "pixels", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "aspect", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--data" },
	{ NULL, "crop", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "--size" },
	{ NULL, "normalise", SETTING_TEXT, T, RESUME_RECORDED, .set_by = "the build" },
	{ "--batch", "batch", SETTING_LONG, SETTING_ALL, RESUME_FREE, 1, 4096, .fallback = "16",
	  .offset = OFF(train.session.batch), .help = "images per step and rank" },
	{ NULL, "ranks", SETTING_LONG, T, RESUME_RECORDED, .set_by = "the rank count" },
	{ "--accumulate", "accumulate", SETTING_LONG, T, RESUME_FREE, 1, 4096, .fallback = "1",
	  .offset = OFF(train.accumulate), .help = "K micro-batches per optimizer step, one allreduce" },
	{ NULL, "global_batch", SETTING_LONG, T, RESUME_MEANING,
	  .set_by = "--batch, --accumulate, the rank count" },
	{ NULL, "micro_batches_kept", SETTING_LONG, T, RESUME_RECORDED,
	  .set_by = "the first session's ranks x --accumulate, or a given --accumulate" },
	{ "--optimizer", "optimizer", SETTING_CHOICE, T, RESUME_MEANING, .choices = "adam|sgd",
	  .fallback = "adam", .offset = OFF(train.optim.kind), .help = "the optimizer" },
	{ "--momentum", "momentum", SETTING_DOUBLE, T, RESUME_MEANING, 0, 1, .fallback = "0.9",
	  .offset = OFF(train.optim.momentum), .help = "SGD momentum" },
	{ "--weight-decay", "weight_decay", SETTING_DOUBLE, T, RESUME_MEANING, 0, 1, .fallback = "0",
	  .offset = OFF(train.optim.weight_decay), .help = "L2 weight decay" },
	{ "--lr", "lr", SETTING_DOUBLE, T, RESUME_FREE, 0, 100, .fallback = "1e-3", .offset = OFF(train.lr),
	  .help = "learning rate" },
	{ "--lr-scale", "lr_scale", SETTING_CHOICE, T, RESUME_FREE, .choices = "none|linear",
	  .fallback = "none", .offset = OFF(train.lr_scale),
	  .help = "linear: multiply the LR by the micro-batches of a step (ranks x --accumulate)" },
	{ NULL, "lr_effective", SETTING_DOUBLE, T, RESUME_MEANING,
	  .set_by = "--lr, --lr-scale, the global batch" },
	{ "--warmup-epochs", "warmup_epochs", SETTING_DOUBLE, T, RESUME_MEANING, 0, 100000,
	  .fallback = "0", .offset = OFF(train.warmup_epochs), .help = "linear LR warm-up epochs" },
	{ "--patience", "patience", SETTING_LONG, T, RESUME_FREE, 0, 100000, .fallback = "1",
	  .offset = OFF(train.patience), .help = "epochs without val improvement before LR x0.1" },
	{ "--loss", "loss", SETTING_CHOICE, T | E, RESUME_MEANING, .choices = "bce|weighted",
	  .fallback = "weighted", .offset = OFF(train.weighted_loss),
	  .help = "weighted: w+=N/(P+N), w-=P/(P+N)" },
	{ "--seed", "seed", SETTING_U64, SETTING_ALL, RESUME_MEANING, .fallback = "1",
	  .offset = OFF(train.session.seed), .help = "random seed" },
	{ "--data", "data", SETTING_TEXT, T | E, RESUME_SESSION, .offset = OFF(train.data.dir),
	  .help = "data directory (packed or NIH/generic layout)" },
	{ "--synthetic", NULL, SETTING_SWITCH, T | E, RESUME_SESSION, .offset = OFF(synthetic), .on = 1,
	  .help = "random in-memory images and labels" },
	{ NULL, "data_fingerprint", SETTING_TEXT, T, RESUME_MEANING,
	  .set_by = "--data, --synthetic-images" },
	{ "--synthetic-images", "synthetic_images", SETTING_LONG, T | E, RESUME_SESSION, 1, 1L << 24,
	  .fallback = "64", .offset = OFF(train.data.synthetic_images), .help = "size of the synthetic set" },
	{ "--init", "init", SETTING_TEXT, T, RESUME_RECORDED, .offset = OFF(train.init),
	  .help = "start from a torchvision state dict (.safetensors)" },
	{ "--memory-efficient", "memory_efficient", SETTING_SWITCH, T | B, RESUME_FREE,
	  .offset = OFF(train.session.memory_efficient), .on = 1, .help = "recompute BN+ReLU in backward" },
	{ "--epochs", "epochs", SETTING_LONG, T, RESUME_FREE, 1, 100000, .fallback = "1",
	  .offset = OFF(train.epochs), .help = "epochs" },
	{ "--steps", "steps", SETTING_LONG, T | B, RESUME_FREE, 1, BIG, .offset = OFF(train.steps),
	  .help = "stop after N steps (train: per run; default: whole epochs)" },
	{ "--save-every", "save_every", SETTING_LONG, T, RESUME_FREE, 1, BIG,
	  .offset = OFF(train.save_every), .help = "also write OUT/last every N steps (default: epoch ends)" },
	{ "--threads", "threads", SETTING_LONG, SETTING_ALL, RESUME_FREE, 0, 4096,
	  .offset = OFF(train.session.threads), .help = "compute threads (default: allowed CPUs)" },
	{ "--loader-threads", "loader_threads", SETTING_LONG, T | E, RESUME_FREE, 0, 1024,
	  .offset = OFF(train.data.loader_threads), .help = "input pipeline workers (default: CPUs/4)" },
	{ "--progress-every", "progress_every", SETTING_LONG, T | B, RESUME_FREE, 1, 1L << 30,
	  .fallback = "10", .offset = OFF(train.progress_every), .help = "steps between progress lines" },
	{ "--out", "out", SETTING_TEXT, T, RESUME_SESSION, .offset = OFF(train.out),
	  .help = "run directory: run.json, metrics, checkpoints (last/, best/); "
		  "default runs/YYYYMMDD-HHMMSS" },
	{ "--checkpoint", NULL, SETTING_TEXT, E | P | L, RESUME_SESSION, .offset = OFF(checkpoint),
	  .help = "checkpoint directory to evaluate" },
	{ "--split", NULL, SETTING_TEXT, E, RESUME_SESSION, .choices = "val|test", .fallback = "test",
	  .offset = OFF(split), .help = "the split to evaluate" },
	{ "--resume", NULL, SETTING_TEXT, T, RESUME_SESSION, .offset = OFF(train.resume),
	  .help = "continue from DIR/last (params, optimizer, schedule, data position); "
		  "settings from DIR/run.json" },
	{ "--relaunch", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(relaunch), .on = 1,
	  .help = "the command line that started the run in --out, given again after a lost node: "
		  "--resume there without --init or --overwrite, at the micro-batches per step the "
		  "run keeps (contrib/chexnet-elastic)" },
	{ "--allow-changes", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(train.allow_changes),
	  .on = 1, .help = "--resume with settings that change the run's meaning (recorded)" },
	{ "--shrink", "shrink", SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(train.shrink), .on = 1,
	  .help = "after lost nodes the ranks left go on in their own processes (docs/lost-rank.md)" },
	{ "--spares", "spares", SETTING_LONG, T, RESUME_SESSION, 0, 4096, .offset = OFF(train.spares),
	  .help = "with --shrink: N idle nodes of the job whose ranks may join in lost nodes' places" },
	{ "--join", NULL, SETTING_LONG, T, RESUME_SESSION, 1, 1e15, .offset = OFF(join),
	  .help = "a spare node's ranks join the world of generation G of --resume DIR "
		  "(contrib/chexnet-elastic)" },
	{ "--config", NULL, SETTING_TEXT, T, RESUME_SESSION, .offset = OFF(train.config),
	  .help = "a recipe: settings by their run.json keys in YAML (key: value a line), or a "
		  "run.json; the command line wins over it, it over --resume's record "
		  "(trainer/TRAINING.md, \"A recipe\")" },
	{ "--print-config", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(print_config),
	  .on = 1, .help = "print the effective settings as a recipe for --config and stop" },
	{ "--overwrite", NULL, SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(train.overwrite), .on = 1,
	  .help = "replace the run in --out (its own files; others renamed NAME.foreign-N, "
		  "only beside a run.json of chexnet's)" },
	{ "--test", "test", SETTING_SWITCH, T, RESUME_SESSION, .offset = OFF(train.test_at_end), .on = 1,
	  .help = "evaluate the test split at the end (the AUROC table, OUT/test.json)" },
	{ "--quiet", "quiet", SETTING_SWITCH, T | B, RESUME_SESSION, .offset = OFF(train.progress),
	  .on = PROGRESS_QUIET, .help = "no progress lines" },
	{ "--verbose", "verbose", SETTING_SWITCH, SETTING_ALL, RESUME_SESSION, .offset = OFF(verbose),
	  .on = 1, .help = "the runtime's start-up report (settings, rank table) on one process too" },
	{ "--json", "json", SETTING_SWITCH, T | B | E | P, RESUME_SESSION, .offset = OFF(train.progress),
	  .on = PROGRESS_JSON, .help = "JSON on stdout (train/bench: progress lines, tables to "
				      "stderr; eval/predict: the results)" },
	{ "--bootstrap", "bootstrap", SETTING_LONG, T | E, RESUME_SESSION, 0, 1000000, .fallback = "1000",
	  .offset = OFF(train.bootstrap),
	  .help = "resamples of patients for the 95% intervals (0 off; train: test.json)" },
	{ "--plots", NULL, SETTING_TEXT, E, RESUME_SESSION, .offset = OFF(plots),
	  .help = "write ROC, reliability and AUROC-vs-CheXNet PNGs into DIR" },
	{ "--choose-thresholds", NULL, SETTING_SWITCH, E, RESUME_SESSION,
	  .offset = OFF(choose_thresholds), .on = 1,
	  .help = "choose operating thresholds on --split val, store them" },
	{ "--sensitivity", "sensitivity", SETTING_DOUBLE, T | E, RESUME_SESSION, 1e-9, 1,
	  .offset = OFF(train.sensitivity), .help = "threshold rule: reach this sensitivity (default Youden's J)" },
	{ "--specificity", "specificity", SETTING_DOUBLE, T | E, RESUME_SESSION, 1e-9, 1,
	  .offset = OFF(train.specificity), .help = "threshold rule: keep this specificity (default Youden's J)" },
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
#ifdef SETTINGS_TEST_ROW   /* only the tests' build (trainer/module.mk) */
	{ "--test-row", "test_row", SETTING_LONG, T, RESUME_MEANING, 1, 9, .fallback = "3",
	  .offset = OFF(test_row), .help = "a setting only the tests' build has" },
#endif
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
_Static_assert(sizeof(enum precision) == sizeof(int) && sizeof(enum optim_kind) == sizeof(int) &&
	       sizeof(enum conv_algorithms) == sizeof(int) && sizeof(enum gpu_layout) == sizeof(int) &&
	       sizeof(enum lr_scale) == sizeof(int) && sizeof(enum progress_mode) == sizeof(int),
	       "CHOICE rows store an int");

static int set_row(void *o, const struct setting *row, const char *text, int given,
		   struct trainer_error *err)
{
	return settings_set(o, row, text, given, err);
}

const struct option_table settings_options = {
	settings_table, (int)(sizeof(settings_table) / sizeof(settings_table[0])), set_row,
};

const struct setting *settings_find(const char *flag, int command)
{
	return option_find(&settings_options, flag, command);
}

const struct setting *settings_at(size_t offset)
{
	const struct setting *found = NULL;

	for (int i = 0; i < settings_count; i++)
		if (settings_table[i].flag && settings_table[i].offset == offset) {
			if (found)
				return NULL;
			found = &settings_table[i];
		}
	return found;
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

/* The precision row's "auto": resolved by the backend (cli_parse). */
static void precision_auto(struct settings *o, const struct setting *row, const char *text)
{
	if (row->offset != offsetof(struct settings, train.session.precision))
		return;
	o->train.session.precision_auto = strcmp(text, "auto") == 0;
	if (o->train.session.precision_auto)
		o->train.session.precision = PRECISION_FP32;
}

int settings_set(struct settings *o, const struct setting *row, const char *text, int given,
		 struct trainer_error *err)
{
	if (option_set(o, row, text, err))
		return -1;
	if (text)
		precision_auto(o, row, text);
	if (given)
		o->given[settings_index(row)] = 1;
	return 0;
}

int settings_set_long(struct settings *o, const struct setting *row, long v, int given,
		      struct trainer_error *err)
{
	if (option_set_long(o, row, v, err))
		return -1;
	if (given)
		o->given[settings_index(row)] = 1;
	return 0;
}

void settings_set_switch(struct settings *o, const struct setting *row, int on, int given)
{
	int *v = (int *)((char *)o + row->offset);

	if (on)
		*v = row->on;
	else if (*v == row->on)
		*v = 0;
	if (given)
		o->given[settings_index(row)] = 1;
}

int settings_given(const struct settings *o, const struct setting *row)
{
	return row && o->given[settings_index(row)];
}

int settings_init(struct settings *o, const char *command, int bit, struct trainer_error *err)
{
	memset(o, 0, sizeof(*o));
	o->command = command;
	optim_config_default(&o->train.optim);
	if (option_defaults(&settings_options, 0, o, err))
		return -1;
	return option_env_defaults(&settings_options, bit, o, err);
}

int settings_recorded_unset(const struct setting *row, const char *v)
{
	return !row->fallback && (!v[0] || strcmp(v, "0") == 0);
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
