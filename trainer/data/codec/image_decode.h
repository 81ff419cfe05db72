/* image_decode.h - PNG (libspng), JPEG (libturbojpeg) and DICOM
 * (dicom_pixels.h) files to 8-bit grayscale, in memory.
 *
 * PNG: 1/2/4/8/16-bit gray, gray+alpha, RGB, RGBA, palette; colour becomes
 * gray by ITU-R 601 luma, alpha is dropped. 16-bit samples: with sBIT s,
 * scaled by 255 / (2^s - 1) (unscaled s-bit data; samples above 2^s - 1
 * are the spec's scaled ones and are shifted down by 16 - s first);
 * without sBIT, the 0.5-99.5 percentile window (image_window.h).
 * JPEG: decoded scaled by 1/2, 1/4 or 1/8 when the result still covers
 * min_side (cheap shrink before the area filter). DICOM: the pixel
 * pipeline of dicom_pixels.h. The format is taken from the file's content
 * (DICOM: "DICM" at 128, or a data set without preamble), not its name. A truncated or corrupt file is an
 * error naming the file, never a partly black image.
 * What this is not: the image type (image/image.h), resizing or cropping
 * (image/image_resize.h).
 */
#ifndef HVD_TRAINER_IMAGE_DECODE_H
#define HVD_TRAINER_IMAGE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "data/image/image.h"
#include "data/image/image_resize.h"

/* How pixels became 8 bits, recorded in a pack's index.txt (`pixels`). */
#define IMAGE_PIXEL_RULE "png16=sbit,else-p0.5-99.5;" \
	"dicom=modality-lut,voi-lut|window|p0.5-99.5,monochrome1-inverted"

/* Decodes path. min_side: smallest side the caller still needs (JPEG may
 * be decoded scaled down to it); 0 = full size. Returns 0, or -1 with a
 * one-line message `chexnet: image 'path': reason` in err. */
int image_decode_file(const char *path, int min_side, struct image *out,
		      char *err, size_t err_bytes);

/* The same for bytes already in memory; name is only used in messages. */
int image_decode_memory(const void *data, size_t bytes, const char *name,
			int min_side, struct image *out, char *err, size_t err_bytes);

/* Decodes path and area-resizes it to side x side into out (side*side
 * bytes), a non-square image padded or squashed by aspect
 * (image_resize.h): what the packer and a folder's loader store.
 * *padded (when not NULL) says whether padding was added. */
int image_load_square(const char *path, int side, enum image_aspect aspect, uint8_t *out,
		      int *padded, char *err, size_t err_bytes);

/* Decodes path, makes it stored x stored as image_load_square does and
 * takes the centre side x side into out: the view evaluation takes of an
 * image in a folder, which `chexnet predict IMAGE` feeds the model (a
 * checkpoint's recorded stored size and aspect, cmd/checkpoint_defaults.h). */
int image_load_view(const char *path, int side, int stored, enum image_aspect aspect,
		    uint8_t *out, char *err, size_t err_bytes);

#endif
