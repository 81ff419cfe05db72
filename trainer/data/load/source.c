/* data/load/source.c - one split's records from shards or straight from image
 * files. What it does not do: augmentation or batching.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/load/loader.h"
#include "data/load/source.h"
#include "data/codec/image_decode.h"

int data_source_open(struct data_source *src, const char *dir, int split, int stored_size,
		     enum image_aspect aspect, double val_fraction, char *err, size_t err_bytes)
{
	memset(src, 0, sizeof(*src));
	if (shard_dir_is_pack(dir)) {
		if (shard_set_open(&src->shards, dir, split, err, err_bytes) != 0)
			return -1;
		src->packed = 1;
		src->pack_size = src->shards.size;
		src->size = stored_size ? stored_size : src->shards.size;
		src->count = src->shards.count;
		return 0;
	}
	src->set = malloc(sizeof(*src->set));
	if (!src->set) {
		snprintf(err, err_bytes, "chexnet: data dir '%s': out of memory", dir);
		return -1;
	}
	if (data_set_open(src->set, dir, val_fraction, err, err_bytes) != 0) {
		free(src->set);
		src->set = NULL;
		return -1;
	}
	src->size = stored_size;
	src->aspect = aspect;
	src->list = &src->set->split[split];
	src->count = src->list->count;
	return 0;
}

size_t data_source_scratch_bytes(const struct data_source *src)
{
	return src->packed ? src->shards.record_bytes : 4096;
}

int data_source_read(const struct data_source *src, size_t i, uint8_t *pixels,
		     uint16_t *labels, uint32_t *patient, void *scratch, char *err,
		     size_t err_bytes)
{
	if (src->packed) {
		struct shard_record_info info;
		if (shard_set_read(&src->shards, i, scratch, &info, err, err_bytes) != 0)
			return -1;
		const uint8_t *rec = (uint8_t *)scratch + SHARD_RECORD_HEADER_BYTES;
		if (src->pack_size == src->size)
			memcpy(pixels, rec, (size_t)src->size * src->size);
		else
			image_resize_area(rec, src->pack_size, src->pack_size, pixels, src->size, src->size);
		*labels = info.labels;
		*patient = info.patient;
		return 0;
	}
	const struct data_entry *e = &src->list->items[i];
	char *path = scratch;
	if (data_set_image_path(src->set, e, path, 4096, err, err_bytes) != 0 ||
	    image_load_square(path, src->size, src->aspect, pixels, NULL, err, err_bytes) != 0)
		return -1;
	*labels = e->labels;
	*patient = e->patient;
	return 0;
}

void data_source_close(struct data_source *src)
{
	if (src->packed)
		shard_set_close(&src->shards);
	if (src->set) {
		data_set_free(src->set);
		free(src->set);
	}
	memset(src, 0, sizeof(*src));
}

int data_split_label_counts(const char *dir, int split, double val_fraction,
			    size_t positives[CHEXNET_CLASSES], size_t *records,
			    char *err, size_t err_bytes)
{
	if (shard_dir_is_pack(dir)) {
		uint64_t counts[SHARD_COUNTS];
		if (shard_index_label_counts(dir, split, counts, err, err_bytes) != 0)
			return -1;
		*records = (size_t)counts[0];
		for (int c = 0; c < CHEXNET_CLASSES; c++)
			positives[c] = (size_t)counts[1 + c];
		return 0;
	}
	struct data_set *set = malloc(sizeof(*set));
	if (!set || data_set_open(set, dir, val_fraction < 0 ? 0.1 : val_fraction, err, err_bytes) != 0) {
		if (!set)
			snprintf(err, err_bytes, "chexnet: data dir '%s': out of memory", dir);
		free(set);
		return -1;
	}
	const struct data_list *l = &set->split[split];
	*records = l->count;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		positives[c] = 0;
	for (size_t i = 0; i < l->count; i++)
		for (int c = 0; c < CHEXNET_CLASSES; c++)
			positives[c] += (l->items[i].labels >> c) & 1;
	data_set_free(set);
	free(set);
	return 0;
}
