/* cmd/curves_png.h - the training curves of one or more runs as one PNG
 * (cairo, CURVES_W x CURVES_H): three panels against the optimizer step
 * (metrics.csv's step): training loss (solid) and validation loss
 * (dashed), mean validation AUROC, learning rate (log scale); one colour
 * per run, named in the legend.
 * What this is not: reading the runs (cmd/curves.c).
 */
#ifndef HVD_TRAINER_CURVES_PNG_H
#define HVD_TRAINER_CURVES_PNG_H

#include <stddef.h>

#include "base/error.h"
#include "train/metrics_csv.h"

#define CURVES_W 1500
#define CURVES_H 480
#define CURVES_RUNS_MAX 8

struct curves_run {
	const char *name;                /* the legend's label */
	const struct metrics_row *rows;
	size_t count;
};

/* 0, or -1 + err naming path (also without cairo in this build). */
int curves_png_write(const char *path, const struct curves_run *runs, int count,
		     struct trainer_error *err);

#endif
