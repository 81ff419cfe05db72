/* train/settings.h - every setting of `chexnet train | eval | predict |
 * bench | locate` as the command line gives it (struct settings),
 * filled by cmd/cli.c's parser; cmd/config.c turns it into the loops'
 * configs (loop/loop_config.h). Only cmd/ sees it.
 * What this is not: parsing, defaults or help (cmd/cli.h), or what a
 * loop takes (loop/loop_config.h).
 */
#ifndef HVD_TRAINER_TRAIN_SETTINGS_H
#define HVD_TRAINER_TRAIN_SETTINGS_H

#include <stdint.h>

#include "backend/backend.h"
#include "backend/choice.h"
#include "train/optim.h"
#include "train/progress.h"
#include "train/schedule.h"

struct settings {
	const char *command;
	const char *model;          /* densenet121 | resnet50 */
	int model_given, size_given; /* --model, --size on the command line (else the
				      * checkpoint's, for eval/predict/locate) */
	const char *backend;        /* ref | cpu | gpu (auto resolved by cli_parse) */
	struct backend_choice chosen; /* why auto chose it, and its warning */
	enum precision precision;   /* resolved when precision_auto (--precision auto) */
	int precision_auto;
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
	int shrink;                 /* --shrink: go on in-process after lost nodes */
	int overwrite;              /* --overwrite: replace the run in --out */
	int argc;                   /* the command line from the command's name on */
	char **argv;
	long save_every;            /* --save-every N: OUT/last every N steps (0: epoch ends) */
	int test_at_end;            /* --test: evaluate the test split at the end (the table) */
	enum lr_scale lr_scale;
	int weighted_loss;          /* --loss weighted (default) | bce */
	long progress_every;
	enum progress_mode progress;
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
};

#endif
