/* checkpoint.h - a checkpoint is ONE directory holding
 *   model.safetensors      every torchvision state_dict key of the model
 *                          (PyTorch loads it with load_state_dict(strict=True))
 *   training.safetensors   optimizer moments ("optim.m", "optim.v") and the
 *                          training state in __metadata__ (epoch, step, best
 *                          validation loss, RNG, schedule, optimizer)
 * model.safetensors' metadata also holds "model" and the run's settings
 * ("setting.KEY", checkpoint_settings.h).
 * written under a temporary name, fsynced, and renamed into place (an
 * existing directory is swapped out atomically, then removed).
 * Loading checks every key and shape and names the first bad one.
 * What this is not: the file format (safetensors.h).
 */
#ifndef HVD_TRAINER_CHECKPOINT_H
#define HVD_TRAINER_CHECKPOINT_H

#include "base/error.h"
#include "model/model.h"
#include "train/optim.h"
#include "base/rng.h"
#include "train/schedule.h"
#include "train/run_settings.h"

struct train_state {
	int epoch;               /* next epoch to run */
	long step;               /* next optimizer step within it */
	double best_val_loss;    /* INFINITY before any validation */
	struct rng rng;
	int validate_first;      /* 1: a stop came during the validation of epoch - 1:
				  * redo it (and the best choice) before epoch */
};

/* optim/sched may be NULL (then no training.safetensors is written). */
int checkpoint_save(const char *dir, const struct model *m, const struct optim *o,
		    const struct schedule *sched, const struct train_state *st,
		    struct trainer_error *err);
/* The same with the run's settings in model.safetensors' metadata
 * (checkpoint_settings.h); settings may be NULL. */
int checkpoint_save_run(const char *dir, const struct model *m, const struct optim *o,
			const struct schedule *sched, const struct train_state *st,
			const struct run_settings *settings, struct trainer_error *err);

enum checkpoint_load_mode {
	CHECKPOINT_STRICT,    /* every key, every shape */
	CHECKPOINT_INIT,      /* --init: strips "module.", drops a classifier of another
				 class count (message in note), tolerates a missing
				 num_batches_tracked (old checkpoints, as torch does) */
};

/* path: a checkpoint directory or a .safetensors file. note (may be NULL,
 * 256 bytes) gets a one-line remark when something was dropped. */
int checkpoint_load_model(const char *path, struct model *m, enum checkpoint_load_mode mode,
			  char *note, struct trainer_error *err);
/* From dir/training.safetensors into an optimizer set up for this model. */
int checkpoint_load_training(const char *dir, struct optim *o, struct schedule *sched,
			     struct train_state *st, struct trainer_error *err);

#endif
