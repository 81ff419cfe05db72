/* gpu_algo_cache.h - cuDNN convolution algorithms chosen once per shape
 * and remembered: the key (every number that changes which algorithm is
 * valid or fast, or which one may be chosen) and a small fixed-size
 * table. Pure C, unit-tested on the CPU (tests/test_gpu_pure.c); the
 * cuDNN queries that fill it live in backend/gpu/conv_algos.c, the file
 * that keeps timed choices in gpu_algo_file.c. What this is not: the
 * descriptors or the queries themselves.
 */
#ifndef HVD_TRAINER_GPU_ALGO_CACHE_H
#define HVD_TRAINER_GPU_ALGO_CACHE_H

#include <stddef.h>
#include <stdint.h>

enum gpu_conv_dir {
	GPU_CONV_FWD,
	GPU_CONV_BWD_DATA,
	GPU_CONV_BWD_FILTER,
};

/* Strides matter: a slice of a dense-block buffer is not packed, and
 * some algorithms refuse or slow down on it. */
struct gpu_conv_key {
	int32_t dir;                 /* enum gpu_conv_dir */
	int32_t dtype;               /* enum precision */
	int32_t math;                /* cudnnMathType_t the descriptor asks for */
	int32_t layout;              /* enum gpu_layout: 0 NCHW/KCRS, 1 NHWC/KRSC */
	int32_t any;                 /* 1: non-deterministic algorithms allowed */
	int32_t n, c, h, w;          /* input (N, C, H, W) */
	int32_t k, r, stride, pad;   /* out channels, kernel, stride, pad */
	int64_t x_image_stride;      /* elements between images of x */
	int64_t y_image_stride;      /* ... of y */
	int64_t budget;              /* the most workspace bytes a choice may need */
};

struct gpu_algo_choice {
	int algo;                    /* the cuDNN enum value for dir */
	int math_type;               /* cudnnMathType_t the algorithm was rated with */
	size_t workspace_bytes;
};

#define GPU_ALGO_CACHE_SLOTS 1024  /* DenseNet-121 needs ~3x120 per batch size */

struct gpu_algo_cache {
	struct {
		int used;
		struct gpu_conv_key key;
		struct gpu_algo_choice choice;
	} slot[GPU_ALGO_CACHE_SLOTS];
	int count;
	long hits, misses;
};

void gpu_algo_cache_init(struct gpu_algo_cache *c);
uint64_t gpu_conv_key_hash(const struct gpu_conv_key *k);
int gpu_conv_key_equal(const struct gpu_conv_key *a, const struct gpu_conv_key *b);
/* The stored choice, or NULL (counts a hit or a miss). */
const struct gpu_algo_choice *gpu_algo_cache_find(struct gpu_algo_cache *c,
						  const struct gpu_conv_key *k);
/* 0, or -1 when the table is full (the caller then just does not cache). */
int gpu_algo_cache_put(struct gpu_algo_cache *c, const struct gpu_conv_key *k,
		       const struct gpu_algo_choice *choice);

#endif
