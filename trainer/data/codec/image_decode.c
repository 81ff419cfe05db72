/* image_decode.c - PNG through libspng, JPEG through libturbojpeg, both to
 * 8-bit gray (16-bit PNG samples through sBIT or the percentile window of
 * image_window.h); DICOM, recognised by content, goes to dicom_pixels.c. Every decoder error (truncation, bad CRC, bad Huffman data,
 * even a libjpeg "warning" such as premature end of data) is an error.
 * image_load_square and image_load_view decode and then resize and crop
 * through image_resize.c.
 * What it does not do: pixel arithmetic of its own (image_resize.c),
 * except JPEG's built-in 1/2, 1/4, 1/8 scaling.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "data/dicom/dicom_pixels.h"
#include "data/codec/image_decode.h"
#include "data/image/image_resize.h"
#include "data/image/image_window.h"

#define IMAGE_MAX_FILE_BYTES (256u << 20)

static void rgba_to_gray(const uint8_t *rgba, size_t pixels, uint8_t *gray)
{
	for (size_t i = 0; i < pixels; i++) {
		const uint8_t *p = rgba + 4 * i;
		gray[i] = (uint8_t)((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
	}
}

/* 16-bit samples to 8 bits. With sBIT s (gray's, or the largest of red,
 * green, blue): values that fit in s bits are unscaled s-bit data (a 12-bit
 * X-ray stored as 0..4095) and scale by 255 / (2^s - 1); a larger value
 * means the PNG spec's scaled samples, so v >> (16 - s) scales the same
 * way. Without sBIT: the 0.5-99.5 percentile window (image_window.h). */
static void gray16_to_8(const uint16_t *v, size_t n, int sbit, uint8_t *out)
{
	if (sbit < 1 || sbit > 16) {
		uint16_t lo, hi;
		image_window_u16(v, n, &lo, &hi);
		image_window_apply_u16(v, n, lo, hi, out);
		return;
	}
	uint32_t top = (1u << sbit) - 1, shift = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > top) {
			shift = 16u - (uint32_t)sbit;
			break;
		}
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)((510u * (uint64_t)(v[i] >> shift) + top) / (2 * top));
}

/* A decoded 16-bit PNG (gray/gray+alpha as stored, colour as RGBA16) to
 * out->pixels: luma first (ITU-R 601, in 16 bits), then gray16_to_8. */
static int png16_to_gray(spng_ctx *ctx, const struct spng_ihdr *ihdr, const uint8_t *buf,
			 struct image *out, const char *name, char *err, size_t err_bytes)
{
	size_t n = (size_t)ihdr->width * ihdr->height;
	struct spng_sbit sb;
	int sbit = 0;
	if (spng_get_sbit(ctx, &sb) == 0) {
		sbit = sb.grayscale_bits;
		if (ihdr->color_type == SPNG_COLOR_TYPE_TRUECOLOR ||
		    ihdr->color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA)
			sbit = sb.red_bits > sb.green_bits ? sb.red_bits : sb.green_bits,
			sbit = sb.blue_bits > sbit ? sb.blue_bits : sbit;
	}
	uint16_t *gray = malloc(n * sizeof(*gray));
	out->pixels = malloc(n);
	if (!gray || !out->pixels) {
		free(gray);
		image_free(out);
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory", name);
		return -1;
	}
	const uint16_t *s = (const uint16_t *)buf;
	if (ihdr->color_type == SPNG_COLOR_TYPE_GRAYSCALE)
		memcpy(gray, s, n * sizeof(*gray));
	else if (ihdr->color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA)
		for (size_t i = 0; i < n; i++)
			gray[i] = s[2 * i];
	else
		for (size_t i = 0; i < n; i++)
			gray[i] = (uint16_t)((299u * s[4 * i] + 587u * s[4 * i + 1] +
					      114u * s[4 * i + 2] + 500u) / 1000u);
	gray16_to_8(gray, n, sbit, out->pixels);
	free(gray);
	return 0;
}

/* deflate expands at most 1032:1: a file too small for the scanlines it
 * declares is refused before anything of that size is allocated. */
static int png_too_small(const struct spng_ihdr *ihdr, size_t bytes, const char *name,
			 char *err, size_t err_bytes)
{
	static const unsigned channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
	uint64_t row = ((uint64_t)ihdr->width * channels[ihdr->color_type % 7] * ihdr->bit_depth + 7) / 8 + 1;
	if (row * ihdr->height / 1032 <= bytes)
		return 0;
	snprintf(err, err_bytes, "chexnet: image '%s': PNG %ux%u: declares %llu bytes of pixel "
		 "data, more than a %zu-byte file can hold", name, ihdr->width, ihdr->height,
		 (unsigned long long)(row * ihdr->height), bytes);
	return 1;
}

static int decode_png(const void *data, size_t bytes, const char *name,
		      struct image *out, char *err, size_t err_bytes)
{
	struct spng_ihdr ihdr;
	size_t len = 0;
	uint8_t *buf = NULL;
	int rc, ret = -1;
	spng_ctx *ctx = spng_ctx_new(0);
	if (!ctx) {
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory", name);
		return -1;
	}
	spng_set_image_limits(ctx, IMAGE_MAX_SIDE, IMAGE_MAX_SIDE);
	spng_set_chunk_limits(ctx, 1u << 26, 1u << 28);
	spng_set_crc_action(ctx, SPNG_CRC_ERROR, SPNG_CRC_ERROR);
	if ((rc = spng_set_png_buffer(ctx, data, bytes)) != 0 ||
	    (rc = spng_get_ihdr(ctx, &ihdr)) != 0)
		goto fail;
	if (png_too_small(&ihdr, bytes, name, err, err_bytes))
		goto out;
	/* gray up to 8 bits decodes straight to G8, 16-bit gray (+alpha) as
	 * stored, 16-bit colour to RGBA16, everything else to RGBA8 */
	int gray8 = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth <= 8;
	int deep = ihdr.bit_depth == 16;
	int gray16 = deep && (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE ||
			      ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA);
	int fmt = gray8 ? SPNG_FMT_G8 : gray16 ? SPNG_FMT_PNG : deep ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
	if ((rc = spng_decoded_image_size(ctx, fmt, &len)) != 0)
		goto fail;
	buf = malloc(len);
	if (!buf) {
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory (%zu bytes)", name, len);
		goto out;
	}
	/* then the chunks after the image up to IEND: this reads the last IDAT's
	 * CRC, so a file cut after its image data or a bad CRC is an error */
	if ((rc = spng_decode_image(ctx, buf, len, fmt, 0)) != 0 ||
	    (rc = spng_decode_chunks(ctx)) != 0)
		goto fail;
	out->width = (int)ihdr.width;
	out->height = (int)ihdr.height;
	if (gray8) {
		out->pixels = buf;
		buf = NULL;
	} else if (deep) {
		if (png16_to_gray(ctx, &ihdr, buf, out, name, err, err_bytes) != 0)
			goto out;
	} else {
		out->pixels = malloc((size_t)ihdr.width * ihdr.height);
		if (!out->pixels) {
			snprintf(err, err_bytes, "chexnet: image '%s': out of memory", name);
			goto out;
		}
		rgba_to_gray(buf, (size_t)ihdr.width * ihdr.height, out->pixels);
	}
	ret = 0;
	goto out;
fail:
	snprintf(err, err_bytes, "chexnet: image '%s': truncated or corrupt PNG: %s", name, spng_strerror(rc));
out:
	free(buf);
	spng_ctx_free(ctx);
	return ret;
}

/* Largest 1/2^k reduction (k <= 3) whose result still covers min_side. */
static int jpeg_scale_denom(int width, int height, int min_side)
{
	int denom = 1;
	if (min_side <= 0)
		return 1;
	while (denom < 8) {
		int d = denom * 2;
		int w = (width + d - 1) / d, h = (height + d - 1) / d;
		if (w < min_side || h < min_side)
			break;
		denom = d;
	}
	return denom;
}

static int decode_jpeg(const void *data, size_t bytes, const char *name, int min_side,
		       struct image *out, char *err, size_t err_bytes)
{
	int width, height, subsamp, colorspace, ret = -1;
	tjhandle tj = tjInitDecompress();
	if (!tj) {
		snprintf(err, err_bytes, "chexnet: image '%s': cannot start libturbojpeg", name);
		return -1;
	}
	if (tjDecompressHeader3(tj, data, (unsigned long)bytes, &width, &height, &subsamp, &colorspace) != 0)
		goto fail;
	if (width <= 0 || height <= 0 || width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE) {
		snprintf(err, err_bytes, "chexnet: image '%s': JPEG %dx%d: size out of range", name, width, height);
		goto out;
	}
	int denom = jpeg_scale_denom(width, height, min_side);
	int w = (width + denom - 1) / denom, h = (height + denom - 1) / denom;
	out->pixels = malloc((size_t)w * h);
	if (!out->pixels) {
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory", name);
		goto out;
	}
	if (tjDecompress2(tj, data, (unsigned long)bytes, out->pixels, w, w, h, TJPF_GRAY,
			  TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {  /* no 10,000-scan JPEGs */
		image_free(out);
		goto fail;
	}
	out->width = w;
	out->height = h;
	ret = 0;
	goto out;
fail:
	snprintf(err, err_bytes, "chexnet: image '%s': truncated or corrupt JPEG: %s", name, tjGetErrorStr2(tj));
out:
	tjDestroy(tj);
	return ret;
}

int image_decode_memory(const void *data, size_t bytes, const char *name,
			int min_side, struct image *out, char *err, size_t err_bytes)
{
	static const uint8_t png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	const uint8_t *p = data;
	memset(out, 0, sizeof(*out));
	if (bytes >= 8 && memcmp(p, png_magic, 8) == 0)
		return decode_png(data, bytes, name, out, err, err_bytes);
	if (bytes >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF)
		return decode_jpeg(data, bytes, name, min_side, out, err, err_bytes);
	if (dicom_recognise(data, bytes))
		return dicom_decode_memory(data, bytes, name, out, NULL, err, err_bytes);
	snprintf(err, err_bytes, "chexnet: image '%s': %s", name,
		 bytes ? "neither PNG, JPEG nor DICOM" : "empty file");
	return -1;
}

/* Whole file into a malloc'd buffer. */
static void *read_whole(const char *path, size_t *bytes, char *err, size_t err_bytes)
{
	struct stat st;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);  /* a FIFO must not block */
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, err_bytes, "chexnet: image '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > IMAGE_MAX_FILE_BYTES) {
		snprintf(err, err_bytes, "chexnet: image '%s': not a regular file of at most %u MiB",
			 path, IMAGE_MAX_FILE_BYTES >> 20);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory", path);
		goto out;
	}
	size_t done = 0;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
		if (n <= 0) {
			snprintf(err, err_bytes, "chexnet: image '%s': read at offset %zu: %s", path, done,
				 n < 0 ? strerror(errno) : "file shrank while reading");
			free(buf);
			buf = NULL;
			goto out;
		}
		done += (size_t)n;
	}
	*bytes = done;
out:
	if (fd >= 0)
		close(fd);
	return buf;
}

int image_decode_file(const char *path, int min_side, struct image *out,
		      char *err, size_t err_bytes)
{
	size_t bytes = 0;
	memset(out, 0, sizeof(*out));
	void *data = read_whole(path, &bytes, err, err_bytes);
	if (!data)
		return -1;
	int rc = image_decode_memory(data, bytes, path, min_side, out, err, err_bytes);
	free(data);
	return rc;
}

int image_load_square(const char *path, int side, enum image_aspect aspect, uint8_t *out,
		      int *padded, char *err, size_t err_bytes)
{
	struct image img;
	if (side <= 0 || side > IMAGE_MAX_SIDE) {
		snprintf(err, err_bytes, "chexnet: image size '%d': out of range 1..%d", side, IMAGE_MAX_SIDE);
		return -1;
	}
	if (image_decode_file(path, side, &img, err, err_bytes) != 0)
		return -1;
	image_resize_square(img.pixels, img.width, img.height, aspect, out, side);
	if (padded)
		*padded = aspect == IMAGE_ASPECT_PAD && img.width != img.height;
	image_free(&img);
	return 0;
}

int image_load_view(const char *path, int side, int stored, enum image_aspect aspect,
		    uint8_t *out, char *err, size_t err_bytes)
{
	if (side <= 0 || stored < side || stored > IMAGE_MAX_SIDE) {
		snprintf(err, err_bytes, "chexnet: image size '%d' of stored '%d': out of range "
			 "1 <= size <= stored <= %d", side, stored, IMAGE_MAX_SIDE);
		return -1;
	}
	uint8_t *whole = malloc((size_t)stored * stored);
	if (!whole) {
		snprintf(err, err_bytes, "chexnet: image '%s': out of memory", path);
		return -1;
	}
	int rc = image_load_square(path, stored, aspect, whole, NULL, err, err_bytes);
	if (rc == 0)
		image_crop_centre(whole, stored, side, 0, out);
	free(whole);
	return rc;
}
