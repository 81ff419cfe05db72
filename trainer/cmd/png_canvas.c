/* cmd/png_canvas.c - see png_canvas.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/whole_file.h"
#include "cmd/png_canvas.h"

void png_canvas_text(cairo_t *cr, double x, double y, double size, int centre, const char *s)
{
	cairo_text_extents_t e;

	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, centre ? x - e.width / 2 - e.x_bearing : x, y);
	cairo_show_text(cr, s);
}

static cairo_status_t to_stream(void *f, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, f) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int png_canvas_write(cairo_surface_t *s, const char *path, char *why, size_t why_len)
{
	char tmp[4400];
	FILE *f = whole_file_stream(path, tmp, sizeof(tmp));

	if (!f) {
		snprintf(why, why_len, "%s", strerror(errno));
		return -1;
	}
	cairo_status_t st = cairo_surface_write_to_png_stream(s, to_stream, f);
	if (st != CAIRO_STATUS_SUCCESS) {
		fclose(f);
		whole_file_abandon(-1, tmp);
		snprintf(why, why_len, "%s", cairo_status_to_string(st));
		return -1;
	}
	if (whole_file_stream_commit(f, tmp, path) == 0)
		return 0;
	snprintf(why, why_len, "%s", whole_file_why(errno));
	return -1;
}
