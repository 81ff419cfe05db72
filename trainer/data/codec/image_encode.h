/* image_encode.h - PNG encoding through libspng: what `chexnet synth`
 * writes and what tests use to build fixtures of every PNG colour type.
 * What this is not: decoding (image_decode.h).
 */
#ifndef HVD_TRAINER_IMAGE_ENCODE_H
#define HVD_TRAINER_IMAGE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* Encodes pixels laid out as the PNG stores them (host-endian 16-bit
 * samples) with the given spng colour type (0 gray, 2 RGB, 4 gray+alpha,
 * 6 RGBA) and bit depth (8 or 16). *png is malloc'd. Returns 0 or -1. */
int image_png_encode(const void *pixels, int width, int height, int color_type,
		     int bit_depth, void **png, size_t *png_bytes);

/* The same with an sBIT chunk of sbit significant bits per channel
 * (0: none). */
int image_png_encode_sbit(const void *pixels, int width, int height, int color_type,
			  int bit_depth, int sbit, void **png, size_t *png_bytes);

/* Writes an 8-bit gray PNG to path atomically (temp + fsync + rename).
 * Returns 0, or -1 with `chexnet: image 'path': reason` in err. */
int image_write_png_gray(const char *path, const uint8_t *pixels, int width, int height,
			 char *err, size_t err_bytes);

/* Writes bytes to path atomically (temp + fsync + rename). */
int image_write_file_atomic(const char *path, const void *data, size_t bytes,
			    char *err, size_t err_bytes);

#endif
