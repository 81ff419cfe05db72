/* train/settings.h - the one table of chexnet's settings and the values
 * of one command. Each row declares a setting once: its flag, type,
 * range or choices, default, help, the commands that take it, its
 * run.json key and its resume policy. From the rows come the command
 * line's parser (--opt value and --opt=value) and help (cmd/cli.c), the
 * man page's option list (checked by test_settings.c), the settings that
 * run.json and a checkpoint record (train/run_settings.h names the
 * recorded keys and their kinds from here), --resume's defaults
 * (cmd/resume_defaults.c) and the change-of-meaning check.
 * A row may name an environment variable whose value, when set, is a
 * site's default for it (.env; option_env_defaults).
 * Rows without a flag are values a run derives (the global batch, the
 * effective learning rate, the data's fingerprint): recorded only.
 * What this is not: what a loop takes (loop/loop_config.h, built once
 * from these values by cmd/config.c), or the checks of settings against
 * each other (the commands' own files).
 */
#ifndef HVD_TRAINER_TRAIN_SETTINGS_H
#define HVD_TRAINER_TRAIN_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/choice.h"
#include "base/error.h"
#include "base/option_table.h"
#include "train/optim.h"
#include "train/progress.h"
#include "train/schedule.h"

/* The commands of the table, as bits. */
enum {
	SETTING_TRAIN = 1, SETTING_EVAL = 2, SETTING_PREDICT = 4, SETTING_BENCH = 8,
	SETTING_LOCATE = 16, SETTING_ALL = 31,
};

#define SETTINGS_MAX 96

struct settings {
	const char *command;
	int argc;                   /* the command line from the command's name on */
	char **argv;
	unsigned char given[SETTINGS_MAX]; /* by row: the command line (or recovery) set it */
	const char *model;          /* densenet121 | resnet50 */
	const char *backend;        /* ref | cpu | gpu (auto resolved by cli_parse) */
	struct backend_choice chosen; /* why auto chose it, and its warning */
	enum precision precision;   /* resolved when precision_auto (--precision auto) */
	int precision_auto;
	enum conv_algorithms conv_algorithms; /* --conv-algorithms (gpu) */
	enum gpu_layout gpu_layout;           /* --gpu-layout (gpu) */
	int cuda_graph;                       /* --cuda-graph (gpu): 0 off, 1 on */
	long batch, size, threads;
	long stored_size;           /* eval/predict/locate: the checkpoint's view (0: the source's) */
	int aspect;                 /* enum image_aspect, likewise (0: pad) */
	uint64_t seed;
	long steps, epochs;         /* steps 0 = whole epochs */
	const char *out;            /* checkpoint directory (train) */
	const char *data;           /* --data DIR */
	int synthetic;              /* --synthetic */
	long synthetic_images;      /* images in the synthetic training set */
	const char *init;           /* --init weights.safetensors */
	const char *checkpoint;     /* eval/predict: checkpoint dir */
	const char *split;          /* eval: val | test */
	struct optim_config optim;
	double lr, warmup_epochs;
	long patience;
	long accumulate;            /* --accumulate K: micro-batches per optimizer step */
	const char *resume;         /* --resume DIR: continue from DIR/last (in DIR) */
	int allow_changes;          /* --allow-changes: resume with other meaning settings */
	int relaunch;               /* --relaunch: the run in --out again, after a lost node */
	int shrink;                 /* --shrink: go on in-process after lost nodes */
	long spares;                /* --spares N: idle nodes that may take lost ones' places */
	long join;                  /* --join G: a spare's ranks join generation G's world */
	int overwrite;              /* --overwrite: replace the run in --out */
	long save_every;            /* --save-every N: OUT/last every N steps (0: epoch ends) */
	int test_at_end;            /* --test: evaluate the test split at the end (the table) */
	int lr_scale;               /* enum lr_scale */
	int weighted_loss;          /* --loss weighted (default) | bce */
	long progress_every;
	int progress;               /* enum progress_mode */
	int verbose;                /* --verbose: the runtime's start-up report on one process */
	int memory_efficient;
	long loader_threads;
	long bootstrap;             /* eval: --bootstrap N resamples for the intervals (0 = off) */
	const char *plots;          /* eval: --plots DIR */
	int choose_thresholds;      /* eval: --choose-thresholds (val split only) */
	double sensitivity;         /* train/eval: --sensitivity X threshold rule (0: not given) */
	double specificity;         /* train/eval: --specificity X threshold rule (0: not given) */
	const char *cam;            /* predict: --cam DIR, class activation map PNGs */
	const char *cam_classes;    /* predict: --cam-classes all | A,B (NULL: above threshold) */
	long locate_images;         /* locate: --images N generated test images */
	const char *locate_finding; /* locate: --finding NAME */
	double locate_min_ratio;    /* locate: --min-ratio X (times chance) */
	char **inputs;              /* predict: image paths */
	int input_count;
	long test_row;              /* the row only the tests' build has (settings.c) */
};

extern const struct setting settings_table[];
extern const int settings_count;
/* The table as the command line's parser reads it (base/option_table.h). */
extern const struct option_table settings_options;

/* The row of flag for command bit (any command: 0), of a run.json key. */
const struct setting *settings_find(const char *flag, int command);
/* The one row that sets a field of struct settings: SETTING_OF(init),
 * so that a misspelt field does not compile; NULL when no row sets it,
 * or several do (--quiet and --json set progress). */
const struct setting *settings_at(size_t offset);
#define SETTING_OF(field) settings_at(offsetof(struct settings, field))
#define SETTING_GIVEN(o, field) settings_given(o, SETTING_OF(field))
const struct setting *settings_of_key(const char *key);
int settings_index(const struct setting *row);

/* Every row's default for command (its name, kept in o, and its bit in
 * the rows: commands.h), then the site defaults the
 * environment sets (.env). 0, or -1 for a row whose default its own type
 * refuses (err; test_settings.c sees none) or a bad site default (err
 * names the variable and its value). */
int settings_init(struct settings *o, const char *command, int bit, struct trainer_error *err);
/* One row's value from text (NULL for a switch), checked by its type,
 * range and choices; marks it given when given. 0 or -1 (err names the
 * flag and the value). */
int settings_set(struct settings *o, const struct setting *row, const char *text, int given,
		 struct trainer_error *err);
/* A whole-number row's value v, as settings_set without text. */
int settings_set_long(struct settings *o, const struct setting *row, long v, int given,
		      struct trainer_error *err);
int settings_given(const struct settings *o, const struct setting *row);
/* "1" when run.json holds the row's value as a number. */
int settings_numeric(const struct setting *row);
/* Run.json's kind of key: 1 when a change alters what the run computes. */
int settings_changes_meaning(const struct setting *row);
/* What sets a recorded key: its flag or a derived value's set_by. */
const char *settings_set_by(const struct setting *row);

#endif
