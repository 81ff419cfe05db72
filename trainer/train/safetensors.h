/* safetensors.h - reading and writing the safetensors format: an 8-byte
 * little-endian header length, a JSON header (cJSON) mapping each name to
 * {dtype, shape, data_offsets}, optional "__metadata__" of strings, then
 * the raw little-endian data. Files are written to the path given and
 * fsynced; atomic placement is the caller's job (checkpoint.c).
 * What this is not: knowledge of which tensors a model has.
 */
#ifndef HVD_TRAINER_SAFETENSORS_H
#define HVD_TRAINER_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct st_tensor {
	char name[128];
	char dtype[8];          /* "F32", "I64", ... */
	int ndim;
	int64_t shape[8];
	const void *data;       /* writing: the bytes; reading: points into the file image */
	size_t bytes;
};

struct st_meta {
	const char *key, *value;
};

int st_write(const char *path, const struct st_tensor *tensors, int count,
	     const struct st_meta *meta, int meta_count, struct trainer_error *err);

struct st_file {
	uint8_t *image;         /* whole file */
	size_t size;
	struct st_tensor *tensors;
	int count;
	struct st_meta *meta;   /* strings point into meta_storage */
	int meta_count;
	char *meta_storage;
};

/* Reads and validates the whole file (header inside the file, offsets
 * inside the data, sizes matching dtype x shape). -1 + err otherwise. */
int st_read(const char *path, struct st_file *f, struct trainer_error *err);
const struct st_tensor *st_find(const struct st_file *f, const char *name);
const char *st_meta_get(const struct st_file *f, const char *key);
void st_free(struct st_file *f);
/* "[1024, 3, 7, 7]" */
void st_shape_text(const int64_t *shape, int ndim, char *out, size_t len);

#endif
