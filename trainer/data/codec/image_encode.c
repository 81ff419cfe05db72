/* image_encode.c - PNG encoding (libspng) and atomic file writes.
 * What it does not do: JPEG encoding (tests call libturbojpeg directly).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/whole_file.h"
#include "data/codec/image_encode.h"

int image_png_encode(const void *pixels, int width, int height, int color_type,
		     int bit_depth, void **png, size_t *png_bytes)
{
	return image_png_encode_sbit(pixels, width, height, color_type, bit_depth, 0, png, png_bytes);
}

int image_png_encode_sbit(const void *pixels, int width, int height, int color_type,
			  int bit_depth, int sbit, void **png, size_t *png_bytes)
{
	static const int channels[7] = { 1, 0, 3, 0, 2, 0, 4 };
	int rc = -1, e = 0;
	if (color_type < 0 || color_type > 6 || !channels[color_type] ||
	    (bit_depth != 8 && bit_depth != 16))
		return -1;
	spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
	if (!ctx)
		return -1;
	struct spng_ihdr ihdr = {
		.width = (uint32_t)width, .height = (uint32_t)height,
		.bit_depth = (uint8_t)bit_depth, .color_type = (uint8_t)color_type,
	};
	struct spng_sbit sb = { (uint8_t)sbit, (uint8_t)sbit, (uint8_t)sbit, (uint8_t)sbit,
				(uint8_t)(color_type & 4 ? sbit : 0) };
	size_t len = (size_t)width * height * channels[color_type] * (bit_depth / 8);
	if (spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1) == 0 && spng_set_ihdr(ctx, &ihdr) == 0 &&
	    (!sbit || spng_set_sbit(ctx, &sb) == 0) &&
	    spng_encode_image(ctx, pixels, len, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE) == 0) {
		*png = spng_get_png_buffer(ctx, png_bytes, &e);
		rc = (*png && e == 0) ? 0 : -1;
	}
	spng_ctx_free(ctx);
	return rc;
}

int image_write_file_atomic(const char *path, const void *data, size_t bytes,
			    char *err, size_t err_bytes)
{
	if (whole_file_put_bytes(path, data, bytes, 0644) != 0) {
		snprintf(err, err_bytes, "chexnet: '%s': %s", path, whole_file_why(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

int image_write_png_gray(const char *path, const uint8_t *pixels, int width, int height,
			 char *err, size_t err_bytes)
{
	void *png = NULL;
	size_t bytes = 0;
	if (image_png_encode(pixels, width, height, 0, 8, &png, &bytes) != 0) {
		snprintf(err, err_bytes, "chexnet: image '%s': PNG encoding failed", path);
		return -1;
	}
	int rc = image_write_file_atomic(path, png, bytes, err, err_bytes);
	free(png);
	return rc;
}
