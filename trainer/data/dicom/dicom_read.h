/* dicom_read.h - what a DICOM file holds for the pixel pipeline, read by
 * a maintained library (GDCM, dicom_gdcm.cc; a build without it has
 * dicom_none.c, which refuses every file naming the WITH_GDCM feature).
 *
 * dicom_read_memory parses the data set, decodes the first frame's pixel
 * data whatever the transfer syntax (the library's codecs: little/big
 * endian, deflate, JPEG, JPEG-LS, JPEG 2000, RLE) and copies out the
 * attributes the pipeline needs. Pixels are decoded only for a single
 * frame of one sample per pixel (what the pipeline accepts); otherwise
 * only the attributes are read. It does not judge them (multi-frame,
 * colour, the LUTs' meaning): dicom_pixels.c does.
 * What this is not: a DICOM parser of our own.
 */
#ifndef HVD_TRAINER_DICOM_READ_H
#define HVD_TRAINER_DICOM_READ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A LUT: descriptor (entries, first mapped value, bits) and its data. */
struct dicom_lut {
	int present;
	uint32_t entries;       /* 0 in the file means 65536 */
	int32_t first;
	uint32_t bits;
	uint16_t *data;         /* entries values, malloc'd */
};

struct dicom_raw {
	int has_pixel_data;     /* (7FE0,0010) present */
	int image_parsed;       /* the library built an image of it */
	uint32_t width, height, frames, samples;
	uint32_t bits_allocated, bits_stored, high_bit, pixel_signed;
	char photometric[32], transfer_syntax[72], sop_class[72], media_class[72];
	char modality[20], view[20], presentation_shape[20], voi_function[20];
	char patient_id[72];    /* up to 64 characters */
	/* decimal strings (DS) as the file has them, "" when absent; the
	 * pipeline parses them (several values: backslash-separated) */
	char slope[96], intercept[96], window_center[96], window_width[96];
	char frames_text[96];   /* Number of Frames (IS) as written */
	struct dicom_lut modality_lut, voi_lut;   /* first item of each sequence */
	void *pixels;           /* first frame, host-endian 8/16/32-bit samples, malloc'd */
	size_t pixel_bytes;
};

/* What a read may cost (dicom_budget.c). An image whose declared size
 * (the file's own Rows, Columns, Samples per Pixel, Bits Allocated) is
 * above max_pixels or max_bytes is refused before any decompression;
 * a deflated data set may inflate to at most max_bytes + DICOM_INFLATE_SLACK;
 * a JPEG/JPEG-LS/JPEG 2000 code stream larger than the declared image is
 * refused before it is decoded. Larger than max_side: attributes only. */
struct dicom_limits {
	uint32_t max_side;
	uint64_t max_pixels, max_bytes;
};

/* Parses bytes within limits. Returns 0, or -1 with a reason (no file
 * name, no newline) in why. */
int dicom_read_memory(const void *data, size_t bytes, const struct dicom_limits *limits,
		      struct dicom_raw *out, char *why, size_t why_bytes);

/* The largest peak RSS in KiB of the reader processes this process has
 * used so far (0: none). */
long dicom_reader_peak_kib(void);

/* 1 when this build can decode DICOM. */
int dicom_read_available(void);

void dicom_raw_free(struct dicom_raw *raw);

#ifdef __cplusplus
}
#endif

#endif
