/* gpu_geometry.h - the shape of the on-GPU input step (P3, P4): which
 * window of each uint8 source image becomes the network input, mirrored
 * or not, and the launch grid of the kernel that crops, flips and
 * normalises it (gpu_kernels.h). Pure C, unit-tested on the CPU
 * (tests/test_gpu_pure.c). Through the backend interface the source
 * is already S x S (window = whole image, no flip); a loader that ships
 * uncropped images passes its windows here. What this is not: choosing
 * crop offsets (the loader's seeded augmentation).
 */
#ifndef HVD_TRAINER_GPU_GEOMETRY_H
#define HVD_TRAINER_GPU_GEOMETRY_H

#include <stddef.h>

#include "base/error.h"

struct gpu_crop {
	int x0, y0;  /* top-left of the window in the source image */
	int flip;    /* 1: mirror left-right */
};

#define GPU_GEOMETRY_THREADS 256

struct gpu_input_geometry {
	int count;              /* images */
	int src_size;           /* source images are src_size x src_size uint8 */
	int out_size;           /* network input is (3, out_size, out_size) */
	size_t src_image_bytes; /* src_size^2 */
	size_t out_image_elems; /* 3 * out_size^2 */
	int threads;            /* per block */
	int blocks;             /* one thread per output pixel (3 channels each) */
};

/* Checks every window lies inside its source (crops may be NULL: the
 * whole image, which needs src_size == out_size) and fills *g. 0 or -1 (err). */
int gpu_input_geometry_init(struct gpu_input_geometry *g, int count, int src_size,
			    int out_size, const struct gpu_crop *crops,
			    struct trainer_error *err);

/* The source pixel (sx, sy) that output pixel (ox, oy) of image with
 * window *c reads: the same formula the kernel uses, for the tests. */
void gpu_crop_source(const struct gpu_crop *c, int out_size, int ox, int oy,
		     int *sx, int *sy);

#endif
