/* dicom_codestream.h - the image size a compressed pixel data fragment
 * declares in its own header, read before any decoder runs: JPEG and
 * JPEG-LS (the first SOFn / SOF55 segment), JPEG 2000 (the SIZ marker
 * segment, raw code stream or inside JP2 boxes). dicom_gdcm.cc refuses a
 * code stream larger than the data set's Rows x Columns, so that a
 * decoder's output is bounded by the declared (and budgeted) size.
 * What it does not do: decode, or judge RLE (its output is the declared
 * size by construction).
 */
#ifndef HVD_TRAINER_DICOM_CODESTREAM_H
#define HVD_TRAINER_DICOM_CODESTREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct codestream_size {
	const char *kind;       /* "JPEG" or "JPEG 2000" */
	uint32_t width, height, components;
	uint32_t bits;          /* sample precision (the first component's) */
};

/* 1 with the size when the fragment's header gives one, 0 when it has
 * none this finds (left to the decoder), -1 when it declares an empty or
 * negative image. */
int dicom_codestream_size(const uint8_t *p, size_t n, struct codestream_size *out);

#ifdef __cplusplus
}
#endif

#endif
