/* cam_png.c - the CAM overlay picture with cairo (cam_png.h). The X-ray
 * and the heat map are two image surfaces painted one over the other
 * (the X-ray enlarged with nearest-neighbour, so its pixels stay
 * registered to the map), the titles are cairo text. Without cairo every
 * entry point says so.
 * What it does not do: compute the CAM (eval/cam.c) or pick findings.
 */
#include <math.h>
#include <stdlib.h>

#include "cmd/cam_png.h"
#include "eval/cam.h"

int cam_png_scale(int side)
{
	return side >= CAM_PNG_MIN_SIDE ? 1 : (CAM_PNG_MIN_SIDE + side - 1) / side;
}

#ifdef HAVE_CAIRO
#include <cairo.h>

#include "cmd/png_canvas.h"

int cam_png_available(void)
{
	return 1;
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* "hot" (black-red-yellow-white) over the top of the map: values below
 * CAM_PNG_FLOOR of the range stay transparent, then colour and opacity
 * (up to 0.65) rise together. Premultiplied ARGB. */
#define CAM_PNG_FLOOR 0.35

static uint32_t heat_pixel(float v)
{
	double t = clamp01((v - CAM_PNG_FLOOR) / (1 - CAM_PNG_FLOOR)), a = 0.65 * t;
	double r = clamp01(3 * t), g = clamp01(3 * t - 1), b = clamp01(3 * t - 2);
	return (uint32_t)lround(255 * a) << 24 | (uint32_t)lround(255 * a * r) << 16 |
	       (uint32_t)lround(255 * a * g) << 8 | (uint32_t)lround(255 * a * b);
}

/* The X-ray as an RGB24 surface of side x side. */
static cairo_surface_t *xray_surface(const uint8_t *image, int side)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, side, side);
	cairo_surface_flush(s);
	unsigned char *data = cairo_image_surface_get_data(s);
	int stride = cairo_image_surface_get_stride(s);
	for (int y = 0; data && y < side; y++) {
		uint32_t *row = (uint32_t *)(data + (size_t)y * stride);
		for (int x = 0; x < side; x++) {
			uint32_t g = image[(size_t)y * side + x];
			row[x] = g << 16 | g << 8 | g;
		}
	}
	cairo_surface_mark_dirty(s);
	return s;
}

/* The normalised CAM upsampled to d x d as an ARGB32 surface, or NULL. */
static cairo_surface_t *heat_surface(const float *cam, int h, int w, int d)
{
	float *up = malloc((size_t)d * d * sizeof(float));
	if (!up)
		return NULL;
	cam_upsample(cam, h, w, d, up);
	cam_normalise(up, (size_t)d * d);
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, d, d);
	cairo_surface_flush(s);
	unsigned char *data = cairo_image_surface_get_data(s);
	int stride = cairo_image_surface_get_stride(s);
	for (int y = 0; data && y < d; y++) {
		uint32_t *row = (uint32_t *)(data + (size_t)y * stride);
		for (int x = 0; x < d; x++)
			row[x] = heat_pixel(up[(size_t)y * d + x]);
	}
	cairo_surface_mark_dirty(s);
	free(up);
	return s;
}

static void draw(cairo_t *cr, cairo_surface_t *xray, cairo_surface_t *heat, int k,
		 const char *title, const char *subtitle)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_save(cr);
	cairo_translate(cr, 0, CAM_PNG_TITLE_H);
	cairo_scale(cr, k, k);
	cairo_set_source_surface(cr, xray, 0, 0);
	cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
	cairo_paint(cr);
	cairo_restore(cr);
	cairo_set_source_surface(cr, heat, 0, CAM_PNG_TITLE_H);
	cairo_paint(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	png_canvas_text(cr, 8, 22, 17, 0, title);
	png_canvas_text(cr, 8, 41, 12, 0, subtitle);
}

int cam_png_write(const char *path, const uint8_t *image, int side, const float *cam, int h,
		  int w, const char *title, const char *subtitle, struct trainer_error *err)
{
	int k = cam_png_scale(side), d = k * side;
	cairo_surface_t *heat = heat_surface(cam, h, w, d);
	if (!heat)
		return trainer_error_set(err, "--cam: '%s': out of memory", path);
	cairo_surface_t *xray = xray_surface(image, side);
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, d, d + CAM_PNG_TITLE_H);
	cairo_t *cr = cairo_create(s);
	draw(cr, xray, heat, k, title, subtitle);
	cairo_destroy(cr);
	char why[128];
	int rc = png_canvas_write(s, path, why, sizeof(why));
	cairo_surface_destroy(s);
	cairo_surface_destroy(xray);
	cairo_surface_destroy(heat);
	return rc == 0 ? 0 : trainer_error_set(err, "--cam: '%s': %s", path, why);
}

#else

int cam_png_available(void)
{
	return 0;
}

int cam_png_write(const char *path, const uint8_t *image, int side, const float *cam, int h,
		  int w, const char *title, const char *subtitle, struct trainer_error *err)
{
	return trainer_error_set(err, "--cam: '%s': built without cairo (libcairo2-dev)", path);
}

#endif
