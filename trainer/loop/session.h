/* loop/session.h - what every command sets up: the model and its backend
 * (printing the parameter count), and a batch source (synthetic or the
 * input pipeline's loader). What this is not: any command's loop.
 */
#ifndef HVD_TRAINER_LOOP_SESSION_H
#define HVD_TRAINER_LOOP_SESSION_H

#include "base/clock.h"
#include "backend/backend.h"
#include "train/settings.h"
#include "data/load/loader.h"
#include "base/rng.h"

struct gpu_staging;

struct session {
	struct model model;
	const struct backend_ops *ops;
	struct backend *backend;
	struct gpu_staging *staging;  /* gpu on the NCCL runtime: host collectives' device buffer */
	char backend_what[96];        /* what the backend uses here ("avx2, 8-channel
					 blocks"), "" when it says nothing */
};

/* Builds the model (params initialised from c->seed), prints
 * "chexnet: MODEL: N parameters ..." (rank 0), creates the backend; with
 * the gpu backend on a runtime that reduces device memory (NCCL), installs
 * the staging every host collective of the command goes through. 0 or -1. */
int session_open(struct session *s, const struct session_config *c);
void session_close(struct session *s);

#define SYNTHETIC_POSITIVE_RATE 0.25

struct source {
	struct data_loader *loader;   /* NULL: synthetic */
	struct batch synthetic[2];    /* owned buffers when synthetic; two, so the
					 trainer may hold the next batch too */
	int turn;                     /* the one source_next fills next */
	uint64_t seed;
	long images;                  /* synthetic set size */
	long next_image;              /* synthetic position in the epoch */
	int epoch;
	int eval;                     /* eval: last batch partial, no cut */
	int world;                    /* ranks (synthetic: each draws its own images) */
	int batch;                    /* images per batch (capacity) */
};

/* Where this rank's batches come from: rank/world and accumulation K
 * (the loader's layout), and the (epoch, step) to start at (resume). */
struct source_layout {
	int rank, world, accumulate;
	int start_epoch;
	long start_step;
};

/* The images of d for session s (its batch, side and seed). split:
 * DATA_TRAIN / DATA_VAL / DATA_TEST; layout NULL = one rank, K 1, from
 * the start. */
int source_open(struct source *src, const struct session_config *s, const struct data_config *d,
		enum data_split split, const struct source_layout *layout);
/* Images of the split over all ranks (the size of a gathered evaluation). */
size_t source_images(const struct source *src);
/* 1 batch, 0 end of epoch, -1 error (printed). *wait_s: time waited. */
int source_next(struct source *src, struct batch **b, double *wait_s);
void source_release(struct source *src, struct batch *b);
long source_batches_per_epoch(const struct source *src);
void source_close(struct source *src);

/* Per-class w+/w- from the training labels (d->dir: the train split's
 * counts, from a pack's index or a folder's label files; synthetic: the
 * known rate). 0 or -1 (printed). */
int class_weights(const struct data_config *d, float *w_pos, float *w_neg);

#endif
