/* image_resize.h - pure pixel operations on 8-bit grayscale images: area
 * (box) filter resize, padding to a square, crop, horizontal flip. No I/O, no heap allocation
 * (one row of sums on the stack: sides up to IMAGE_MAX_SIDE).
 * What this is not: decoding (image_decode.h) or choosing crop offsets
 * (the loader does, from its seeded generator).
 */
#ifndef HVD_TRAINER_IMAGE_RESIZE_H
#define HVD_TRAINER_IMAGE_RESIZE_H

#include <stdint.h>

#define IMAGE_MAX_SIDE 16384

/* Area-average resize src (sh, sw) to dst (dh, dw): each output pixel is
 * the mean of the source area it covers, with fractional edge weights
 * (exact for any ratio, up- or downscaling). Rounded to nearest. Sides
 * must be in 1..IMAGE_MAX_SIDE. */
void image_resize_area(const uint8_t *src, int sw, int sh,
		       uint8_t *dst, int dw, int dh);

/* The side an image is area-resized to before a crop of side x side
 * (random in training, centre in evaluation and `chexnet predict`): 8/7
 * of it, rounded, CheXNet's resize to 256 and crop to 224. */
int image_stored_side(int side);

/* How a non-square image becomes square: PAD centres it on a black
 * square canvas of its longer side (offsets floor((L - w) / 2), floor((L -
 * h) / 2)), so nothing is cut or distorted; SQUASH stretches it (the rule
 * before views were recorded, kept to replay older checkpoints and packs). */
enum image_aspect { IMAGE_ASPECT_PAD = 0, IMAGE_ASPECT_SQUASH };

/* Area-resizes src (sw, sh) to side x side by the aspect rule: exactly
 * image_resize_area of the padded canvas (of src itself when square). */
void image_resize_square(const uint8_t *src, int sw, int sh, enum image_aspect aspect,
			 uint8_t *dst, int side);

/* "pad" | "squash", and back (-1: neither). */
const char *image_aspect_name(enum image_aspect aspect);
int image_aspect_parse(const char *name, enum image_aspect *aspect);

/* Copies the (side x side) window at (x, y) of src (sh, sw) into dst,
 * mirrored left-right when flip. The window must lie inside src. */
void image_crop(const uint8_t *src, int sw, int x, int y, int side,
		int flip, uint8_t *dst);

/* The centre (side x side) window of the square src (sw x sw): the crop
 * evaluation, `chexnet predict` and `chexnet locate` take alike. */
void image_crop_centre(const uint8_t *src, int sw, int side, int flip, uint8_t *dst);

#endif
