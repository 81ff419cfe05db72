/* safetensors.c - safetensors encode/decode with cJSON for the header.
 * What it does not do: mmap, dtype conversion, or atomic renames.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "train/safetensors.h"
#include "base/text_control.h"

static size_t dtype_bytes(const char *dtype)
{
	static const struct { const char *name; size_t bytes; } known[] = {
		{ "F64", 8 }, { "F32", 4 }, { "F16", 2 }, { "BF16", 2 }, { "I64", 8 },
		{ "I32", 4 }, { "I16", 2 }, { "I8", 1 }, { "U8", 1 }, { "BOOL", 1 },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(dtype, known[i].name) == 0)
			return known[i].bytes;
	return 0;
}

void st_shape_text(const int64_t *shape, int ndim, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, "[");
	for (int i = 0; i < ndim && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%lld", i ? ", " : "",
					 (long long)shape[i]);
	if (used < len)
		snprintf(out + used, len - used, "]");
}

static char *header_json(const struct st_tensor *t, int count, const struct st_meta *meta,
			 int meta_count)
{
	cJSON *root = cJSON_CreateObject();
	size_t offset = 0;

	if (meta_count) {
		cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
		for (int i = 0; i < meta_count; i++)
			cJSON_AddStringToObject(m, meta[i].key, meta[i].value);
	}
	for (int i = 0; i < count; i++) {
		cJSON *e = cJSON_AddObjectToObject(root, t[i].name);
		cJSON *shape = cJSON_AddArrayToObject(e, "shape");
		cJSON *offsets = cJSON_AddArrayToObject(e, "data_offsets");
		cJSON_AddStringToObject(e, "dtype", t[i].dtype);
		for (int d = 0; d < t[i].ndim; d++)
			cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].shape[d]));
		cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
		offset += t[i].bytes;
		cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

int st_write(const char *path, const struct st_tensor *tensors, int count,
	     const struct st_meta *meta, int meta_count, struct trainer_error *err)
{
	char *json = header_json(tensors, count, meta, meta_count);
	FILE *f = json ? fopen(path, "wb") : NULL;
	int ok = f != NULL;

	if (ok) {
		size_t len = strlen(json), padded = (len + 7) / 8 * 8;
		uint8_t size_le[8];
		for (int i = 0; i < 8; i++)
			size_le[i] = (uint8_t)((uint64_t)padded >> (8 * i));
		ok = fwrite(size_le, 1, 8, f) == 8 && fwrite(json, 1, len, f) == len;
		for (size_t i = len; ok && i < padded; i++)
			ok = fputc(' ', f) != EOF;
		for (int i = 0; ok && i < count; i++)
			ok = fwrite(tensors[i].data, 1, tensors[i].bytes, f) == tensors[i].bytes;
		ok = fflush(f) == 0 && ok && fsync(fileno(f)) == 0;
	}
	int saved = errno;
	if (f && fclose(f) != 0)
		ok = 0;
	free(json);
	if (!ok)
		return trainer_error_set(err, "checkpoint: '%s': cannot write: %s", path, strerror(saved));
	return 0;
}

static int read_whole(const char *path, struct st_file *f, struct trainer_error *err)
{
	char why[128];
	FILE *in = regular_fopen(path, 1, why, sizeof(why));   /* a FIFO is never waited on */
	struct stat sb;

	if (!in)
		return trainer_error_set(err, "checkpoint: '%s': %s", path, why);
	if (fstat(fileno(in), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(in);
		return trainer_error_set(err, "checkpoint: '%s': not a regular file", path);
	}
	long size = (long)sb.st_size;
	f->image = malloc(size > 0 ? (size_t)size : 1);
	f->size = size > 0 ? (size_t)size : 0;
	int ok = f->image && fread(f->image, 1, f->size, in) == f->size;
	fclose(in);
	if (!ok)
		return trainer_error_set(err, "checkpoint: '%s': cannot read", path);
	return 0;
}

static int parse_meta(struct st_file *f, const cJSON *meta, const char *path,
		      struct trainer_error *err)
{
	int n = cJSON_GetArraySize(meta);
	size_t need = 0;
	const cJSON *item;

	if (f->meta)
		return trainer_error_set(err, "checkpoint: '%s': __metadata__: given twice", path);
	if (!cJSON_IsObject(meta))
		return trainer_error_set(err, "checkpoint: '%s': __metadata__: not an object", path);

	cJSON_ArrayForEach(item, meta) {
		if (text_control_at(item->string) >= 0)
			return trainer_error_set(err, "checkpoint: '%s': __metadata__: a key with a control "
						 "character at byte %ld", path, text_control_at(item->string));
		if (cJSON_IsString(item) && text_control_at(item->valuestring) >= 0)
			return trainer_error_set(err, "checkpoint: '%s': __metadata__ '%s': value with a "
						 "control character at byte %ld", path, item->string,
						 text_control_at(item->valuestring));
		if (!cJSON_IsString(item))
			return trainer_error_set(err, "checkpoint: '%s': __metadata__ '%s' is not a string",
						 path, item->string);
		need += strlen(item->string) + strlen(item->valuestring) + 2;
	}
	f->meta = calloc((size_t)n + 1, sizeof(*f->meta));
	f->meta_storage = malloc(need + 1);
	if (!f->meta || !f->meta_storage)
		return trainer_error_set(err, "checkpoint: '%s': out of memory", path);
	char *p = f->meta_storage;
	cJSON_ArrayForEach(item, meta) {
		struct st_meta *m = &f->meta[f->meta_count++];
		m->key = strcpy(p, item->string);
		p += strlen(p) + 1;
		m->value = strcpy(p, item->valuestring);
		p += strlen(p) + 1;
	}
	return 0;
}

/* A JSON number that is a whole number in [0, 2^53] (exact in a double). */
static int json_size(const cJSON *n, size_t *out)
{
	if (!cJSON_IsNumber(n))
		return -1;
	double v = n->valuedouble;
	if (!(v >= 0 && v <= 9007199254740992.0) || v != (double)(uint64_t)v)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* One tensor entry of the header into *t; checks it against the data. */
static int parse_tensor(const cJSON *e, const uint8_t *data, size_t data_size,
			struct st_tensor *t, const char *path, struct trainer_error *err)
{
	const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype");
	const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");

	if (strlen(e->string) >= sizeof(t->name))
		return trainer_error_set(err, "checkpoint: '%s': tensor '%.40s...': name longer than "
					 "%zu bytes", path, e->string, sizeof(t->name) - 1);
	snprintf(t->name, sizeof(t->name), "%s", e->string);
	if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
	    cJSON_GetArraySize(offs) != 2 || cJSON_GetArraySize(shape) > 8)
		return trainer_error_set(err, "checkpoint: '%s': tensor '%s': malformed header entry",
					 path, t->name);
	size_t elem_bytes = dtype_bytes(dtype->valuestring), elems = 1, begin, end;
	if (!elem_bytes || strlen(dtype->valuestring) >= sizeof(t->dtype))
		return trainer_error_set(err, "checkpoint: '%s': tensor '%s': unknown dtype '%.16s'",
					 path, t->name, text_control_at(dtype->valuestring) >= 0
					 ? "?" : dtype->valuestring);
	snprintf(t->dtype, sizeof(t->dtype), "%s", dtype->valuestring);
	t->ndim = cJSON_GetArraySize(shape);
	for (int d = 0; d < t->ndim; d++) {
		size_t v;
		if (json_size(cJSON_GetArrayItem(shape, d), &v) || __builtin_mul_overflow(elems, v, &elems))
			return trainer_error_set(err, "checkpoint: '%s': tensor '%s': shape: not "
						 "non-negative integers with a product below 2^64", path, t->name);
		t->shape[d] = (int64_t)v;
	}
	if (json_size(cJSON_GetArrayItem(offs, 0), &begin) ||
	    json_size(cJSON_GetArrayItem(offs, 1), &end))
		return trainer_error_set(err, "checkpoint: '%s': tensor '%s': data_offsets: not "
					 "non-negative integers", path, t->name);
	size_t bytes;
	if (__builtin_mul_overflow(elems, elem_bytes, &bytes) || end < begin || end > data_size ||
	    end - begin != bytes)
		return trainer_error_set(err, "checkpoint: '%s': tensor '%s': data outside the file "
					 "or not matching %s x shape (file truncated?)", path, t->name, t->dtype);
	t->data = data + begin;
	t->bytes = bytes;
	return 0;
}

static int parse_header(struct st_file *f, const char *path, struct trainer_error *err)
{
	uint64_t len = 0;

	if (f->size < 8)
		return trainer_error_set(err, "checkpoint: '%s': truncated (%zu bytes)", path, f->size);
	for (int i = 0; i < 8; i++)
		len |= (uint64_t)f->image[i] << (8 * i);
	if (len > f->size - 8)
		return trainer_error_set(err, "checkpoint: '%s': truncated: header of %llu bytes in a %zu-byte file",
					 path, (unsigned long long)len, f->size);
	cJSON *root = cJSON_ParseWithLength((const char *)f->image + 8, (size_t)len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return trainer_error_set(err, "checkpoint: '%s': header is not a JSON object", path);
	}
	const uint8_t *data = f->image + 8 + len;
	size_t data_size = f->size - 8 - (size_t)len;
	f->tensors = calloc((size_t)cJSON_GetArraySize(root) + 1, sizeof(*f->tensors));
	int rc = f->tensors ? 0 : trainer_error_set(err, "checkpoint: '%s': out of memory", path);
	const cJSON *e;
	cJSON_ArrayForEach(e, root) {
		if (rc)
			break;
		if (text_control_at(e->string) >= 0)   /* before any message prints it */
			rc = trainer_error_set(err, "checkpoint: '%s': header: a name with a control "
					       "character at byte %ld", path, text_control_at(e->string));
		else if (strcmp(e->string, "__metadata__") == 0)
			rc = parse_meta(f, e, path, err);
		else if (st_find(f, e->string))
			rc = trainer_error_set(err, "checkpoint: '%s': tensor '%s': given twice", path,
					       e->string);
		else if ((rc = parse_tensor(e, data, data_size, &f->tensors[f->count], path, err)) == 0)
			f->count++;
	}
	cJSON_Delete(root);
	return rc;
}

int st_read(const char *path, struct st_file *f, struct trainer_error *err)
{
	memset(f, 0, sizeof(*f));
	if (read_whole(path, f, err) || parse_header(f, path, err)) {
		st_free(f);
		return -1;
	}
	return 0;
}

const struct st_tensor *st_find(const struct st_file *f, const char *name)
{
	for (int i = 0; i < f->count; i++)
		if (strcmp(f->tensors[i].name, name) == 0)
			return &f->tensors[i];
	return NULL;
}

const char *st_meta_get(const struct st_file *f, const char *key)
{
	for (int i = 0; i < f->meta_count; i++)
		if (strcmp(f->meta[i].key, key) == 0)
			return f->meta[i].value;
	return NULL;
}

void st_free(struct st_file *f)
{
	free(f->image);
	free(f->tensors);
	free(f->meta);
	free(f->meta_storage);
	memset(f, 0, sizeof(*f));
}
