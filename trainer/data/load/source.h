/* data/load/source.h - random access to the records of one split, from a pack
 * (shards) or, in direct mode, from an NIH/generic folder (decode + area
 * resize to the stored size, exactly what `chexnet pack` stores). Safe to
 * read from several threads, each with its own scratch buffer.
 * What this is not: ordering or batching (data/load/loader.c).
 */
#ifndef HVD_TRAINER_DATA_SOURCE_H
#define HVD_TRAINER_DATA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "data/sets/set.h"
#include "data/pack/shard.h"

struct data_source {
	int packed;
	int size;                   /* stored side S */
	size_t count;
	struct shard_set shards;    /* packed */
	struct data_set *set;       /* direct */
	const struct data_list *list;
};

/* stored_size and val_fraction apply to direct mode only. */
int data_source_open(struct data_source *src, const char *dir, int split,
		     int stored_size, double val_fraction, char *err, size_t err_bytes);
size_t data_source_scratch_bytes(const struct data_source *src);

/* Record i: S*S pixels, its label mask and its patient id. */
int data_source_read(const struct data_source *src, size_t i, uint8_t *pixels,
		     uint16_t *labels, uint32_t *patient, void *scratch, char *err,
		     size_t err_bytes);
void data_source_close(struct data_source *src);

#endif
