/* loop/loop_config.h - what the loops take, in small typed parts, built by
 * cmd/ from the command line (cmd/config.c) or by a test:
 *   session_config  the model and the backend it runs on
 *   data_config     where images come from and how they are stored (the
 *                   batch, side and seed are the session's)
 *   train_config    `chexnet train`: both above, the schedule, the run dir
 *   eval_config     `chexnet eval`: both above, the checkpoint and split
 * What this is not: a command's settings (train/settings.h), parsing or
 * defaults (cmd/cli.c), or checks of settings against each other.
 */
#ifndef HVD_TRAINER_LOOP_LOOP_CONFIG_H
#define HVD_TRAINER_LOOP_LOOP_CONFIG_H

#include <stdint.h>

#include "backend/backend.h"
#include "backend/choice.h"
#include "data/image/image_resize.h"
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
	enum image_aspect aspect;   /* a folder's non-square images: pad (default) | squash */
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

#endif
