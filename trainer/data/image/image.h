/* data/image/image.h - the 8-bit gray image every decoder produces
 * (codec/image_decode.h, dicom/dicom_pixels.h) and how it is freed.
 * What this is not: decoding, resizing or windowing (codec/, image_*.h).
 */
#ifndef HVD_TRAINER_DATA_IMAGE_H
#define HVD_TRAINER_DATA_IMAGE_H

#include <stdint.h>

struct image {
	int width, height;
	uint8_t *pixels;        /* (height, width) grayscale, malloc'd */
};

/* Frees the pixels and zeroes the image; safe on a zeroed image. */
void image_free(struct image *img);

#endif
