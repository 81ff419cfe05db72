/* loop/train.h - `chexnet train`'s loop on a started runtime: set-up
 * (model, backend, optimizer, resume), epochs of steps with validation and
 * checkpoints, the test split at the end. Returns the exit status (0, 1,
 * or CHEXNET_EXIT_PREEMPTED after a stop request).
 * What this is not: option checks, signal handlers or the runtime's
 * start and end (cmd/train.c).
 */
#ifndef HVD_TRAINER_LOOP_TRAIN_H
#define HVD_TRAINER_LOOP_TRAIN_H

#include "train/settings.h"

int train_run(const struct train_config *c);

#endif
