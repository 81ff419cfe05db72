/* cmd/png_file.h - a cairo surface written as a PNG file whole
 * (base/whole_file.h): a fresh temporary beside PATH, renamed over PATH
 * only when PATH is missing or a regular file of this user's. A link in
 * PATH's place, or another user's file, is left as it is.
 * What it is not: drawing (plot_png.c, cam_png.c, curves_png.c).
 */
#ifndef HVD_TRAINER_CMD_PNG_FILE_H
#define HVD_TRAINER_CMD_PNG_FILE_H

#include <stddef.h>
#include <cairo.h>

/* 0, or -1 with why filled (one phrase, no file name). */
int png_file_write(cairo_surface_t *s, const char *path, char *why, size_t why_len);

#endif
