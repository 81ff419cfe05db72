/* plot_png.c - ROC small multiples, reliability diagram and the AUROC bar
 * chart with cairo. The one file that wraps cairo for plots (#ifdef
 * HAVE_CAIRO); without it every entry point says so. What it does not do:
 * compute statistics (it draws eval_report's numbers and curves).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/plot_png.h"

#ifdef HAVE_CAIRO
#include <cairo.h>

#include "cmd/png_canvas.h"

#include "eval/auroc.h"
#include "data/sets/labels.h"
#include "eval/curves.h"
#include "cmd/eval_report.h"

int plot_png_available(void)
{
	return 1;
}

struct box { double x, y, w, h; };   /* plot area in pixels, y down */

static double px(const struct box *b, double v) { return b->x + v * b->w; }
static double py(const struct box *b, double v) { return b->y + b->h - v * b->h; }

/* Frame, 0/0.5/1 ticks with labels, the diagonal. */
static void unit_axes(cairo_t *cr, const struct box *b, double font, int diagonal)
{
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, b->x, b->y, b->w, b->h);
	cairo_stroke(cr);
	for (int t = 0; t <= 2; t++) {
		char s[8];
		snprintf(s, sizeof(s), "%g", t / 2.0);
		png_canvas_text(cr, px(b, t / 2.0), b->y + b->h + font + 2, font, 1, s);
		png_canvas_text(cr, b->x - font * 1.9, py(b, t / 2.0) + font / 3, font, 0, s);
	}
	if (diagonal) {
		double dash[] = { 4, 3 };
		cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, px(b, 0), py(b, 0));
		cairo_line_to(cr, px(b, 1), py(b, 1));
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
	}
}

static void roc_panel(cairo_t *cr, const struct eval_report *r, int c, const struct box *b,
		      float *fpr, float *tpr)
{
	char title[96];
	size_t n = eval_roc_points(r->probs + c, r->labels + c, r->images, CHEXNET_CLASSES, fpr, tpr);

	unit_axes(cr, b, 10, 1);
	if (isnan(r->ci[c].lo))
		snprintf(title, sizeof(title), "%s %.3f", data_class_names[c], r->auroc[c]);
	else
		snprintf(title, sizeof(title), "%s %.3f [%.3f, %.3f]", data_class_names[c],
			 r->auroc[c], r->ci[c].lo, r->ci[c].hi);
	cairo_set_source_rgb(cr, 0, 0, 0);
	png_canvas_text(cr, b->x + b->w / 2, b->y - 8, 12, 1, n ? title : data_class_names[c]);
	cairo_set_source_rgb(cr, 0.12, 0.35, 0.75);
	cairo_set_line_width(cr, 2);
	for (size_t i = 0; i < n; i++)
		(i ? cairo_line_to : cairo_move_to)(cr, px(b, fpr[i]), py(b, tpr[i]));
	cairo_stroke(cr);
	if (r->have_thresholds && !isnan(r->at[c].sensitivity) && !isnan(r->at[c].specificity)) {
		cairo_set_source_rgb(cr, 0.85, 0.15, 0.1);
		cairo_arc(cr, px(b, 1 - r->at[c].specificity), py(b, r->at[c].sensitivity), 5, 0, 2 * M_PI);
		cairo_fill(cr);
	}
}

static void draw_roc(cairo_t *cr, const struct eval_report *r, float *fpr, float *tpr)
{
	const double cell = PLOT_ROC_SIDE / 4.0;
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		struct box b = { (c % 4) * cell + 40, (c / 4) * cell + 34, cell - 62, cell - 72 };
		roc_panel(cr, r, c, &b, fpr, tpr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	png_canvas_text(cr, 2 * cell + cell / 2 + 20, 3 * cell + 60, 14, 0,
		"ROC: sensitivity (y) against 1 - specificity (x)");
	png_canvas_text(cr, 2 * cell + cell / 2 + 20, 3 * cell + 84, 12, 0,
		"title: finding, AUROC [95% patient bootstrap CI]");
	png_canvas_text(cr, 2 * cell + cell / 2 + 20, 3 * cell + 106, 12, 0,
		r->have_thresholds ? "red dot: the stored operating threshold" : "no stored thresholds");
}

static void draw_reliability(cairo_t *cr, const struct eval_report *r)
{
	struct box b = { 70, 50, PLOT_RELIABILITY_SIDE - 110, PLOT_RELIABILITY_SIDE - 120 };
	char title[96];

	unit_axes(cr, &b, 12, 1);
	cairo_set_source_rgb(cr, 0, 0, 0);
	snprintf(title, sizeof(title), "Reliability, all findings pooled: ECE %.4f", r->ece_all);
	png_canvas_text(cr, b.x + b.w / 2, 32, 16, 1, title);
	png_canvas_text(cr, b.x + b.w / 2, b.y + b.h + 42, 13, 1, "mean predicted probability (10 equal-mass bins)");
	cairo_save(cr);
	cairo_translate(cr, 22, b.y + b.h / 2);
	cairo_rotate(cr, -M_PI / 2);
	png_canvas_text(cr, 0, 0, 13, 1, "observed frequency");
	cairo_restore(cr);
	cairo_set_source_rgb(cr, 0.12, 0.35, 0.75);
	cairo_set_line_width(cr, 2);
	for (int i = 0; i < EVAL_ECE_BINS && !isnan(r->ece_all); i++)
		(i ? cairo_line_to : cairo_move_to)(cr, px(&b, r->bins[i].mean_p), py(&b, r->bins[i].mean_y));
	cairo_stroke(cr);
	for (int i = 0; i < EVAL_ECE_BINS && !isnan(r->ece_all); i++) {
		cairo_arc(cr, px(&b, r->bins[i].mean_p), py(&b, r->bins[i].mean_y), 5, 0, 2 * M_PI);
		cairo_fill(cr);
	}
}

/* Horizontal bars: ours (blue, whisker = CI), CheXNet's (orange tick). */
static void draw_auroc(cairo_t *cr, const struct eval_report *r)
{
	struct box b = { 170, 50, PLOT_AUROC_W - 200, PLOT_AUROC_H - 100 };
	const double lo = 0.4, row = b.h / CHEXNET_CLASSES;
#define AX(v) (b.x + ((v) - lo) / (1 - lo) * b.w)
	cairo_set_source_rgb(cr, 0, 0, 0);
	png_canvas_text(cr, b.x + b.w / 2, 30, 16, 1, "AUROC per finding (bar, 95% CI) and CheXNet's (orange)");
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		double y = b.y + c * row;
		cairo_set_source_rgb(cr, 0, 0, 0);
		png_canvas_text(cr, 10, y + row * 0.65, 12, 0, data_class_names[c]);
		if (!isnan(r->auroc[c])) {
			cairo_set_source_rgb(cr, 0.55, 0.7, 0.9);
			cairo_rectangle(cr, AX(lo), y + row * 0.2, AX(fmax(r->auroc[c], lo)) - AX(lo), row * 0.6);
			cairo_fill(cr);
		}
		if (!isnan(r->ci[c].lo)) {
			cairo_set_source_rgb(cr, 0.1, 0.2, 0.5);
			cairo_set_line_width(cr, 2);
			cairo_move_to(cr, AX(fmax(r->ci[c].lo, lo)), y + row / 2);
			cairo_line_to(cr, AX(fmax(r->ci[c].hi, lo)), y + row / 2);
			cairo_stroke(cr);
		}
		cairo_set_source_rgb(cr, 0.95, 0.5, 0.05);
		cairo_rectangle(cr, AX(auroc_chexnet_paper[c]) - 2, y + row * 0.1, 4, row * 0.8);
		cairo_fill(cr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, b.x, b.y, b.w, b.h);
	cairo_stroke(cr);
	for (int t = 0; t <= 5; t++) {
		char s[8];
		snprintf(s, sizeof(s), "%.1f", lo + t * 0.1);
		png_canvas_text(cr, AX(lo + t * 0.1), b.y + b.h + 18, 12, 1, s);
	}
#undef AX
}

enum plot_kind { PLOT_ROC, PLOT_RELIABILITY, PLOT_AUROC };

static int write_plot(const char *dir, const char *name, int w, int h, enum plot_kind kind,
		      const struct eval_report *r, float *fpr, float *tpr,
		      struct trainer_error *err)
{
	char path[4200];
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
	cairo_t *cr = cairo_create(s);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	if (kind == PLOT_ROC)
		draw_roc(cr, r, fpr, tpr);
	else if (kind == PLOT_RELIABILITY)
		draw_reliability(cr, r);
	else
		draw_auroc(cr, r);
	cairo_destroy(cr);
	char why[128];
	int rc = png_canvas_write(s, path, why, sizeof(why));
	cairo_surface_destroy(s);
	return rc == 0 ? 0 : trainer_error_set(err, "--plots: '%s': %s", path, why);
}

int plot_png_report(const char *dir, const struct eval_report *r, struct trainer_error *err)
{
	float *fpr = malloc((r->images + 1) * sizeof(float)), *tpr = malloc((r->images + 1) * sizeof(float));
	int rc = !fpr || !tpr ? trainer_error_set(err, "--plots: out of memory") : 0;

	if (rc == 0)
		rc = write_plot(dir, "roc.png", PLOT_ROC_SIDE, PLOT_ROC_SIDE, PLOT_ROC, r, fpr, tpr, err);
	if (rc == 0)
		rc = write_plot(dir, "reliability.png", PLOT_RELIABILITY_SIDE, PLOT_RELIABILITY_SIDE,
				PLOT_RELIABILITY, r, fpr, tpr, err);
	if (rc == 0)
		rc = write_plot(dir, "auroc.png", PLOT_AUROC_W, PLOT_AUROC_H, PLOT_AUROC, r, fpr, tpr, err);
	free(fpr);
	free(tpr);
	return rc;
}

#else

int plot_png_available(void)
{
	return 0;
}

int plot_png_report(const char *dir, const struct eval_report *r, struct trainer_error *err)
{
	(void)r;
	return trainer_error_set(err, "--plots: '%s': built without cairo (libcairo2-dev)", dir);
}

#endif
