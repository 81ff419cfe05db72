/* data/pack/shard.h - the packed shard format, its writer and its reader.
 *
 * A pack directory holds, per split (train, val, test), shard files
 * `<split>-NNNNN.shard` and one `index.txt` written last (temp + fsync +
 * rename): a directory without index.txt is not a pack, and a shard is only
 * ever seen under its final name once complete (written as .tmp, fsync'd,
 * renamed). Little-endian throughout.
 *
 * Shard file = 64-byte header, then `count` records of record_bytes each:
 *   header: magic "HVDSHRD\0", u32 version (2; 1 is read too), u32 split, u32 size S,
 *           u32 record_bytes, u64 first_record (index within the split of
 *           record 0), u32 count, u32 shard, u32 shards, u32 plan_crc
 *           (CRC32C of the names packed: lets a resumed pack keep a shard),
 *           zeros, u32 CRC32C of bytes 0..59 at offset 60.
 *   record: u32 CRC32C of bytes 4..record_bytes-1, u32 record index within
 *           the split, u32 patient id, u16 label mask (bit c = class c),
 *           u8 view (data/sets/view.h; version 1: 0), u8 zero, char name[48] (image base name, NUL-padded, cut to
 *           47 bytes), then S*S grayscale pixels. record_bytes = 64 + S*S.
 * Fixed-size records: record i is at a computable offset, so a reader
 * reads exactly its own records (no streams to interleave, unlike TFRecords).
 * What this is not: the loader (data/load/loader.h) or the pack command.
 */
#ifndef HVD_TRAINER_DATA_SHARD_H
#define HVD_TRAINER_DATA_SHARD_H

#include <stddef.h>
#include <stdint.h>

#define SHARD_VERSION 2   /* 1 still read: its records have no view (unknown) */
#define SHARD_HEADER_BYTES 64
#define SHARD_RECORD_HEADER_BYTES 64
#define SHARD_NAME_BYTES 48
#define SHARD_INDEX_NAME "index.txt"
#define SHARD_INDEX_HEAD "hvd-pack 1\n"   /* its first line */

struct shard_header {
	uint32_t version;       /* decoded; encode writes SHARD_VERSION */
	uint32_t split, size, record_bytes;
	uint64_t first_record;
	uint32_t count, shard, shards, plan_crc;
};

struct shard_record_info {
	uint32_t index, patient;
	uint16_t labels;
	uint8_t view;
	char name[SHARD_NAME_BYTES];
};

const char *shard_split_name(int split);     /* "train", "val", "test" */
size_t shard_record_bytes(int size);

/* Pure encoders/decoders. decode returns 0 or -1 with a reason in why. */
void shard_header_encode(const struct shard_header *h, uint8_t out[SHARD_HEADER_BYTES]);
int shard_header_decode(const uint8_t in[SHARD_HEADER_BYTES], struct shard_header *h,
			const char **why);
void shard_record_encode(uint8_t *rec, int size, const struct shard_record_info *info,
			 const uint8_t *pixels);
int shard_record_decode(const uint8_t *rec, int size, struct shard_record_info *info,
			const char **why);

/* Writer: records may be put in any order and from several threads. */
struct shard_writer {
	int fd;
	struct shard_header h;
	char tmp_path[4400], path[4200];
};
int shard_writer_open(struct shard_writer *w, const char *dir, const struct shard_header *h,
		      char *err, size_t err_bytes);
int shard_writer_put(struct shard_writer *w, uint32_t local, const uint8_t *rec,
		     char *err, size_t err_bytes);
int shard_writer_finish(struct shard_writer *w, char *err, size_t err_bytes);
void shard_writer_abort(struct shard_writer *w);

/* fsync of the directory holding path, so a rename into it is durable
 * (best effort: a file system that cannot sync directories is not an error). */
void shard_fsync_dir_of(const char *path);

/* 1 when dir already holds this shard complete (header equal to h and the
 * exact file size): a resumed pack keeps it. */
int shard_is_complete(const char *dir, const struct shard_header *h);
void shard_file_name(char *out, size_t bytes, int split, uint32_t shard);

/* Reader of one split's shard set, through index.txt. */
struct shard_file {
	int fd;
	char path[4200];
	uint64_t first;
	uint32_t count;
};
struct shard_set {
	int split, size;
	size_t record_bytes, count;
	int file_count;
	struct shard_file *files;
};

/* Opens path read-only, checks header and exact file size (a truncated
 * tail is an error naming the offset), fills h and *fd. */
int shard_open_checked(const char *path, struct shard_header *h, int *fd,
		       char *err, size_t err_bytes);

/* 1 when dir has an index.txt (is a pack). */
int shard_dir_is_pack(const char *dir);

/* Opens and checks every shard of split named by dir/index.txt (headers,
 * sizes, contiguous numbering). Errors name the file and line or offset. */
int shard_set_open(struct shard_set *s, const char *dir, int split, char *err, size_t err_bytes);

/* Reads record i into rec (record_bytes), checks CRC and index, and returns
 * its fields; the pixels are at rec + SHARD_RECORD_HEADER_BYTES. */
int shard_set_read(const struct shard_set *s, size_t i, uint8_t *rec,
		   struct shard_record_info *info, char *err, size_t err_bytes);
void shard_set_close(struct shard_set *s);

/* index.txt: `hvd-pack 1`, `size S`, `pixels RULE`, with patient_key
 * `patient-key HEX` (data/sets/patient.h), then per shard
 * `shard SPLIT NUMBER FILE FIRST COUNT`, then per split
 * `labels SPLIT RECORDS P0 ... P13` (positives per class, for class
 * weights without reading the shards). Written atomically.
 * label_counts[split] = { records, positives of class 0..13 }. */
#define SHARD_COUNTS (1 + 14)
int shard_index_write(const char *dir, int size, const struct shard_header *shards,
		      int shard_count, const uint64_t label_counts[3][SHARD_COUNTS],
		      const uint8_t *patient_key, char *err, size_t err_bytes);

/* The `labels` line of split from dir/index.txt. */
int shard_index_label_counts(const char *dir, int split, uint64_t counts[SHARD_COUNTS],
			     char *err, size_t err_bytes);

#endif
