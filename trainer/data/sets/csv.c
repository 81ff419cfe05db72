/* data/sets/csv.c - line reading through zlib and in-place CSV splitting.
 * What it does not do: interpret fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/sets/csv.h"
#include "data/sets/gzip_end.h"

int csv_open(struct csv_reader *r, const char *path, char *err, size_t err_bytes)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->gz = gzopen(path, "rb");
	if (!r->gz) {
		snprintf(err, err_bytes, "chexnet: '%s': %s", path,
			 errno ? strerror(errno) : "cannot open");
		return -1;
	}
	if (data_gzip_check_end(path, err, err_bytes) != 0) {
		csv_close(r);
		return -1;
	}
	return 0;
}

/* After a read that hit the end of the data: 0 at a clean end of file, -1
 * with a message for a read error or a gzip stream cut before its trailer
 * (zlib's Z_BUF_ERROR), which must never pass for a shorter file. */
static int check_end(struct csv_reader *r, long line, char *err, size_t err_bytes)
{
	int zerr = Z_OK;
	const char *msg = gzerror(r->gz, &zerr);
	if (zerr == Z_OK && gzeof(r->gz))
		return 0;
	if (zerr == Z_OK || zerr == Z_BUF_ERROR)
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: truncated file", r->path, line);
	else
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: read error: %s", r->path, line, msg);
	return -1;
}

/* One physical line into r->buf without its newline/CR: 1, 0 at EOF, -1. */
static int read_line(struct csv_reader *r, char *err, size_t err_bytes)
{
	for (;;) {
		if (!gzgets(r->gz, r->buf, sizeof(r->buf)))
			return check_end(r, r->line + 1, err, err_bytes);
		r->line++;
		if (r->line == 1 && strncmp(r->buf, "\xEF\xBB\xBF", 3) == 0)  /* UTF-8 BOM (spreadsheets) */
			memmove(r->buf, r->buf + 3, strlen(r->buf + 3) + 1);
		size_t len = strlen(r->buf);
		int newline = len && r->buf[len - 1] == '\n';
		if (!newline && len == sizeof(r->buf) - 1 && !gzeof(r->gz)) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: longer than %d bytes",
				 r->path, r->line, CSV_LINE_BYTES - 2);
			return -1;
		}
		/* a last line without newline: complete only if the stream is */
		if (!newline && check_end(r, r->line, err, err_bytes) != 0)
			return -1;
		while (len && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r'))
			r->buf[--len] = 0;
		for (size_t i = 0; i < len; i++)   /* never into a message or a name */
			if (((unsigned char)r->buf[i] < 0x20 && r->buf[i] != '\t') || r->buf[i] == 0x7f) {
				snprintf(err, err_bytes, "chexnet: '%s' line %ld: control character 0x%02x "
					 "at byte %zu", r->path, r->line, (unsigned char)r->buf[i], i + 1);
				return -1;
			}
		if (len)
			return 1;
	}
}

int csv_next_raw(struct csv_reader *r, char *err, size_t err_bytes)
{
	return read_line(r, err, err_bytes);
}

int csv_next(struct csv_reader *r, char *err, size_t err_bytes)
{
	int rc = read_line(r, err, err_bytes);
	if (rc <= 0)
		return rc;
	r->count = csv_split(r->buf, r->fields, CSV_MAX_FIELDS);
	if (r->count < 0) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: unterminated quote or more than %d fields",
			 r->path, r->line, CSV_MAX_FIELDS);
		return -1;
	}
	return 1;
}

void csv_close(struct csv_reader *r)
{
	if (r->gz)
		gzclose(r->gz);
	r->gz = NULL;
}

struct csv_reader *csv_open_new(const char *path, char *err, size_t err_bytes)
{
	struct csv_reader *r = malloc(sizeof(*r));
	if (!r) {
		snprintf(err, err_bytes, "chexnet: '%s': out of memory", path);
		return NULL;
	}
	if (csv_open(r, path, err, err_bytes) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

void csv_free(struct csv_reader *r)
{
	if (!r)
		return;
	csv_close(r);
	free(r);
}

int csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *in = line;
	for (;;) {
		if (n == max)
			return -1;
		char *out = in;
		fields[n++] = out;
		if (*in == '"') {
			in++;
			for (;;) {
				if (!*in)
					return -1;
				if (*in == '"' && in[1] == '"') {
					*out++ = '"';
					in += 2;
				} else if (*in == '"') {
					in++;
					break;
				} else {
					*out++ = *in++;
				}
			}
		}
		while (*in && *in != ',')
			*out++ = *in++;
		int more = (*in == ',');
		*out = 0;
		if (!more)
			return n;
		in++;
	}
}
