/* loop/trainer.h - the state a training run keeps on each rank (struct
 * trainer), shared by the files of the training loop: loop/train.c (the
 * steps and epochs), loop/train_setup.c (the model, optimizer and run
 * folder at the start, --resume), loop/train_save.c (the state gathered
 * and OUT/last, OUT/best written) and recover/lost_peer.c (what the ranks
 * left do after a lost peer: train_config's recovery). Only those files
 * include it.
 * What this is not: what a loop takes (train/settings.h).
 */
#ifndef HVD_TRAINER_LOOP_TRAINER_H
#define HVD_TRAINER_LOOP_TRAINER_H

#include <stdio.h>

#include "data/load/source.h"
#include "train/settings.h"
#include "loop/run_metrics.h"
#include "loop/session.h"
#include "loop/train_device.h"
#include "loop/train_report.h"
#include "train/dist.h"
#include "train/checkpoint.h"
#include "train/grad_sync.h"
#include "train/peer_lost.h"
#include "train/run_record.h"

enum epoch_result { EPOCH_FAILED = -1, EPOCH_DONE = 0, EPOCH_STEPS_REACHED, EPOCH_STOPPED };

struct trainer {
	struct train_config c;      /* the run's settings, as this rank uses them */
	struct session s;
	struct optim optim;
	struct schedule sched;
	struct train_state state;
	struct grad_sync sync;
	struct train_device device;       /* device gradients, fp16 verdict, health */
	struct train_clock clock;
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	struct batch *ahead;        /* the next micro-batch, fetched early (P4) */
	int rank, world, accumulate;
	long total_steps;           /* optimizer steps in this run */
	int stop;                   /* all ranks agreed to stop after this step */
	struct run_settings settings;  /* this session's (run.json, checkpoints) */
	struct run_change changes[2 * RUN_SETTINGS_MAX];  /* --resume: from the checkpoint's */
	int change_count;
	struct run_metrics metrics;   /* rank 0 with --out: metrics.csv, tb/ */
	int recorded;               /* run.json written by this session */
	int best_epoch;             /* 1-based, of best/ (0: none yet) */
	long steps_per_epoch;       /* optimizer steps */
	struct survivors_saved lost;   /* --resume after a lost peer: what was lost */
	struct run_record_pair membership[9];  /* run.json's record of it */
	char membership_text[3][32];
	int membership_count;
};

/* A failed collective: dist.h's line printed, -1. */
static inline int trainer_dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

/* loop/train_setup.c: the session, model, optimizer and schedule from c
 * (--init weights, --resume DIR/last), broadcast from rank 0; 0 or -1
 * (printed). */
int trainer_setup(struct trainer *t, const struct train_config *c);
/* Once the sources are open: the metrics files and run.json. */
int trainer_record(struct trainer *t, const struct source *train);
void trainer_free(struct trainer *t);

/* loop/train_save.c */
int trainer_state_to_host(struct trainer *t);
int trainer_average_bn(struct trainer *t);
int trainer_finite(const struct trainer *t);
int trainer_save_here(struct trainer *t, const char *name);
int trainer_save(struct trainer *t, const char *name);

#endif
