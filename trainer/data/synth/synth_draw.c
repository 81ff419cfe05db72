/* data/synth/synth_draw.c - the synthetic chest image: body, two lung fields
 * with vessel-like texture and ribs, heart, noise, then one drawing per
 * finding (cardiomegaly: bigger heart; effusion: flat-topped bright base;
 * nodule/mass: small/large blobs; pneumothorax: dark textureless apex;
 * ...). Pure: pixels are a function of (seed, i, labels). Also where a
 * finding is drawn (the pixels its drawing changes), for measuring where
 * class activation maps point.
 * What it does not do: choose labels or write files (data/synth/synth.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/split.h"
#include "data/synth/synth.h"

struct rng { uint64_t s; };

static double rng_unit(struct rng *r)
{
	r->s = data_hash64(r->s);
	return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_range(struct rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unit(r); }

static double rng_normal(struct rng *r)
{
	double u = rng_unit(r) + 1e-12, v = rng_unit(r);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Normalised ellipse distance: < 1 inside. */
static double ell(double x, double y, double cx, double cy, double rx, double ry)
{
	double dx = (x - cx) / rx, dy = (y - cy) / ry;
	return dx * dx + dy * dy;
}

static double smooth_inside(double d, double soft) { return d < 1 ? 1 : exp(-(d - 1) / soft); }

struct blob { double x, y, r, amp; int sharp, finding; };

struct scene {
	double lung_cx[2], lung_cy, lung_rx, lung_ry;
	double heart_r, lung_level, texture_amp;
	double base_heart_r, base_lung_level, base_lung_ry;  /* before the findings */
	double wave[4][3];          /* vessel texture: kx, ky, phase */
	struct blob blobs[24];
	int blob_count;
	int effusion_side, ptx_side;
	double effusion_top, ptx_depth;
	int edema, fibrosis, pleural, hernia, atelectasis_side;
};

static void add_blob(struct scene *s, double x, double y, double r, double amp, int sharp)
{
	if (s->blob_count < 24)
		s->blobs[s->blob_count++] = (struct blob){ x, y, r, amp, sharp, -1 };
}

/* A point inside lung `side` (0 left, 1 right) in [0,1] coordinates. */
static void lung_point(const struct scene *s, struct rng *r, int side, double *x, double *y)
{
	double a = rng_range(r, 0, 6.283185307179586), d = sqrt(rng_unit(r)) * 0.75;
	*x = s->lung_cx[side] + d * s->lung_rx * cos(a);
	*y = s->lung_cy + d * s->lung_ry * sin(a);
}

/* Blobs added since `first` belong to finding c. */
static void tag_blobs(struct scene *s, int first, int c)
{
	for (int k = first; k < s->blob_count; k++)
		s->blobs[k].finding = c;
}

static void plan_findings(struct scene *s, struct rng *r, uint16_t labels)
{
	double x, y;
	int side = rng_unit(r) < 0.5, first;
	if (labels & (1u << 0)) {  /* Atelectasis: dense band low in one lung */
		s->atelectasis_side = side;
		add_blob(s, s->lung_cx[side], s->lung_cy + 0.55 * s->lung_ry, 0.07, 45, 0);
		tag_blobs(s, s->blob_count - 1, 0);
	}
	if (labels & (1u << 1))    /* Cardiomegaly */
		s->heart_r = rng_range(r, 0.19, 0.23);
	if (labels & (1u << 2)) {  /* Effusion: flat fluid level at a base */
		s->effusion_side = (int)(rng_unit(r) < 0.5);
		s->effusion_top = s->lung_cy + rng_range(r, 0.35, 0.6) * s->lung_ry;
	}
	first = s->blob_count;
	for (int k = 0; (labels & (1u << 3)) && k < 7; k++) {  /* Infiltration: patchy */
		lung_point(s, r, k & 1, &x, &y);
		add_blob(s, x, y, rng_range(r, 0.03, 0.05), 22, 0);
	}
	tag_blobs(s, first, 3);
	if (labels & (1u << 4)) {  /* Mass: one large sharp blob */
		lung_point(s, r, side, &x, &y);
		add_blob(s, x, y, rng_range(r, 0.06, 0.08), 70, 1);
		tag_blobs(s, s->blob_count - 1, 4);
	}
	first = s->blob_count;
	for (int k = 0; (labels & (1u << 5)) && k < 3; k++) {  /* Nodule: small sharp blobs */
		lung_point(s, r, rng_unit(r) < 0.5, &x, &y);
		add_blob(s, x, y, rng_range(r, 0.015, 0.022), 75, 1);
	}
	tag_blobs(s, first, 5);
	if (labels & (1u << 6)) {  /* Pneumonia: large fuzzy opacity */
		lung_point(s, r, side, &x, &y);
		add_blob(s, x, y, rng_range(r, 0.09, 0.12), 35, 0);
		tag_blobs(s, s->blob_count - 1, 6);
	}
	if (labels & (1u << 7)) {  /* Pneumothorax: dark apex without texture */
		s->ptx_side = side;
		s->ptx_depth = rng_range(r, 0.35, 0.5);
	}
	if (labels & (1u << 8)) {  /* Consolidation: dense homogeneous lobe */
		add_blob(s, s->lung_cx[!side], s->lung_cy + rng_range(r, -0.1, 0.15), 0.09, 55, 1);
		tag_blobs(s, s->blob_count - 1, 8);
	}
	s->edema = (labels >> 9) & 1;
	if (labels & (1u << 10)) { /* Emphysema: hyperlucent, taller lungs */
		s->lung_level -= 28;
		s->lung_ry *= 1.08;
	}
	s->fibrosis = (labels >> 11) & 1;
	s->pleural = (labels >> 12) & 1;
	s->hernia = (labels >> 13) & 1;
}

static void plan_scene(struct scene *s, struct rng *r, uint16_t labels)
{
	memset(s, 0, sizeof(*s));
	double spread = rng_range(r, 0.15, 0.18);
	s->lung_cx[0] = 0.5 - spread;
	s->lung_cx[1] = 0.5 + spread;
	s->lung_cy = rng_range(r, 0.45, 0.5);
	s->lung_rx = rng_range(r, 0.12, 0.14);
	s->lung_ry = rng_range(r, 0.27, 0.31);
	s->heart_r = rng_range(r, 0.11, 0.14);
	s->lung_level = rng_range(r, 60, 80);
	s->texture_amp = rng_range(r, 6, 10);
	s->base_heart_r = s->heart_r;
	s->base_lung_level = s->lung_level;
	s->base_lung_ry = s->lung_ry;
	s->effusion_side = s->ptx_side = s->atelectasis_side = -1;
	for (int k = 0; k < 4; k++) {
		s->wave[k][0] = rng_range(r, 20, 45);
		s->wave[k][1] = rng_range(r, 20, 45);
		s->wave[k][2] = rng_range(r, 0, 6.283185307179586);
	}
	plan_findings(s, r, labels);
}

static double lung_pixel(const struct scene *s, int side, double x, double y)
{
	double v = s->lung_level;
	for (int k = 0; k < 4; k++)
		v += s->texture_amp * 0.5 * sin(s->wave[k][0] * x + s->wave[k][1] * y + s->wave[k][2]);
	v += 10 * pow(fabs(sin(y * 40.0 + 0.6 * x)), 8);  /* ribs */
	if (s->edema)
		v += 32 * exp(-ell(x, y, s->lung_cx[side] + (side ? -0.06 : 0.06), s->lung_cy, 0.12, 0.14));
	if (s->fibrosis && y > s->lung_cy)
		v += 18 * (fabs(sin(x * 140)) > 0.85 || fabs(sin(y * 140)) > 0.85);
	if (s->pleural && ell(x, y, s->lung_cx[side], s->lung_cy, s->lung_rx, s->lung_ry) > 0.72)
		v += 50;
	if (side == s->effusion_side && y > s->effusion_top)
		v = 165;
	if (side == s->ptx_side && y < s->lung_cy - (1 - s->ptx_depth) * s->lung_ry)
		v = 22;
	return v;
}

static double scene_pixel(const struct scene *s, double x, double y)
{
	double v = 25 + 125 * smooth_inside(ell(x, y, 0.5, 0.52, 0.42, 0.48), 0.05);
	for (int side = 0; side < 2; side++) {
		double d = ell(x, y, s->lung_cx[side], s->lung_cy, s->lung_rx, s->lung_ry);
		if (d < 1)
			v = lung_pixel(s, side, x, y);
	}
	double h = ell(x, y, 0.5 + 0.03, s->lung_cy + 0.12, s->heart_r, s->heart_r * 0.85);
	v += 95 * smooth_inside(h, 0.08) * (v < 120);
	for (int k = 0; k < s->blob_count; k++) {
		const struct blob *b = &s->blobs[k];
		double d = ell(x, y, b->x, b->y, b->r, b->r);
		v += b->amp * (b->sharp ? (d < 1) : exp(-d));
	}
	if (s->hernia) {
		double d = ell(x, y, 0.5, s->lung_cy + 0.28, 0.07, 0.05);
		v += d < 1 ? (ell(x, y, 0.5, s->lung_cy + 0.26, 0.03, 0.02) < 1 ? -80 : 60) : 0;
	}
	return v;
}

void data_synth_image(uint64_t seed, size_t i, uint16_t labels, int size, uint8_t *pixels)
{
	struct rng r = { data_hash64(seed ^ 0x5EED) ^ data_hash64(i) };
	struct scene s;
	plan_scene(&s, &r, labels);
	for (int py = 0; py < size; py++)
		for (int px = 0; px < size; px++) {
			double v = scene_pixel(&s, (px + 0.5) / size, (py + 0.5) / size) + 6 * rng_normal(&r);
			pixels[(size_t)py * size + px] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v));
		}
}

/* The scene without finding c's drawing (its other findings kept). */
static void scene_without(struct scene *s, int c)
{
	for (int k = 0; k < s->blob_count; k++)
		if (s->blobs[k].finding == c)
			s->blobs[k].amp = 0;
	if (c == 1)
		s->heart_r = s->base_heart_r;
	if (c == 2)
		s->effusion_side = -1;
	if (c == 7)
		s->ptx_side = -1;
	if (c == 10) {
		s->lung_level = s->base_lung_level;
		s->lung_ry = s->base_lung_ry;
	}
	s->edema &= c != 9;
	s->fibrosis &= c != 11;
	s->pleural &= c != 12;
	s->hernia &= c != 13;
}

void data_synth_finding_mask(uint64_t seed, size_t i, uint16_t labels, int finding, int size,
			     uint8_t *mask)
{
	struct rng r = { data_hash64(seed ^ 0x5EED) ^ data_hash64(i) };
	struct scene with, without;
	plan_scene(&with, &r, labels);
	without = with;
	scene_without(&without, finding);
	for (int py = 0; py < size; py++)
		for (int px = 0; px < size; px++) {
			double x = (px + 0.5) / size, y = (py + 0.5) / size;
			double d = scene_pixel(&with, x, y) - scene_pixel(&without, x, y);
			mask[(size_t)py * size + px] = fabs(d) > DATA_SYNTH_MASK_LEVEL;
		}
}
