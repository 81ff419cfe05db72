/* batch.h - one batch as the input pipeline hands it to a backend.
 *
 * Pixels stay uint8 until the backend: normalisation (ImageNet mean/std,
 * grayscale replicated to 3 channels) is the backend's first step (P3).
 * The buffer is owned by the loader and reused (pinned in GPU builds, P4).
 * What this is not: the loader's API (data/load/loader.h) or a tensor type.
 */
#ifndef HVD_TRAINER_BATCH_H
#define HVD_TRAINER_BATCH_H

#include <stdint.h>

#define CHEXNET_CLASSES 14

struct batch {
	int count;          /* valid images; the rest is padding (eval only) */
	int capacity;       /* N: images the buffers hold */
	int size;           /* S: every image is S x S */
	uint8_t *pixels;    /* (N, S, S) grayscale */
	float *labels;      /* (N, 14) 0 or 1, CheXNet class order */
	uint32_t *index;    /* (N) global record index (for gathering predictions) */
	uint32_t *patient;  /* (N) patient id, or NULL when the source has none (synthetic:
			       evaluation then counts one image as one patient) */
};

#endif
