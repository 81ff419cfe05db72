/* plot_png.h - the evaluation's pictures, drawn with cairo (image surface,
 * PNG output, real fonts): roc.png (14 small multiples, AUROC and its 95%
 * interval in each title, the operating point marked when thresholds are
 * known), reliability.png (observed rate against mean predicted
 * probability per equal-mass bin, every finding pooled, with the ECE) and
 * auroc.png (per-finding AUROC bars with interval whiskers next to the
 * CheXNet paper's values).
 * What this is not: the numbers (cmd/eval_report.h).
 */
#ifndef HVD_TRAINER_PLOT_PNG_H
#define HVD_TRAINER_PLOT_PNG_H

#include "base/error.h"

struct eval_report;

#define PLOT_ROC_SIDE 1000        /* roc.png: 1000 x 1000 */
#define PLOT_RELIABILITY_SIDE 600 /* reliability.png: 600 x 600 */
#define PLOT_AUROC_W 900          /* auroc.png: 900 x 560 */
#define PLOT_AUROC_H 560

/* 1 when this build has cairo. */
int plot_png_available(void);

/* Writes the three PNGs into dir (which exists). 0 or -1 + err naming
 * the file. */
int plot_png_report(const char *dir, const struct eval_report *r, struct trainer_error *err);

#endif
