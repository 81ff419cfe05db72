/* train/metrics_csv.h - OUT/metrics.csv, a training run's series as one
 * CSV file (the header line, then one row per progress line or
 * validation):
 *   time,epoch,step,images,loss,lr,images_per_s,data_wait,allreduce_wait,
 *   val_loss,val_mean_auroc,val_auroc_Atelectasis,...,val_auroc_Hernia
 * time: ISO-8601 UTC with milliseconds; epoch 1-based; step: optimizer
 * steps since the run began; images: step x global batch. A training row
 * fills loss..allreduce_wait (data and allreduce wait as shares of step
 * time, 0..1), a validation row val_loss and the AUROCs (empty where a
 * class has none); the other cells are empty. Numbers are written
 * "%.9g". Reading is strict (the exact header, 25 cells a row, whole
 * numbers, a row of one kind, steps never decreasing): anything else is
 * one line naming the file and the line.
 * What this is not: when rows are written (loop/run_metrics.h).
 */
#ifndef HVD_TRAINER_METRICS_CSV_H
#define HVD_TRAINER_METRICS_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "base/batch.h"
#include "base/error.h"

#define METRICS_FILE "metrics.csv"
#define METRICS_COLUMNS (11 + CHEXNET_CLASSES)
#define METRICS_MAX_BYTES (256L << 20)

enum metrics_kind { METRICS_TRAIN, METRICS_VAL };

/* One row; a value not present is NAN. */
struct metrics_row {
	char time[32];
	enum metrics_kind kind;
	int epoch;
	long step, images;
	double loss, lr, images_per_s, data_wait, allreduce_wait;
	double val_loss, val_mean_auroc, val_auroc[CHEXNET_CLASSES];
};

void metrics_csv_header(FILE *f);
/* The row as one line; cells[METRICS_COLUMNS][32] gets each cell's text
 * (what a reader of the file gets back, e.g. for the event files). */
void metrics_csv_row(FILE *f, const struct metrics_row *r, char cells[][32]);

/* The whole file: *rows (malloc'd, *count of them). 0 or -1 (err). */
int metrics_csv_read(const char *path, struct metrics_row **rows, size_t *count,
		     struct trainer_error *err);
/* metrics_csv_read, except that bytes after the last newline (a last row
 * cut short by a short write) are not an error: *torn_bytes says how many
 * were left out (0: none); a file of no whole line reads as no rows. */
int metrics_csv_read_torn(const char *path, struct metrics_row **rows, size_t *count,
			  size_t *torn_bytes, struct trainer_error *err);

#endif
