/* data/sets/gzip_end.c - refuses bytes after the last gzip member (see
 * data/sets/gzip_end.h): inflates each member, discarding the output, and
 * looks at what follows its trailer.
 * What it does not do: check anything of a file that is not gzip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/sets/gzip_end.h"

struct gz_walk {
	FILE *f;
	z_stream z;
	uint8_t in[1 << 16], out[1 << 16];
	long long consumed;     /* file offset of z.next_in */
};

/* Refills the input when empty: 1 with data, 0 at end of file. */
static int walk_fill(struct gz_walk *w)
{
	if (w->z.avail_in)
		return 1;
	size_t n = fread(w->in, 1, sizeof(w->in), w->f);
	w->z.next_in = w->in;
	w->z.avail_in = (uInt)n;
	return n > 0;
}

/* Inflates one member: 0 at its end, 1 when it is cut short or corrupt
 * (the line reader reports that). */
static int walk_member(struct gz_walk *w)
{
	for (;;) {
		if (!walk_fill(w))
			return 1;
		uInt before = w->z.avail_in;
		w->z.next_out = w->out;
		w->z.avail_out = sizeof(w->out);
		int rc = inflate(&w->z, Z_NO_FLUSH);
		w->consumed += before - w->z.avail_in;
		if (rc == Z_STREAM_END)
			return 0;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return 1;
	}
}

/* After a member: 1 if another member starts, 0 at end of file, -1 if
 * other bytes follow. */
static int walk_next(struct gz_walk *w)
{
	if (!walk_fill(w))
		return 0;
	if (w->z.avail_in < 2) {   /* the magic may straddle a refill */
		memmove(w->in, w->z.next_in, w->z.avail_in);
		w->z.avail_in += (uInt)fread(w->in + w->z.avail_in, 1, sizeof(w->in) - w->z.avail_in, w->f);
		w->z.next_in = w->in;
	}
	return w->z.avail_in >= 2 && w->z.next_in[0] == 0x1f && w->z.next_in[1] == 0x8b ? 1 : -1;
}

int data_gzip_check_end(const char *path, char *err, size_t err_bytes)
{
	static struct gz_walk zero;
	struct gz_walk *w = malloc(sizeof(*w));
	int rc = 0, more;
	if (!w)
		return 0;   /* the reader reports what it can */
	*w = zero;
	w->f = fopen(path, "rb");
	if (!w->f || inflateInit2(&w->z, 16 + MAX_WBITS) != Z_OK)
		goto out;
	if (walk_next(w) != 1)
		goto end;   /* not gzip */
	while (walk_member(w) == 0 && (more = walk_next(w)) != 0) {
		if (more < 0) {
			snprintf(err, err_bytes, "chexnet: '%s': offset %lld: bytes after the gzip data",
				 path, w->consumed);
			rc = -1;
			break;
		}
		inflateReset(&w->z);
	}
end:
	inflateEnd(&w->z);
out:
	if (w->f)
		fclose(w->f);
	free(w);
	return rc;
}
