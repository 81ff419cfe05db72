/* run.h - the trainer's commands on parsed options: train, eval, predict,
 * bench, locate. Each returns the process exit status (0 ok, 1 failure, 2 bad
 * usage; train: 75 = stopped by SIGTERM/SIGUSR1 after writing OUT/last,
 * continue with --resume OUT, stop_signal.h); they
 * print `chexnet: ...` errors themselves (they are called only by main).
 * What this is not: option parsing (cli.h).
 */
#ifndef HVD_TRAINER_RUN_H
#define HVD_TRAINER_RUN_H

#include "train/settings.h"

int run_train(const struct settings *o);
int run_eval(const struct settings *o);
int run_predict(const struct settings *o);
int run_bench(const struct settings *o);
int run_locate(const struct settings *o);

#endif
