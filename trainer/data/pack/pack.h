/* data/pack/pack.h - packs a data set (data/sets/set.h) into shards (data/pack/shard.h):
 * parallel decode + area resize to size x size (a non-square image padded
 * to a square first: image_resize.h), fixed-size records,
 * train/val/test in separate shard sets, index.txt last.
 *
 * Only into a folder of pack's own (base/own_dir.h: made, found empty, or
 * holding PACK_MARKER); anything else is refused in one line naming
 * --out, nothing written. There it replaces the shards it names, and
 * removes index.txt only when its first line is pack's (SHARD_INDEX_HEAD)
 * and skipped.txt (the marker names both).
 * Crash-safe and resumable: the old index.txt is removed first, each shard
 * is written as .tmp and renamed when complete, and a rerun keeps every
 * shard whose header (same records, same size: plan_crc) is already there.
 * With skip_unreadable a refused image does not stop the pack: its error
 * line goes to OUT/skipped.txt, it is left out, and the shards are planned
 * again without it (those whose records did not change are kept).
 * What this is not: option parsing or progress printing (cmd/pack.c).
 */
#ifndef HVD_TRAINER_DATA_PACK_H
#define HVD_TRAINER_DATA_PACK_H

#include <stddef.h>

#define PACK_MARKER ".chexnet-pack"
#define PACK_MARKER_TEXT "chexnet pack made this folder; a new pack here replaces its " \
	"*.shard files and index.txt, and removes skipped.txt\n"

struct pack_config {
	const char *data_dir, *out_dir;
	int size;                   /* stored side, e.g. 256 */
	int shards;                 /* train shards; 0 = one per 8192 records */
	double val_fraction;
	int threads;                /* decode threads; 0 = all allowed CPUs */
	unsigned views;             /* data/sets/view.h mask of views kept; 0 = all */
	int skip_unreadable;        /* refused images go to OUT/skipped.txt, not an error */
	/* called about 5 times a second from the calling thread */
	void (*progress)(void *ctx, size_t done, size_t total, double seconds);
	void *progress_ctx;
};

struct pack_result {
	size_t records[3];          /* train, val, test */
	int shards;                 /* written + kept */
	int kept;                   /* complete shards a rerun kept */
	size_t skipped;             /* images left out (skip_unreadable) */
	size_t padded;              /* images decoded here that were not square: padded */
	size_t other_modality;      /* DICOM images not CR, DX or DR (packed, noted) */
	char other_example[20];     /* one of their modalities */
	double seconds;
};

int data_pack(const struct pack_config *cfg, struct pack_result *res, char *err, size_t err_bytes);

/* `pack --preview N DIR` (data/pack/preview.c): the first n images of the
 * set (train, val, test; cfg's views; refused ones passed over with
 * cfg's skip_unreadable), as the packer would store them at
 * cfg->size, written as DIR/NNNN-name.png. *written says how many,
 * *square_padded how many of them were not square (padded). */
int data_pack_preview(const struct pack_config *cfg, size_t n, const char *dir, size_t *written,
		      size_t *square_padded, char *err, size_t err_bytes);

/* Shards for a split of count records when train has train_count records
 * split into train_shards: pure, for tests. */
int data_pack_shard_count(size_t count, size_t train_count, int train_shards);

#endif
