/* gpu_algo_file.h - the per-user cache of timed convolution algorithms
 * (--conv-algorithms timed): one text file per device identity (GPU
 * name, compute capability, driver, cuDNN and CUDA runtime versions),
 * its name carrying a hash of the identity and its second line the
 * identity itself; one line per choice, the whole key of gpu_algo_cache.h
 * (direction, precision, math type, layout, determinism, shape, image
 * strides, workspace budget) and the choice (algorithm, math type,
 * workspace bytes):
 *
 *   chexnet-conv-algorithms 1
 *   device NAME|sm 90|driver 13000|cuDNN 91900|CUDA runtime 13000
 *   DIR DTYPE MATH LAYOUT ANY N C H W K R STRIDE PAD XS YS BUDGET ALGO ALGO_MATH BYTES
 *
 * The reader trusts nothing: a file that is not a regular file of this
 * user's, is over GPU_ALGO_FILE_MAX bytes, has another header or device,
 * or any line that is not exactly the 19 numbers in their ranges is
 * refused whole (the caller ignores it in one line and times again).
 * Written whole or not at all (base/whole_file.h). Pure C (fuzzed:
 * tests/fuzz/fuzz_algo_cache.c).
 * What this is not: choosing (conv_algos.c) or deciding where the folder
 * is (the trainer's loop/algo_share.c).
 */
#ifndef HVD_TRAINER_GPU_ALGO_FILE_H
#define HVD_TRAINER_GPU_ALGO_FILE_H

#include <stddef.h>

#include "backend/gpu/gpu_algo_cache.h"

#define GPU_ALGO_FILE_MAX ((size_t)1 << 20)
#define GPU_ALGO_DEVICE_MAX 256       /* an identity's bytes, its NUL included */

/* folder/conv-algorithms-HASH.txt for device (HASH: 16 hex digits). */
void gpu_algo_file_path(const char *folder, const char *device, char *out, size_t len);

/* The text's entries into out (initialised here). 0, or -1 with why
 * ("line 3: expected 19 numbers") in why[len]. */
int gpu_algo_file_parse(const char *text, size_t bytes, const char *device,
			struct gpu_algo_cache *out, char *why, size_t len);

/* The file at path into out (initialised here): 0 read, 1 there is none,
 * -1 refused with why in why[len]. */
int gpu_algo_file_read(const char *path, const char *device, struct gpu_algo_cache *out,
		       char *why, size_t len);

/* The table as the file's text (malloc'd; NULL without memory). */
char *gpu_algo_file_format(const struct gpu_algo_cache *c, const char *device);

/* Makes folder (and its parent, mode 0700) and writes the table to path
 * whole. 0, or -1 with why in why[len]. */
int gpu_algo_file_write(const char *folder, const char *path, const struct gpu_algo_cache *c,
			const char *device, char *why, size_t len);

#endif
