/* data/load/source.h - random access to the records of one split, from a pack
 * (shards) or, in direct mode, from an NIH/generic folder (decode + area
 * resize to the stored size, exactly what `chexnet pack` stores). A pack
 * asked for another stored size than its own has each record
 * area-resized to it (close to, not exactly, a pack made at that size). Safe to
 * read from several threads, each with its own scratch buffer.
 * What this is not: ordering or batching (data/load/loader.c).
 */
#ifndef HVD_TRAINER_DATA_SOURCE_H
#define HVD_TRAINER_DATA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "data/image/image_resize.h"
#include "data/sets/set.h"
#include "data/pack/shard.h"

struct data_source {
	int packed;
	int size;                   /* stored side S */
	int pack_size;              /* packed: the records' side (S or resized to S) */
	enum image_aspect aspect;   /* direct: how non-square images become square */
	size_t count;
	struct shard_set shards;    /* packed */
	struct data_set *set;       /* direct */
	const struct data_list *list;
};

/* stored_size: the side records are given at (0: a pack's own, a
 * folder's is required); aspect and val_fraction apply to direct mode. */
int data_source_open(struct data_source *src, const char *dir, int split, int stored_size,
		     enum image_aspect aspect, double val_fraction, char *err, size_t err_bytes);
size_t data_source_scratch_bytes(const struct data_source *src);

/* Record i: S*S pixels, its label mask and its patient id. */
int data_source_read(const struct data_source *src, size_t i, uint8_t *pixels,
		     uint16_t *labels, uint32_t *patient, void *scratch, char *err,
		     size_t err_bytes);
void data_source_close(struct data_source *src);

#endif
