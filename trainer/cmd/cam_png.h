/* cam_png.h - one class activation map picture, drawn with cairo (image
 * surface, PNG output): the X-ray enlarged by a whole factor k to at
 * least CAM_PNG_MIN_SIDE pixels, the CAM upsampled to it (eval/cam.h),
 * scaled to its own min..max and laid over the X-ray in "hot" colours
 * (dark red, orange, yellow, white) whose opacity rises with the value
 * (the lowest 35% of the range stays transparent), so the X-ray shows
 * where the map is low; a title band above names the finding and its
 * probability.
 * Geometry (the tests rely on it): the picture is k*S wide and
 * CAM_PNG_TITLE_H + k*S high; image pixel (x, y) is the k x k block at
 * (k*x, CAM_PNG_TITLE_H + k*y); over a black X-ray the brightness rises
 * with the CAM value.
 * What this is not: choosing the findings or running the model
 * (cmd/predict_cam.h).
 */
#ifndef HVD_TRAINER_CAM_PNG_H
#define HVD_TRAINER_CAM_PNG_H

#include <stdint.h>

#include "base/error.h"

#define CAM_PNG_TITLE_H 48
#define CAM_PNG_MIN_SIDE 448

/* k for an S-pixel image. */
int cam_png_scale(int side);

/* 1 when this build has cairo. */
int cam_png_available(void);

/* Writes path: image (side x side gray), cam (h x w, any scale), title
 * and a smaller subtitle line. 0 or -1 + err naming the file. */
int cam_png_write(const char *path, const uint8_t *image, int side, const float *cam, int h,
		  int w, const char *title, const char *subtitle, struct trainer_error *err);

#endif
