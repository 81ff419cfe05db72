/* dicom_pixels.h - a DICOM file to the 8-bit gray image the model sees,
 * in DICOM's order: stored value -> Modality LUT (Modality LUT Sequence,
 * else Rescale Slope/Intercept) -> VOI (the first VOI LUT Sequence item,
 * else the first Window Center/Width with its VOI LUT Function, else the
 * 0.5-99.5 percentile window of image_window.h) -> MONOCHROME1 or
 * Presentation LUT Shape INVERSE inverted (bone bright, as in NIH's PNGs)
 * -> round(255 t).
 *
 * Refused, one line naming the file and the reason: not a data set,
 * DICOMDIR (with a hint), no pixel data (SR and other non-image objects),
 * segmentations, multi-frame, colour, a transfer syntax the library
 * cannot decode, truncated pixel data, unreadable LUT/window attributes;
 * the reader (dicom_read.h) refuses, before decoding, images above the
 * decoded-size budget (dicom_budget.h) and wrong bits on the file's tags.
 * What this is not: parsing DICOM (dicom_read.h) or resizing.
 */
#ifndef HVD_TRAINER_DICOM_PIXELS_H
#define HVD_TRAINER_DICOM_PIXELS_H

#include <stddef.h>
#include <stdint.h>

#include "data/dicom/dicom_read.h"
#include "data/image/image.h"

/* What a DICOM file says about its image besides pixels. */
struct dicom_info {
	char patient_id[72];    /* personal data: never stored or printed */
	char view[20];          /* View Position (0018,5101), e.g. PA, AP */
	char modality[20];
	int image;              /* a single-frame grayscale image (not judged: its pixels) */
};

/* 1 when bytes look like DICOM: "DICM" at offset 128, or a data set that
 * starts without preamble (group 0002 or 0008, either byte order). */
int dicom_recognise(const void *data, size_t bytes);

/* Decodes bytes (name only in messages) to out. info may be NULL.
 * Returns 0, or -1 with `chexnet: image 'name': DICOM: reason` in err. */
int dicom_decode_memory(const void *data, size_t bytes, const char *name, struct image *out,
			struct dicom_info *info, char *err, size_t err_bytes);

/* For the files a data set names: *is_dicom = 0 (and 0 returned) when
 * path is not DICOM; else its info, pixels not decoded. Returns 0, or -1
 * with `chexnet: image 'path': ...` in err. */
int dicom_info_file(const char *path, int *is_dicom, struct dicom_info *info, char *err,
		    size_t err_bytes);

/* The pipeline alone, on what dicom_read_memory gave (for tests and the
 * fuzz target). Returns 0, or -1 with a one-line reason (no name; the
 * file's control characters shown as '?') in why. */
int dicom_pixels_convert(const struct dicom_raw *raw, struct image *out, char *why,
			 size_t why_bytes);

#endif
