/* cmd/curves_png.c - draws training curves with cairo (curves_png.h);
 * #ifdef HAVE_CAIRO as plot_png.c. What it does not do: read files.
 */
#include <math.h>
#include <stdio.h>

#include "cmd/curves_png.h"

#ifdef HAVE_CAIRO
#include <cairo.h>

#include "cmd/png_canvas.h"

enum series { LOSS, VAL_LOSS, AUROC, LR };

struct panel {
	double x, y, w, h;          /* pixels */
	double x0, x1, y0, y1;      /* data range (y of LR: log10) */
	const char *title;
	int log_y;
};

static const double colours[CURVES_RUNS_MAX][3] = {
	{ 0.12, 0.35, 0.75 }, { 0.85, 0.33, 0.1 }, { 0.2, 0.6, 0.2 }, { 0.55, 0.25, 0.65 },
	{ 0.1, 0.6, 0.65 }, { 0.75, 0.6, 0.1 }, { 0.45, 0.45, 0.45 }, { 0.9, 0.2, 0.55 },
};

/* The value of series s in row r, or NAN. */
static double value(const struct metrics_row *r, enum series s)
{
	switch (s) {
	case LOSS: return r->kind == METRICS_TRAIN ? r->loss : NAN;
	case VAL_LOSS: return r->kind == METRICS_VAL ? r->val_loss : NAN;
	case AUROC: return r->kind == METRICS_VAL ? r->val_mean_auroc : NAN;
	default: return r->kind == METRICS_TRAIN && r->lr > 0 ? log10(r->lr) : NAN;
	}
}

/* The ranges of series a (and b, may equal a) over every run. */
static void ranges(struct panel *p, const struct curves_run *runs, int count, enum series a,
		   enum series b)
{
	p->x0 = 0, p->x1 = 1, p->y0 = INFINITY, p->y1 = -INFINITY;
	for (int i = 0; i < count; i++)
		for (size_t k = 0; k < runs[i].count; k++) {
			const struct metrics_row *r = &runs[i].rows[k];
			p->x1 = r->step > p->x1 ? r->step : p->x1;
			for (int s = 0; s < 2; s++) {
				double v = value(r, s ? b : a);
				if (!isnan(v))
					p->y0 = fmin(p->y0, v), p->y1 = fmax(p->y1, v);
			}
		}
	if (!(p->y1 >= p->y0))
		p->y0 = 0, p->y1 = 1;
	double pad = p->y1 > p->y0 ? (p->y1 - p->y0) * 0.06 : 0.5;
	p->y0 -= pad, p->y1 += pad;
}

static double px(const struct panel *p, double v) { return p->x + (v - p->x0) / (p->x1 - p->x0) * p->w; }
static double py(const struct panel *p, double v) { return p->y + p->h - (v - p->y0) / (p->y1 - p->y0) * p->h; }

static void axes(cairo_t *cr, const struct panel *p)
{
	char s[32];

	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, p->x, p->y, p->w, p->h);
	cairo_stroke(cr);
	png_canvas_text(cr, p->x + p->w / 2, p->y - 10, 15, 1, p->title);
	for (int t = 0; t <= 4; t++) {
		double xv = p->x0 + (p->x1 - p->x0) * t / 4, yv = p->y0 + (p->y1 - p->y0) * t / 4;
		snprintf(s, sizeof(s), "%.0f", xv);
		png_canvas_text(cr, px(p, xv), p->y + p->h + 16, 11, 1, s);
		snprintf(s, sizeof(s), "%.3g", p->log_y ? pow(10, yv) : yv);
		png_canvas_text(cr, p->x - 52, py(p, yv) + 4, 11, 0, s);
	}
	png_canvas_text(cr, p->x + p->w / 2, p->y + p->h + 36, 12, 1, "optimizer step");
}

/* One run's series s in panel p (dashed: validation loss in the loss panel). */
static void line(cairo_t *cr, const struct panel *p, const struct curves_run *run, int colour,
		 enum series s)
{
	const double dash[] = { 6, 4 };
	int started = 0;

	cairo_set_source_rgb(cr, colours[colour][0], colours[colour][1], colours[colour][2]);
	cairo_set_line_width(cr, 2);
	cairo_set_dash(cr, dash, s == VAL_LOSS ? 2 : 0, 0);
	for (size_t k = 0; k < run->count; k++) {
		double v = value(&run->rows[k], s);
		if (isnan(v))
			continue;
		(started++ ? cairo_line_to : cairo_move_to)(cr, px(p, (double)run->rows[k].step),
							     py(p, v));
	}
	cairo_stroke(cr);
	for (size_t k = 0; (s == AUROC || s == VAL_LOSS) && k < run->count; k++) {
		double v = value(&run->rows[k], s);
		if (!isnan(v)) {
			cairo_arc(cr, px(p, (double)run->rows[k].step), py(p, v), 3.5, 0, 2 * M_PI);
			cairo_fill(cr);
		}
	}
	cairo_set_dash(cr, NULL, 0, 0);
}

static void draw(cairo_t *cr, const struct curves_run *runs, int count)
{
	const double pw = CURVES_W / 3.0;
	struct panel p[3] = {
		{ .title = "loss: training (solid), validation (dashed)" },
		{ .title = "mean validation AUROC" },
		{ .title = "learning rate", .log_y = 1 },
	};
	static const enum series first[3] = { LOSS, AUROC, LR }, second[3] = { VAL_LOSS, AUROC, LR };

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	for (int i = 0; i < 3; i++) {
		p[i].x = i * pw + 70, p[i].y = 40, p[i].w = pw - 100, p[i].h = CURVES_H - 140;
		ranges(&p[i], runs, count, first[i], second[i]);
		axes(cr, &p[i]);
		for (int r = 0; r < count; r++) {
			line(cr, &p[i], &runs[r], r, first[i]);
			if (second[i] != first[i])
				line(cr, &p[i], &runs[r], r, second[i]);
		}
	}
	for (int r = 0; r < count; r++) {
		double x = 70 + r * (CURVES_W - 100) / (double)count;
		cairo_set_source_rgb(cr, colours[r][0], colours[r][1], colours[r][2]);
		cairo_rectangle(cr, x, CURVES_H - 34, 24, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		png_canvas_text(cr, x + 30, CURVES_H - 24, 13, 0, runs[r].name);
	}
}

int curves_png_write(const char *path, const struct curves_run *runs, int count,
		     struct trainer_error *err)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, CURVES_W, CURVES_H);
	cairo_t *cr = cairo_create(s);

	draw(cr, runs, count > CURVES_RUNS_MAX ? CURVES_RUNS_MAX : count);
	cairo_destroy(cr);
	char why[128];
	int rc = png_canvas_write(s, path, why, sizeof(why));
	cairo_surface_destroy(s);
	return rc == 0 ? 0 : trainer_error_set(err, "curves: --out: '%s': %s", path, why);
}

#else

int curves_png_write(const char *path, const struct curves_run *runs, int count,
		     struct trainer_error *err)
{
	(void)runs;
	(void)count;
	return trainer_error_set(err, "curves: '%s': this chexnet was built without cairo "
				 "(libcairo2-dev): run make deps and make", path);
}

#endif
