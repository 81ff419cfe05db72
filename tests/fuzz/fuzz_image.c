/* fuzz_image.c - libFuzzer target for image decoding (image_decode.c:
 * PNG through libspng, JPEG through libturbojpeg), as `chexnet pack`,
 * direct mode and `predict` call it. Each input is decoded as it is, then
 * once more with every complete PNG chunk's CRC recomputed, so that
 * mutations reach the decoder behind the CRC check. Seeds (written to an
 * empty corpus directory): PNGs of each colour type at 8 and 16 bits and
 * gray and colour JPEGs (16-bit PNGs with sBIT). The decoder must never crash, overrun, or accept
 * an image that is not what the file says; errors are one line.
 * What it does not do: resize (pure arithmetic, tested in test_data_formats.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <zlib.h>

#include "fuzz_files.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"

static volatile uint8_t sink;   /* keeps the reads of every byte */

static void decode(const uint8_t *data, size_t size)
{
	struct image img;
	char err[512];
	err[0] = 0;
	if (image_decode_memory(data, size, "fuzz", 8, &img, err, sizeof(err)) == 0) {
		if (img.width <= 0 || img.height <= 0 || !img.pixels)
			abort();
		uint8_t sum = 0;
		for (size_t i = 0; i < (size_t)img.width * (size_t)img.height; i++)
			sum += img.pixels[i];   /* every pixel is readable (ASan) */
		sink += sum;
		image_free(&img);
	} else if (!err[0] || strchr(err, '\n')) {
		abort();   /* an error is one line */
	}
}

/* Recomputes the CRC of every complete chunk of a PNG. */
static void fix_png_crcs(uint8_t *p, size_t size)
{
	size_t at = 8;
	while (at + 12 <= size) {
		uint32_t len = (uint32_t)p[at] << 24 | p[at + 1] << 16 | p[at + 2] << 8 | p[at + 3];
		if (len > size - at - 12)
			break;
		uint32_t crc = (uint32_t)crc32(0, p + at + 4, len + 4);
		for (int i = 0; i < 4; i++)
			p[at + 8 + len + (size_t)i] = (uint8_t)(crc >> (24 - 8 * i));
		at += 12 + len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode(data, size);
	if (size >= 8 && data[0] == 0x89) {
		uint8_t *copy = malloc(size);
		memcpy(copy, data, size);
		fix_png_crcs(copy, size);
		decode(copy, size);
		free(copy);
	}
	return 0;
}

static void seed_png(const char *dir, int type, int depth)
{
	uint8_t px[16 * 12 * 4 * 2];
	void *png = NULL;
	size_t bytes = 0;
	char name[64];
	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (uint8_t)(i * 37 + (size_t)type);
	/* 16-bit seeds carry sBIT 12 (the sBIT path); the no-sBIT path is the
	 * percentile window, reached when a mutation drops the chunk */
	if (image_png_encode_sbit(px, 16, 12, type, depth, depth == 16 ? 12 : 0, &png, &bytes) == 0) {
		snprintf(name, sizeof(name), "seed-%d-%d.png", type, depth);
		fuzz_seed(dir, name, png, bytes);
	}
	free(png);
}

static void seed_jpeg(const char *dir, int pf, int subsamp, const char *name)
{
	uint8_t px[24 * 16 * 3];
	unsigned char *jpg = NULL;
	unsigned long bytes = 0;
	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (uint8_t)(i * 13);
	tjhandle tj = tjInitCompress();
	if (tj && tjCompress2(tj, px, 24, 0, 16, pf, &jpg, &bytes, subsamp, 75, 0) == 0)
		fuzz_seed(dir, name, jpg, bytes);
	tjFree(jpg);
	if (tj)
		tjDestroy(tj);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	if (!dir)
		return 0;
	static const int types[4] = { 0, 2, 4, 6 };
	for (int t = 0; t < 4; t++) {
		seed_png(dir, types[t], 8);
		seed_png(dir, types[t], 16);
	}
	seed_jpeg(dir, TJPF_GRAY, TJSAMP_GRAY, "seed-gray.jpg");
	seed_jpeg(dir, TJPF_RGB, TJSAMP_420, "seed-rgb.jpg");
	return 0;
}
