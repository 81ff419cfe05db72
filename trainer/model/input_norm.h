/* input_norm.h - the first step of every backend: uint8 grayscale images
 * to the network's normalised 3-channel fp32 input (P3).
 *
 * x[n][c][y][x] = (pixel / 255 - mean[c]) / std[c], the gray value
 * replicated to R, G and B, with ImageNet's mean and std as torchvision
 * uses them. Fast backends may fuse this into their own first kernel but
 * must give the same values. What this is not: decoding or resizing
 * (the input pipeline does that).
 */
#ifndef HVD_TRAINER_INPUT_NORM_H
#define HVD_TRAINER_INPUT_NORM_H

#include "base/batch.h"

/* The rule in words, recorded with every checkpoint (setting "normalise"). */
#define INPUT_NORM_RULE "x/255 gray as RGB, ImageNet mean 0.485,0.456,0.406 std 0.229,0.224,0.225"

extern const float input_norm_mean[3];  /* 0.485, 0.456, 0.406 */
extern const float input_norm_std[3];   /* 0.229, 0.224, 0.225 */

/* x: (count, 3, S, S) NCHW, S = b->size. */
void input_norm_nchw(const struct batch *b, int count, float *x);

#endif
