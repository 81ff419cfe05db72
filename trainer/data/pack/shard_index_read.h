/* data/pack/shard_index_read.h - reads a pack's index.txt strictly: every line
 * is `hvd-pack 1`, `size S`, `shard SPLIT NUMBER FILE FIRST COUNT`,
 * `labels SPLIT RECORDS P0 ... P13` or (at most once, optional)
 * `pixels RULE` (how images became 8 bits: printable ASCII) or (optional,
 * once) `patient-key HEX` (32 hex digits: data/sets/patient.h) or (optional,
 * once) `aspect pad|squash` (how non-square images became square; a pack
 * without the line squashed them), single spaces, unsigned decimal
 * numbers without sign that fit their field. Shards of a split are
 * numbered 0, 1, ... with FILE the name the packer gives them, each holds
 * at least one record and starts where the previous one ended; every split
 * has one labels line whose RECORDS equals its shards' records and whose
 * positives are at most RECORDS. Anything else is an error naming the
 * file, the line and the field.
 * What it does not do: open shards (data/pack/shard_index.c).
 */
#ifndef HVD_TRAINER_DATA_SHARD_INDEX_READ_H
#define HVD_TRAINER_DATA_SHARD_INDEX_READ_H

#include <stddef.h>
#include <stdint.h>

#include "data/image/image_resize.h"
#include "data/pack/shard.h"

struct shard_index_entry {
	int split;
	uint32_t number, count;
	uint64_t first;
	char file[SHARD_NAME_BYTES];
};

struct shard_index {
	int size;
	int entry_count;
	struct shard_index_entry *entries;      /* in file order */
	uint64_t labels[3][SHARD_COUNTS];       /* per split: records, positives */
	char pixels[160];                       /* the pixels rule; "" when absent */
	enum image_aspect aspect;               /* SQUASH when the line is absent */
	int has_patient_key;
	uint8_t patient_key[16];                /* DICOM Patient IDs' key */
};

/* Reads dir/index.txt. Returns 0, or -1 with a one-line message in err. */
int shard_index_read(const char *dir, struct shard_index *ix, char *err, size_t err_bytes);
void shard_index_free(struct shard_index *ix);

#endif
