/* loop/run_name.h - the run folder of a `chexnet train` given neither
 * --out nor --resume: runs/YYYYMMDD-HHMMSS (local time) under the
 * working directory, as PyTorch Lightning's lightning_logs/version_N, so
 * a run is always kept. Rank 0 makes runs/ and then the folder with
 * mkdir, which is atomic: a name another run took gets -2, -3, ...; the
 * name is broadcast to every rank.
 * What this is not: the checks of an existing folder (loop/run_files.h).
 */
#ifndef HVD_TRAINER_LOOP_RUN_NAME_H
#define HVD_TRAINER_LOOP_RUN_NAME_H

#include <stddef.h>

#define RUN_NAME_MAX 64

/* Collective, after dist_init. out[RUN_NAME_MAX]. 0 or -1 (printed). */
int run_name_new(char *out);

#endif
