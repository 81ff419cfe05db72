/* progress.h - the training progress line, every N steps and at epoch
 * end: epoch, step/steps, loss, lr, images/s, share of time waiting for
 * data, ETA. Three modes: text (stderr-style one line, starting with the
 * ISO-8601 UTC time when the stream is not a terminal), JSON lines (one
 * object per line, for scripts), quiet (nothing).
 * JSON fields: "event" ("step" or "epoch"), "epoch", "step", "steps",
 * "loss", "lr", "images_per_s", "data_wait_pct", "eta_s".
 * What this is not: the final AUROC table (auroc.h).
 */
#ifndef HVD_TRAINER_PROGRESS_H
#define HVD_TRAINER_PROGRESS_H

#include <stdio.h>

enum progress_mode { PROGRESS_TEXT, PROGRESS_JSON, PROGRESS_QUIET };

struct progress_point {
	int epoch_end;          /* 1 at the end of an epoch */
	int epoch, epochs;      /* epoch is 1-based for display */
	long step, steps;       /* step within the epoch, 1-based; steps per epoch */
	double loss;            /* mean over the steps since the last line */
	double lr;
	double images_per_s;
	double data_wait_pct;   /* 0..100 */
	double eta_s;           /* seconds to the end of training */
};

void progress_print(FILE *f, enum progress_mode mode, const struct progress_point *p);

#endif
