/* dicom_pixels.c - DICOM's pixel pipeline (dicom_pixels.h): checks what
 * dicom_read_memory gave, then stored values -> Modality LUT -> VOI ->
 * inversion -> 8 bits, in doubles. The window's output t in [0, 1] is
 * pydicom's apply_voi_lut output divided by its range; an inverted image
 * computes 1 - t by the mirrored formula (not 1 - t afterwards), so a
 * MONOCHROME1 picture and its MONOCHROME2 twin give identical bytes.
 * What it does not do: parse the file (dicom_read.h), resize.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/dicom/dicom_budget.h"
#include "data/dicom/dicom_pixels.h"
#include "data/image/image_resize.h"
#include "data/image/image_window.h"

#define UID_DICOMDIR "1.2.840.10008.1.3.10"
#define UID_SEGMENTATION "1.2.840.10008.5.1.4.1.1.66.4"

enum voi_kind { VOI_PERCENTILE, VOI_LUT, VOI_LINEAR, VOI_LINEAR_EXACT, VOI_SIGMOID };

struct voi {
	enum voi_kind kind;
	int invert;
	double center, width;   /* windows; percentile: lo, hi - lo */
};

int dicom_recognise(const void *data, size_t bytes)
{
	const uint8_t *p = data;
	if (bytes >= 132 && memcmp(p + 128, "DICM", 4) == 0)
		return 1;
	if (bytes < 8)
		return 0;
	unsigned le_group = p[0] | p[1] << 8, le_elem = p[2] | p[3] << 8;
	unsigned be_group = p[0] << 8 | p[1], be_elem = p[2] << 8 | p[3];
	return ((le_group == 0x0002 || le_group == 0x0008) && le_elem <= 0x00ff) ||
	       (be_group == 0x0008 && be_elem <= 0x00ff);
}

/* The first value of a DS string (values separated by backslashes). */
static int parse_ds(const char *s, const char *what, double *out, char *why, size_t why_bytes)
{
	char first[96], *end;
	size_t n = strcspn(s, "\\");
	snprintf(first, sizeof(first), "%.*s", (int)n, s);
	double v = strtod(first, &end);
	while (*end == ' ')
		end++;
	if (!first[0] || end == first || *end || !isfinite(v)) {
		snprintf(why, why_bytes, "%s '%.40s': not a decimal number", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* What makes a file no single-frame grayscale image. */
static int check_image(const struct dicom_raw *r, char *why, size_t why_bytes)
{
	if (!strcmp(r->media_class, UID_DICOMDIR) || !strcmp(r->sop_class, UID_DICOMDIR))
		return snprintf(why, why_bytes, "a DICOMDIR (an index of files, no image): "
				"hint: give the image files it lists"), -1;
	if (!r->has_pixel_data)
		return snprintf(why, why_bytes, "no pixel data: not an image (SOP class '%s', modality '%s')",
				r->sop_class, r->modality), -1;
	if (!strcmp(r->sop_class, UID_SEGMENTATION))
		return snprintf(why, why_bytes, "a segmentation (SOP class '%s'), not an image", r->sop_class), -1;
	if (!r->image_parsed)
		return snprintf(why, why_bytes, "pixel data the library cannot read (transfer syntax '%s'): "
				"truncated, corrupt or not supported", r->transfer_syntax), -1;
	if (r->frames_text[0] && strspn(r->frames_text, "0123456789") != strlen(r->frames_text))
		return snprintf(why, why_bytes, "Number of Frames '%s': not a whole number", r->frames_text), -1;
	if (r->frames > 1)
		return snprintf(why, why_bytes, "multi-frame (%u frames): only single-frame images", r->frames), -1;
	if (r->samples != 1 || (strcmp(r->photometric, "MONOCHROME1") && strcmp(r->photometric, "MONOCHROME2")))
		return snprintf(why, why_bytes, "colour ('%s', %u samples per pixel): only grayscale "
				"(MONOCHROME1/2)", r->photometric, r->samples), -1;
	if (!r->width || !r->height || r->width > IMAGE_MAX_SIDE || r->height > IMAGE_MAX_SIDE)
		return snprintf(why, why_bytes, "size %ux%u: out of range 1..%d", r->width, r->height,
				IMAGE_MAX_SIDE), -1;
	if (r->bits_allocated != 8 && r->bits_allocated != 16 && r->bits_allocated != 32)
		return snprintf(why, why_bytes, "Bits Allocated '%u': only 8, 16 or 32", r->bits_allocated), -1;
	if (!r->bits_stored || r->bits_stored > r->bits_allocated || r->high_bit != r->bits_stored - 1)
		return snprintf(why, why_bytes, "Bits Stored '%u' / High Bit '%u': not 1..%u with High Bit "
				"= Bits Stored - 1", r->bits_stored, r->high_bit, r->bits_allocated), -1;
	if (!r->pixels || r->pixel_bytes != (size_t)r->width * r->height * (r->bits_allocated / 8))
		return snprintf(why, why_bytes, "pixel data (transfer syntax '%s'): missing, truncated "
				"or not decodable", r->transfer_syntax), -1;
	return 0;
}

static int check_lut(const struct dicom_lut *l, const char *what, char *why, size_t why_bytes)
{
	if (l->present && (l->bits < 8 || l->bits > 16 || !l->data))
		return snprintf(why, why_bytes, "%s: LUT Descriptor bits '%u': not 8..16", what, l->bits), -1;
	return 0;
}

/* A LUT's value for x (x below the first entry: the first; above the
 * last: the last), masked to its bits. */
static double lut_value(const struct dicom_lut *l, double x)
{
	double i = floor(x - l->first);
	size_t k = i <= 0 ? 0 : i >= l->entries - 1 ? l->entries - 1 : (size_t)i;
	return (double)(l->data[k] & ((1u << l->bits) - 1));
}

/* Stored values after the Modality LUT, into m (n values). */
static int modality(const struct dicom_raw *r, double *m, size_t n, char *why, size_t why_bytes)
{
	double slope = 1, intercept = 0;
	int rescale = r->slope[0] && r->intercept[0];   /* both, as pydicom */
	if (rescale && (parse_ds(r->slope, "Rescale Slope", &slope, why, why_bytes) ||
			parse_ds(r->intercept, "Rescale Intercept", &intercept, why, why_bytes)))
		return -1;
	unsigned bits = r->bits_stored;
	uint32_t mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1, sign = 1u << (bits - 1);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = r->bits_allocated == 8 ? ((const uint8_t *)r->pixels)[i] :
			     r->bits_allocated == 16 ? ((const uint16_t *)r->pixels)[i] :
			     ((const uint32_t *)r->pixels)[i];
		v &= mask;
		double x = r->pixel_signed && (v & sign) ? (double)v - ((double)mask + 1.0) : (double)v;
		m[i] = r->modality_lut.present ? lut_value(&r->modality_lut, x) : x * slope + intercept;
		if (!isfinite(m[i]))
			return snprintf(why, why_bytes, "Rescale Slope '%.40s' / Intercept '%.40s': values out of "
					"range", r->slope, r->intercept), -1;
	}
	return 0;
}

/* Which VOI applies, and its parameters. */
static int choose_voi(const struct dicom_raw *r, const double *m, size_t n, struct voi *v,
		      char *why, size_t why_bytes)
{
	v->invert = !strcmp(r->photometric, "MONOCHROME1") || !strcmp(r->presentation_shape, "INVERSE");
	if (r->voi_lut.present) {
		v->kind = VOI_LUT;
		return 0;
	}
	if (r->window_center[0] && r->window_width[0]) {
		const char *f = r->voi_function[0] ? r->voi_function : "LINEAR";
		if (parse_ds(r->window_center, "Window Center", &v->center, why, why_bytes) ||
		    parse_ds(r->window_width, "Window Width", &v->width, why, why_bytes))
			return -1;
		v->kind = !strcmp(f, "LINEAR") ? VOI_LINEAR : !strcmp(f, "LINEAR_EXACT") ? VOI_LINEAR_EXACT :
			  !strcmp(f, "SIGMOID") ? VOI_SIGMOID : VOI_PERCENTILE;
		if (v->kind == VOI_PERCENTILE)
			return snprintf(why, why_bytes, "VOI LUT Function '%s': not LINEAR, LINEAR_EXACT or "
					"SIGMOID", f), -1;
		if (v->kind == VOI_LINEAR ? v->width < 1 : v->width <= 0)
			return snprintf(why, why_bytes, "Window Width '%s': below %s for %s", r->window_width,
					v->kind == VOI_LINEAR ? "1" : "or at 0", f), -1;
		if (v->kind == VOI_LINEAR)   /* PS3.3 C.11.2.1.2.1 */
			v->center -= 0.5, v->width -= 1;
		return 0;
	}
	double lo, hi;
	if (image_window_f64(m, n, &lo, &hi) != 0)
		return snprintf(why, why_bytes, "out of memory"), -1;
	v->kind = VOI_PERCENTILE;
	v->center = lo, v->width = hi - lo;
	return 0;
}

/* t in [0, 1] for modality value x (already mirrored when inverted). */
static double voi_apply(const struct dicom_raw *r, const struct voi *v, double x)
{
	double s = v->invert ? -1 : 1, t;
	switch (v->kind) {
	case VOI_LUT: {
		double top = (double)((1u << r->voi_lut.bits) - 1), y = lut_value(&r->voi_lut, x);
		t = (v->invert ? top - y : y) / top;
		break;
	}
	case VOI_PERCENTILE:   /* center = lo, width = hi - lo */
		if (v->width <= 0)
			return 0;
		t = (v->invert ? v->center + v->width - x : x - v->center) / v->width;
		break;
	case VOI_SIGMOID:
		t = 1 / (1 + exp(-4 * s * (x - v->center) / v->width));
		break;
	default:   /* LINEAR (center, width already adjusted) and LINEAR_EXACT */
		if (v->width == 0)
			t = (s * (x - v->center) > 0) ? 1 : 0;
		else
			t = s * (x - v->center) / v->width + 0.5;
		break;
	}
	return !(t >= 0) ? 0 : t > 1 ? 1 : t;   /* NaN (inf - inf) too */
}

/* The file's strings in a reason: control characters become '?'. */
static int one_line(char *why)
{
	for (char *c = why; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -1;
}

static int convert(const struct dicom_raw *raw, struct image *out, char *why, size_t why_bytes);

int dicom_pixels_convert(const struct dicom_raw *raw, struct image *out, char *why,
			 size_t why_bytes)
{
	return convert(raw, out, why, why_bytes) == 0 ? 0 : one_line(why);
}

static int convert(const struct dicom_raw *raw, struct image *out, char *why, size_t why_bytes)
{
	struct voi v = { 0 };
	memset(out, 0, sizeof(*out));
	if (check_image(raw, why, why_bytes) || check_lut(&raw->modality_lut, "Modality LUT", why, why_bytes) ||
	    check_lut(&raw->voi_lut, "VOI LUT", why, why_bytes))
		return -1;
	size_t n = (size_t)raw->width * raw->height;
	double *m = malloc(n * sizeof(*m));
	out->pixels = malloc(n);
	if (!m || !out->pixels) {
		free(m);
		image_free(out);
		return snprintf(why, why_bytes, "out of memory (%zu pixels)", n), -1;
	}
	if (modality(raw, m, n, why, why_bytes) || choose_voi(raw, m, n, &v, why, why_bytes)) {
		free(m);
		image_free(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		out->pixels[i] = (uint8_t)floor(255 * voi_apply(raw, &v, m[i]) + 0.5);
	free(m);
	out->width = (int)raw->width;
	out->height = (int)raw->height;
	return 0;
}

int dicom_decode_memory(const void *data, size_t bytes, const char *name, struct image *out,
			struct dicom_info *info, char *err, size_t err_bytes)
{
	struct dicom_raw raw;
	char why[512];
	memset(out, 0, sizeof(*out));
	struct dicom_limits limits = dicom_budget(IMAGE_MAX_SIDE);
	if (dicom_read_memory(data, bytes, &limits, &raw, why, sizeof(why)) != 0) {
		one_line(why);   /* a library's message */
		snprintf(err, err_bytes, "chexnet: image '%s': DICOM: %s", name, why);
		return -1;
	}
	int rc = dicom_pixels_convert(&raw, out, why, sizeof(why));
	if (rc != 0) {
		snprintf(err, err_bytes, "chexnet: image '%s': DICOM: %s", name, why);
	} else if (info) {
		memcpy(info->patient_id, raw.patient_id, sizeof(info->patient_id));
		memcpy(info->view, raw.view, sizeof(info->view));
		memcpy(info->modality, raw.modality, sizeof(info->modality));
	}
	dicom_raw_free(&raw);
	return rc;
}

/* The first want bytes of f after those already in buf[0..have). */
static size_t read_more(FILE *f, uint8_t *buf, size_t have, size_t want)
{
	while (have < want) {
		size_t n = fread(buf + have, 1, want - have, f);
		if (n == 0)
			break;
		have += n;
	}
	return have;
}

int dicom_info_file(const char *path, int *is_dicom, struct dicom_info *info, char *err,
		    size_t err_bytes)
{
	struct dicom_raw raw;
	char why[512];
	uint8_t head[132];
	*is_dicom = 0;
	memset(info, 0, sizeof(*info));
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block */
	FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		snprintf(err, err_bytes, "chexnet: image '%s': not a readable regular file", path);
		return -1;
	}
	size_t got = read_more(f, head, 0, sizeof(head));
	if (!dicom_recognise(head, got)) {
		fclose(f);
		return 0;
	}
	*is_dicom = 1;
	size_t cap = 1u << 16, n = got;
	uint8_t *all = malloc(cap);
	if (all)
		memcpy(all, head, got);
	while (all) {   /* the whole file, at most 256 MiB */
		if (n == cap) {
			uint8_t *more = cap < (256u << 20) ? realloc(all, 2 * cap) : NULL;
			if (!more)
				break;
			all = more, cap *= 2;
		}
		size_t r = fread(all + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	int eof = feof(f);
	fclose(f);
	if (!all || !eof) {
		free(all);
		snprintf(err, err_bytes, "chexnet: image '%s': DICOM: unreadable or larger than 256 MiB", path);
		return -1;
	}
	struct dicom_limits limits = dicom_budget(0);
	int rc = dicom_read_memory(all, n, &limits, &raw, why, sizeof(why));
	free(all);
	if (rc != 0) {
		snprintf(err, err_bytes, "chexnet: image '%s': DICOM: %s", path, why);
		return -1;
	}
	memcpy(info->patient_id, raw.patient_id, sizeof(info->patient_id));
	memcpy(info->view, raw.view, sizeof(info->view));
	memcpy(info->modality, raw.modality, sizeof(info->modality));
	info->image = raw.has_pixel_data && raw.image_parsed && raw.frames <= 1 && raw.samples == 1 &&
		      (!strcmp(raw.photometric, "MONOCHROME1") || !strcmp(raw.photometric, "MONOCHROME2")) &&
		      strcmp(raw.sop_class, UID_SEGMENTATION) != 0;
	dicom_raw_free(&raw);
	return 0;
}
