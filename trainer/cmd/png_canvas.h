/* cmd/png_canvas.h - what the three pictures (plot_png.c, cam_png.c,
 * curves_png.c) share: text in DejaVu Sans, and the surface written as a
 * PNG file whole (base/whole_file.h): a fresh temporary beside PATH,
 * renamed over PATH only when PATH is missing or a regular file of this
 * user's. A link in PATH's place, or another user's file, is left as it is.
 * What it is not: any picture's layout.
 */
#ifndef HVD_TRAINER_CMD_PNG_CANVAS_H
#define HVD_TRAINER_CMD_PNG_CANVAS_H

#include <stddef.h>
#include <cairo.h>

/* s at (x, y) in size-point type; centred on x when centre is 1. */
void png_canvas_text(cairo_t *cr, double x, double y, double size, int centre, const char *s);

/* 0, or -1 with why filled (one phrase, no file name). */
int png_canvas_write(cairo_surface_t *s, const char *path, char *why, size_t why_len);

#endif
