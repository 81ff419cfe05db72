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
 * site's default for it (.env; option_env_defaults). A row with a flag
 * and a key that train takes is also a recipe's key (cmd/config_file.h);
 * the flags without a key act on this command line only (--resume,
 * --overwrite, --config ...).
 * Rows without a flag are values a run derives (the global batch, the
 * effective learning rate, the data's fingerprint): recorded only.
 * The values are what the loops take, in small typed parts, so that no
 * value is copied by hand:
 *   session_config  the model and the backend it runs on
 *   data_config     where images come from and how they are stored (the
 *                   batch, side and seed are the session's)
 *   train_config    `chexnet train`: both above, the schedule, the run dir
 *   eval_config     `chexnet eval`: both above, the checkpoint and split
 * struct settings holds a train_config, which every command's session
 * and data come from, and the values only commands use; cmd/ alone names
 * it, a loop takes its configs.
 * What this is not: the checks of settings against each other (the
 * commands' own files).
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

struct session_config {
	const char *model;          /* densenet121 | resnet50 */
	const char *backend;        /* ref | cpu | gpu (auto already resolved) */
	struct backend_choice chosen; /* why auto chose it, and its warning */
	enum precision precision;
	int precision_auto;         /* precision was `auto`: say why it is this one */
	long batch, size, threads;  /* largest batch, input side, compute threads (0: all);
				       the data's batches and view have this batch and size */
	uint64_t seed;              /* the parameters' initialisation, the data's order
				       and augmentation */
	int memory_efficient;
	enum conv_algorithms conv_algorithms;
	enum gpu_layout gpu_layout;
	int cuda_graph;             /* the training step as one CUDA graph (gpu) */
	int params_given;           /* a checkpoint or rank 0 gives every parameter:
				       no initialisation (zeros until then) */
};

struct data_config {
	const char *dir;            /* a pack or a data set's folder; NULL: synthetic */
	long synthetic_images;      /* the synthetic training split's size */
	long loader_threads;        /* 0: the loader's default */
	long stored_size;           /* side before the crop; 0: a pack's own, a folder's 8/7 size */
	int aspect;                 /* enum image_aspect (data/image/image_resize.h): a folder's
				       non-square images: pad (default) | squash */
};

struct evaluation;
struct run_settings;

struct trainer;
struct survivors_saved;

/* Recovery after a lost peer, which lives above the loops (cmd/train.c
 * gives it): the loop calls it, never names it. */
struct train_recovery {
	/* rank 0 at start-up, before the first collective: no stale marker
	 * in out; 0, or -1 with errno */
	int (*reset)(const char *out);
	/* --resume: what dir's summary of a lost peer says (train/peer_lost.h):
	 * 1 with *s filled, 0 when there is none, -1 (a line) */
	int (*read_saved)(const char *dir, struct survivors_saved *s);
	/* training or validation broken by a lost peer: the exit status */
	int (*survive)(struct trainer *t);
};

struct train_config {
	struct session_config session;
	struct data_config data;
	long steps, epochs;         /* steps 0: whole epochs */
	const char *out;            /* the run directory; NULL: nothing written */
	const char *init;           /* weights to start from, or NULL */
	const char *resume;         /* continue from resume/last, or NULL */
	int allow_changes, overwrite;
	int shrink;                 /* after lost nodes: the ranks left may go on in-process */
	long spares;                /* idle nodes whose ranks may join in lost nodes' places */
	int argc;                   /* the command line, recorded in OUT/run.json */
	char **argv;
	const struct run_settings *record; /* the settings given, as run.json records them */
	const char *config;         /* --config FILE: run.json records it and its SHA-256 */
	const char *config_sha256;
	const struct run_settings *config_derived; /* the derived values FILE names: each
						      checked against this run's, never set */
	struct optim_config optim;
	double lr, warmup_epochs;
	enum lr_scale lr_scale;
	long patience, accumulate;  /* plateau epochs; micro-batches per step */
	long micro_batches_kept;    /* ranks x accumulate recovery keeps to (0: this session's) */
	long save_every;            /* OUT/last every N steps (0: at epoch ends) */
	int test_at_end, weighted_loss;
	long progress_every;
	enum progress_mode progress;
	double sensitivity, specificity;  /* the threshold rule (0: not asked) */
	long bootstrap;             /* --test: resamples for test.json's intervals */
	/* --test: writes OUT/test.json from the test split (cmd/ gives it: the
	 * report of `eval --json`); NULL: none. 0 or -1 (printed). */
	int (*write_test)(const char *out, const struct evaluation *ev, int bootstrap, uint64_t seed);
	const struct train_recovery *recovery;  /* NULL: a lost peer fails the run */
};

struct eval_config {
	struct session_config session;
	struct data_config data;
	const char *checkpoint;
	const char *split;          /* val | test */
	int weighted_loss;
};

/* The commands of the table, as bits. */
enum {
	SETTING_TRAIN = 1, SETTING_EVAL = 2, SETTING_PREDICT = 4, SETTING_BENCH = 8,
	SETTING_LOCATE = 16, SETTING_ALL = 31,
};

#define SETTINGS_MAX 96

struct settings {
	const char *command;
	unsigned char given[SETTINGS_MAX]; /* by row: the command line (or recovery) set it */
	/* train's whole config; every command's session and data; argc and
	 * argv: the command line from the command's name on */
	struct train_config train;
	int synthetic;              /* --synthetic */
	const char *checkpoint;     /* eval/predict: checkpoint dir */
	const char *split;          /* eval: val | test */
	int relaunch;               /* --relaunch: the run in --out again, after a lost node */
	int print_config;           /* --print-config: the effective settings as a recipe */
	long join;                  /* --join G: a spare's ranks join generation G's world */
	int verbose;                /* --verbose: the runtime's start-up report on one process */
	const char *plots;          /* eval: --plots DIR */
	int choose_thresholds;      /* eval: --choose-thresholds (val split only) */
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
/* The one row that sets a field of struct settings: SETTING_OF(train.init),
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
/* A switch row on or off (off only clears the value the row itself
 * stores: --quiet false leaves --json's); marks it given when given. */
void settings_set_switch(struct settings *o, const struct setting *row, int on, int given);
/* A whole-number row's value v, as settings_set without text. */
int settings_set_long(struct settings *o, const struct setting *row, long v, int given,
		      struct trainer_error *err);
int settings_given(const struct settings *o, const struct setting *row);
/* 1 when v, a row's value as run.json records it, says the row was not
 * set: the empty text or zero of a row without a default (no --init,
 * whole epochs); --resume and a recipe take nothing from it. */
int settings_recorded_unset(const struct setting *row, const char *v);
/* "1" when run.json holds the row's value as a number. */
int settings_numeric(const struct setting *row);
/* Run.json's kind of key: 1 when a change alters what the run computes. */
int settings_changes_meaning(const struct setting *row);
/* What sets a recorded key: its flag or a derived value's set_by. */
const char *settings_set_by(const struct setting *row);

#endif
