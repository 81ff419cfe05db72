/* fuzz_dicom.c - libFuzzer target for the DICOM entry point, two ways:
 *  - the bytes as a file through dicom_decode_memory (GDCM in its forked
 *    reader, then dicom_pixels.c), as pack, direct mode and predict call
 *    it: never a crash or leak here, errors one line naming the file (for
 *    one input in 8: the fork makes this path slow);
 *  - the bytes as a dicom_raw (sizes, bit layout, the DS strings, LUTs,
 *    pixels) straight into dicom_pixels_convert, in process, so coverage
 *    guides the fuzzer through our own checks and pipeline;
 *  - the bytes through our own parsers of untrusted bytes, in process:
 *    the bounded inflate (1 MiB here) and the code stream header reader.
 * GDCM is the system's library: it parses, the fuzz checks our side.
 * Seeds (written to an empty corpus directory): small DX files built here
 * (explicit VR little endian, MONOCHROME1/2, a window, rescale, signed).
 * What it does not do: compare pixels with a reference (group data-dicom).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_files.h"
#include "data/dicom/dicom_codestream.h"
#include "data/dicom/dicom_inflate.h"
#include "data/dicom/dicom_pixels.h"

static volatile uint8_t sink;

static void check_image(const struct image *img)
{
	if (img->width <= 0 || img->height <= 0 || !img->pixels)
		abort();
	uint8_t sum = 0;
	for (size_t i = 0; i < (size_t)img->width * (size_t)img->height; i++)
		sum += img->pixels[i];   /* every pixel is readable (ASan) */
	sink += sum;
}

static void through_file(const uint8_t *data, size_t size)
{
	struct image img;
	struct dicom_info info;
	char err[1024] = "";
	if (dicom_decode_memory(data, size, "fuzz", &img, &info, err, sizeof(err)) == 0) {
		check_image(&img);
		image_free(&img);
	} else if (strncmp(err, "chexnet: image 'fuzz': DICOM: ", 30) != 0 || strchr(err, '\n')) {
		abort();   /* one line, naming the file */
	}
}

/* Takes n bytes from the input (zeros past its end). */
static void take(const uint8_t **p, const uint8_t *end, void *out, size_t n)
{
	size_t have = (size_t)(end - *p) < n ? (size_t)(end - *p) : n;
	memset(out, 0, n);
	memcpy(out, *p, have);
	*p += have;
}

static void take_string(const uint8_t **p, const uint8_t *end, char *out, size_t bytes)
{
	uint8_t len = 0;
	take(p, end, &len, 1);
	take(p, end, out, len % bytes);
	out[len % bytes] = 0;
}

static void take_lut(const uint8_t **p, const uint8_t *end, struct dicom_lut *l)
{
	uint8_t head[6];
	take(p, end, head, sizeof(head));
	l->present = head[0] & 1;
	l->entries = 1 + (head[1] | head[2] << 8) % 512;
	l->first = (int16_t)(head[3] | head[4] << 8);
	l->bits = head[5] % 20;
	l->data = l->present ? malloc(l->entries * sizeof(uint16_t)) : NULL;
	if (l->data)
		take(p, end, l->data, l->entries * sizeof(uint16_t));
}

static void through_pipeline(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct dicom_raw raw;
	uint8_t f[8];
	struct image img;
	char why[512] = "";
	memset(&raw, 0, sizeof(raw));
	take(&p, end, f, sizeof(f));
	raw.has_pixel_data = f[0] & 1, raw.image_parsed = f[0] >> 1 & 1;
	raw.pixel_signed = f[0] >> 2 & 1, raw.frames = f[0] >> 3 & 3;
	raw.width = 1 + f[1] % 48, raw.height = 1 + f[2] % 48, raw.samples = 1 + (f[3] == 255);
	raw.bits_allocated = (const uint32_t[]){ 8, 16, 32, 12 }[f[4] % 4];
	raw.bits_stored = f[5] % 34, raw.high_bit = f[6] % 2 ? raw.bits_stored - 1 : f[6];
	snprintf(raw.photometric, sizeof(raw.photometric), "%s", f[7] & 1 ? "MONOCHROME1" :
		 f[7] & 2 ? "RGB" : "MONOCHROME2");
	take_string(&p, end, raw.slope, sizeof(raw.slope));
	take_string(&p, end, raw.intercept, sizeof(raw.intercept));
	take_string(&p, end, raw.window_center, sizeof(raw.window_center));
	take_string(&p, end, raw.window_width, sizeof(raw.window_width));
	take_string(&p, end, raw.voi_function, sizeof(raw.voi_function));
	take_string(&p, end, raw.presentation_shape, sizeof(raw.presentation_shape));
	take_string(&p, end, raw.frames_text, sizeof(raw.frames_text));
	take_lut(&p, end, &raw.modality_lut);
	take_lut(&p, end, &raw.voi_lut);
	size_t bytes = (size_t)raw.width * raw.height * (raw.bits_allocated / 8 + (raw.bits_allocated == 12));
	raw.pixels = malloc(bytes);
	if (raw.pixels)
		take(&p, end, raw.pixels, bytes);
	raw.pixel_bytes = f[0] >> 5 & 1 ? bytes - 1 : bytes;
	if (dicom_pixels_convert(&raw, &img, why, sizeof(why)) == 0) {
		check_image(&img);
		image_free(&img);
	} else if (!why[0] || strchr(why, '\n')) {
		abort();
	}
	dicom_raw_free(&raw);
}

static void through_parsers(const uint8_t *data, size_t size)
{
	struct codestream_size cs;
	uint8_t *out = NULL;
	size_t out_bytes = 0;
	char why[512] = "";
	if (dicom_codestream_size(data, size, &cs) == 1 && (!cs.width || !cs.height))
		abort();
	int rc = dicom_inflate(data, size, 1u << 20, &out, &out_bytes, why, sizeof(why));
	if ((rc == 1) != (out != NULL) || (rc == -1 && (!why[0] || strchr(why, '\n'))))
		abort();
	if (rc == 1) {
		sink += out[out_bytes - 1];   /* all of it readable (ASan) */
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	through_parsers(data, size);
	/* a fork per file under ASan runs at ~7 a second: one input in 8 (by
	 * size) takes that path, every input the in-process one */
	if (dicom_recognise(data, size) && size % 8 == 0)
		through_file(data, size);
	through_pipeline(data, size);
	return 0;
}

/* Explicit VR little endian element: tag, VR, length, value (even). */
static size_t element(uint8_t *out, uint16_t group, uint16_t elem, const char *vr,
		      const void *value, size_t len)
{
	int long_form = !strcmp(vr, "OW") || !strcmp(vr, "OB") || !strcmp(vr, "SQ");
	size_t n = 0;
	out[n++] = (uint8_t)group, out[n++] = (uint8_t)(group >> 8);
	out[n++] = (uint8_t)elem, out[n++] = (uint8_t)(elem >> 8);
	out[n++] = (uint8_t)vr[0], out[n++] = (uint8_t)vr[1];
	if (long_form) {
		out[n++] = 0, out[n++] = 0;
		for (int i = 0; i < 4; i++)
			out[n++] = (uint8_t)(len >> (8 * i));
	} else {
		out[n++] = (uint8_t)len, out[n++] = (uint8_t)(len >> 8);
	}
	memcpy(out + n, value, len);
	return n + len;
}

static size_t us(uint8_t *out, uint16_t group, uint16_t elem, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return element(out, group, elem, "US", b, 2);
}

/* A W x H DX file (12 bits in 16). */
static size_t seed_dx(uint8_t *out, int mono1, int is_signed, const char *center, const char *width,
		      const char *slope)
{
	enum { W = 12, H = 10 };
	uint8_t meta[256], px[W * H * 2];
	size_t m = 0, n = 0;
	m += element(meta + m, 0x0002, 0x0001, "OB", "\0\1", 2);
	m += element(meta + m, 0x0002, 0x0002, "UI", "1.2.840.10008.5.1.4.1.1.1.1\0", 28);
	m += element(meta + m, 0x0002, 0x0010, "UI", "1.2.840.10008.1.2.1\0", 20);
	memset(out, 0, 128);
	memcpy(out + 128, "DICM", 4);
	n = 132;
	uint32_t ml = (uint32_t)m;
	n += element(out + n, 0x0002, 0x0000, "UL", &ml, 4);
	memcpy(out + n, meta, m);
	n += m;
	n += element(out + n, 0x0008, 0x0016, "UI", "1.2.840.10008.5.1.4.1.1.1.1\0", 28);
	n += element(out + n, 0x0008, 0x0060, "CS", "DX", 2);
	n += element(out + n, 0x0010, 0x0020, "LO", "SEED-01 ", 8);
	n += element(out + n, 0x0018, 0x5101, "CS", "PA", 2);
	n += us(out + n, 0x0028, 0x0002, 1);
	n += element(out + n, 0x0028, 0x0004, "CS", mono1 ? "MONOCHROME1 " : "MONOCHROME2 ", 12);
	n += us(out + n, 0x0028, 0x0010, H);
	n += us(out + n, 0x0028, 0x0011, W);
	n += us(out + n, 0x0028, 0x0100, 16);
	n += us(out + n, 0x0028, 0x0101, 12);
	n += us(out + n, 0x0028, 0x0102, 11);
	n += us(out + n, 0x0028, 0x0103, (uint16_t)is_signed);
	if (center)
		n += element(out + n, 0x0028, 0x1050, "DS", center, strlen(center));
	if (width)
		n += element(out + n, 0x0028, 0x1051, "DS", width, strlen(width));
	if (slope) {
		n += element(out + n, 0x0028, 0x1052, "DS", "-10 ", 4);
		n += element(out + n, 0x0028, 0x1053, "DS", slope, strlen(slope));
	}
	for (int i = 0; i < W * H; i++) {
		uint16_t v = (uint16_t)((i * 37) % 4096);
		px[2 * i] = (uint8_t)v, px[2 * i + 1] = (uint8_t)(v >> 8);
	}
	n += element(out + n, 0x7fe0, 0x0010, "OW", px, sizeof(px));
	return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	uint8_t buf[4096];
	if (!dir)
		return 0;
	fuzz_seed(dir, "dx-mono2.dcm", buf, seed_dx(buf, 0, 0, NULL, NULL, NULL));
	fuzz_seed(dir, "dx-mono1-window.dcm", buf, seed_dx(buf, 1, 0, "2048", "1000", NULL));
	fuzz_seed(dir, "dx-rescale.dcm", buf, seed_dx(buf, 0, 0, "100\\200", "500 ", "0.5 "));
	fuzz_seed(dir, "dx-signed.dcm", buf, seed_dx(buf, 0, 1, "0 ", "300 ", NULL));
	return 0;
}
