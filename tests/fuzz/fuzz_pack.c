/* fuzz_pack.c - libFuzzer target for a pack's files (data/pack/shard.c,
 * data/pack/shard_index.c, data/pack/shard_index_read.c): the first input byte picks
 * whether the rest is index.txt (beside valid shards) or the train shard
 * (beside a valid index; with bit 7 set, its header and record CRC32Cs are
 * recomputed so mutations get past them). Every split is then opened,
 * its label counts read, and every record of an open set read; each must
 * succeed or fail with one line, and what is read must agree with the
 * index (records within the split, positives at most the records).
 * Seeds: the valid index and shard.
 * What it does not do: run the loader's threads (test_data_loader.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crc32c.h"
#include "data/pack/shard.h"
#include "fuzz_files.h"

#define SIDE 4
#define PER_SHARD 2

static uint8_t *good_index, *good_shard;
static size_t good_index_bytes, good_shard_bytes;

static uint8_t *slurp(const char *path, size_t *bytes)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 16);
	*bytes = f ? fread(buf, 1, 1 << 16, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void write_shard(const char *dir, int split)
{
	struct shard_header h = { .split = (uint32_t)split, .size = SIDE,
				  .record_bytes = (uint32_t)shard_record_bytes(SIDE),
				  .first_record = 0, .count = PER_SHARD, .shard = 0, .shards = 1 };
	struct shard_writer w;
	uint8_t rec[SHARD_RECORD_HEADER_BYTES + SIDE * SIDE], px[SIDE * SIDE];
	char err[512];
	if (shard_writer_open(&w, dir, &h, err, sizeof(err)) != 0)
		abort();
	for (uint32_t i = 0; i < PER_SHARD; i++) {
		struct shard_record_info info = { .index = i, .patient = i + 1, .labels = (uint16_t)(i + 1) };
		snprintf(info.name, sizeof(info.name), "%u.png", i);
		memset(px, (int)i * 40, sizeof(px));
		shard_record_encode(rec, SIDE, &info, px);
		if (shard_writer_put(&w, i, rec, err, sizeof(err)) != 0)
			abort();
	}
	if (shard_writer_finish(&w, err, sizeof(err)) != 0)
		abort();
}

/* A valid pack: one shard of two records per split, and its index. */
static void make_pack(void)
{
	struct shard_header h[3];
	uint64_t counts[3][SHARD_COUNTS] = { { 0 } };
	char err[512], path[1024];
	for (int s = 0; s < 3; s++) {
		write_shard(fuzz_dir(), s);
		h[s] = (struct shard_header){ .split = (uint32_t)s, .size = SIDE, .count = PER_SHARD,
					      .shards = 1 };
		counts[s][0] = PER_SHARD;
		counts[s][1] = 1;
		counts[s][2] = 1;
	}
	if (shard_index_write(fuzz_dir(), SIDE, h, 3, counts, NULL, err, sizeof(err)) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), SHARD_INDEX_NAME);
	good_index = slurp(path, &good_index_bytes);
	snprintf(path, sizeof(path), "%s/train-00000.shard", fuzz_dir());
	good_shard = slurp(path, &good_shard_bytes);
}

static void fix_crcs(uint8_t *p, size_t size)
{
	if (size < SHARD_HEADER_BYTES)
		return;
	uint32_t c = crc32c(0, p, 60);
	memcpy(p + 60, &c, 4);   /* little-endian hosts only: this is a test */
	size_t rb = shard_record_bytes(SIDE);
	for (size_t at = SHARD_HEADER_BYTES; at + rb <= size; at += rb) {
		c = crc32c(0, p + at + 4, rb - 4);
		memcpy(p + at, &c, 4);
	}
}

static void one_line(const char *err)
{
	if (!err[0] || strchr(err, '\n'))
		abort();
}

static void check_split(int split)
{
	struct shard_set s;
	uint64_t counts[SHARD_COUNTS];
	uint8_t rec[SHARD_RECORD_HEADER_BYTES + SIDE * SIDE];
	char err[1024] = "";
	if (shard_index_label_counts(fuzz_dir(), split, counts, err, sizeof(err)) == 0) {
		for (int c = 1; c < SHARD_COUNTS; c++)
			if (counts[c] > counts[0])
				abort();
	} else {
		one_line(err);
	}
	err[0] = 0;
	if (shard_set_open(&s, fuzz_dir(), split, err, sizeof(err)) != 0) {
		one_line(err);
		return;
	}
	for (size_t i = 0; i < s.count; i++) {
		struct shard_record_info info;
		uint8_t *buf = s.record_bytes <= sizeof(rec) ? rec : malloc(s.record_bytes);
		err[0] = 0;
		if (shard_set_read(&s, i, buf, &info, err, sizeof(err)) != 0)
			one_line(err);
		else if (info.index != i)
			abort();
		if (buf != rec)
			free(buf);
	}
	shard_set_close(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!good_index)
		make_pack();
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		uint8_t *copy = malloc(size);
		memcpy(copy, data + 1, size - 1);
		if (data[0] & 0x80)
			fix_crcs(copy, size - 1);
		fuzz_write("train-00000.shard", copy, size - 1);
		fuzz_write(SHARD_INDEX_NAME, good_index, good_index_bytes);
		free(copy);
	} else {
		fuzz_write(SHARD_INDEX_NAME, data + 1, size - 1);
		fuzz_write("train-00000.shard", good_shard, good_shard_bytes);
	}
	for (int split = 0; split < 3; split++)
		check_split(split);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	make_pack();
	if (!dir)
		return 0;
	uint8_t *buf = malloc(1 + good_shard_bytes + good_index_bytes);
	buf[0] = 0;
	memcpy(buf + 1, good_index, good_index_bytes);
	fuzz_seed(dir, "seed-index", buf, 1 + good_index_bytes);
	buf[0] = 0x81;
	memcpy(buf + 1, good_shard, good_shard_bytes);
	fuzz_seed(dir, "seed-shard", buf, 1 + good_shard_bytes);
	free(buf);
	return 0;
}
