/* data/pack/preview.c - `chexnet pack --preview N DIR`: the first N images of
 * a data set (train, then val, then test, after --views; with
 * --skip-unreadable, refused images passed over) decoded and
 * resized exactly as the packer stores them, written as 8-bit PNGs: what
 * the model will see, to check a hospital's DICOM conversion by eye.
 * What it does not do: write shards or an index (pack.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"
#include "data/pack/pack.h"
#include "data/sets/set.h"
#include "data/sets/view.h"

/* DIR/NNNN-name.png with the name's '/' as '_'. */
static int write_preview(const char *dir, size_t k, const char *name, const uint8_t *pixels,
			 int size, char *err, size_t err_bytes)
{
	char flat[DATA_NAME_BYTES], path[4400];
	snprintf(flat, sizeof(flat), "%s", name);
	for (char *c = flat; *c; c++)
		*c = *c == '/' ? '_' : *c;
	snprintf(path, sizeof(path), "%s/%04zu-%s.png", dir, k, flat);
	return image_write_png_gray(path, pixels, size, size, err, err_bytes);
}

int data_pack_preview(const struct pack_config *cfg, size_t n, const char *dir, size_t *written,
		      size_t *square_padded, char *err, size_t err_bytes)
{
	struct data_set *set = calloc(1, sizeof(*set));
	uint8_t *pixels = malloc((size_t)cfg->size * cfg->size);
	char path[4400];
	int rc = -1;
	*written = *square_padded = 0;
	if (!set || !pixels) {
		snprintf(err, err_bytes, "chexnet: pack: preview: out of memory");
		goto out;
	}
	if (data_set_open(set, cfg->data_dir, cfg->val_fraction, err, err_bytes) != 0)
		goto out;
	if (cfg->views)
		data_set_keep_views(set, cfg->views);
	if (data_make_dir("pack: preview dir", dir, err, err_bytes) != 0)
		goto out;
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < set->split[s].count && *written < n; i++) {
			const struct data_entry *e = &set->split[s].items[i];
			int padded = 0;
			if (data_set_image_path(set, e, path, sizeof(path), err, err_bytes) != 0 ||
			    image_load_square(path, cfg->size, IMAGE_ASPECT_PAD, pixels, &padded, err, err_bytes) != 0) {
				if (cfg->skip_unreadable)
					continue;   /* as pack would */
				goto out;
			}
			if (write_preview(dir, *written, e->name, pixels, cfg->size, err, err_bytes) != 0)
				goto out;
			++*written;
			*square_padded += padded;
		}
	rc = 0;
out:
	free(pixels);
	if (set)
		data_set_free(set);
	free(set);
	return rc;
}
