/* eval/cam.h - class activation maps (Zhou et al. 2016, the CheXNet paper's
 * heat maps): for class c, CAM_c(y, x) = sum_k W[c][k] F[k][y][x], the
 * classifier's weights for c times the last feature maps F (the tensor
 * its global average pooling reads), so that mean(CAM_c) + bias[c] is the
 * logit of c. Then bilinearly upsampled to the image (half-pixel
 * centres, edges clamped, as torch's interpolate with
 * align_corners=False): map cell (i, j) covers image pixels
 * [i*S/h, (i+1)*S/h) x [j*S/w, (j+1)*S/w) and its value sits at the
 * centre of that block.
 * What this is not: getting F (backend features()) or drawing
 * (cmd/cam_png.h).
 */
#ifndef HVD_TRAINER_CAM_H
#define HVD_TRAINER_CAM_H

#include <stddef.h>

/* cam (h*w) = sum_k weights[k] * maps[k] (each h*w), weights: the
 * classifier's row of one class (channels). */
void cam_compute(const float *weights, const float *maps, int channels, int h, int w,
		 float *cam);

/* Bilinear upsampling of cam (h, w) to out (side, side). */
void cam_upsample(const float *cam, int h, int w, int side, float *out);

/* Index (y*w + x) of the largest value of cam (h*w), the first on ties. */
int cam_argmax(const float *cam, int h, int w);

/* Scales v (n values) to [0, 1] by its min and max (all 0 when flat). */
void cam_normalise(float *v, size_t n);

#endif
