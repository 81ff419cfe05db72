/* test_data_loader.c - group data-loader: synth -> pack -> load round trip
 * (bit-exact), direct mode == packed, exactly-once evaluation across 1, 2
 * and 3 ranks, determinism per seed and across thread counts, identical
 * global batches for (R=1,K=2)/(R=2,K=1) and (R=1,K=4)/(R=4,K=1), epochs
 * and resume, augmentation, and the errors of a damaged pack (bad CRC,
 * truncated tail, trailing bytes, missing image) through the library.
 * What it does not do: the `pack` command line (test_data_pack.c) or
 * measure speed (bench/loader does).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "data/load/loader.h"
#include "data/load/order.h"
#include "data/pack/pack.h"
#include "data/sets/set.h"
#include "data/pack/shard.h"
#include "data/synth/synth.h"
#include "data/codec/image_decode.h"
#include "data/image/image_resize.h"
#include "runner.h"

#define SYNTH_COUNT 120
#define STORED 48

static int one_line(const char *s) { return s && *s && !strchr(s, '\n'); }

/* tmpdir/nih (synth) and tmpdir/pack; returns 0 when both were made. */
static int make_data(int pack_size, int shards)
{
	char err[2048] = "", *nih = test_path(test_tmpdir(), "nih"), *out = test_path(test_tmpdir(), "pack");
	struct synth_config sc = { .out_dir = nih, .count = SYNTH_COUNT, .size = 64, .seed = 3,
				   .floor = 0.05, .threads = 2 };
	struct pack_config pc = { .data_dir = nih, .out_dir = out, .size = pack_size, .shards = shards,
				  .val_fraction = 0.2, .threads = 2 };
	struct pack_result res;
	int rc = data_synth(&sc, err, sizeof(err));
	CHECK_MSG(rc == 0, "synth: %s", err);
	if (rc == 0) {
		rc = data_pack(&pc, &res, err, sizeof(err));
		CHECK_MSG(rc == 0, "pack: %s", err);
	}
	free(nih);
	free(out);
	return rc;
}

static struct data_loader *open_loader(const char *sub, enum data_split split, int rank, int world,
				       int batch, int accum, int threads, uint64_t seed)
{
	struct data_loader_config c;
	char err[2048] = "", *dir = test_path(test_tmpdir(), sub);
	data_loader_config_init(&c);
	c.dir = dir;
	c.split = split;
	c.rank = rank;
	c.world_size = world;
	c.batch = batch;
	c.accumulation = accum;
	c.size = split == DATA_TRAIN ? 40 : STORED;
	c.crop = split == DATA_TRAIN ? DATA_CROP_RANDOM : DATA_CROP_CENTER;
	c.flip = split == DATA_TRAIN;
	c.seed = seed;
	c.threads = threads;
	c.stored_size = STORED;
	c.val_fraction = 0.2;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "open %s: %s", sub, err);
	free(dir);
	return dl;
}

static void test_pack_load_round_trip_bit_exact(void)
{
	if (make_data(STORED, 3) != 0)
		return;
	struct data_set set;
	char err[2048] = "", path[8192], *nih = test_path(test_tmpdir(), "nih");
	CHECK_INT(data_set_open(&set, nih, 0.2, err, sizeof(err)), 0);
	struct data_loader *dl = open_loader("pack", DATA_TEST, 0, 1, 7, 1, 2, 1);
	if (!dl)
		return;
	CHECK_INT(data_loader_records(dl), set.split[DATA_TEST].count);
	uint8_t want[STORED * STORED];
	struct batch *b;
	size_t seen = 0;
	int rc;
	while ((rc = data_loader_next(dl, &b)) == 1) {
		for (int t = 0; t < b->count; t++) {
			const struct data_entry *e = &set.split[DATA_TEST].items[b->index[t]];
			CHECK_INT(data_set_image_path(&set, e, path, sizeof(path), err, sizeof(err)), 0);
			CHECK_INT(image_load_square(path, STORED, IMAGE_ASPECT_PAD, want, NULL, err, sizeof(err)), 0);
			CHECK(memcmp(b->pixels + (size_t)t * STORED * STORED, want, sizeof(want)) == 0);
			for (int c = 0; c < CHEXNET_CLASSES; c++)
				CHECK(b->labels[t * CHEXNET_CLASSES + c] == (float)((e->labels >> c) & 1));
			seen++;
		}
		data_loader_release(dl, b);
	}
	CHECK_INT(rc, 0);
	CHECK_INT(seen, set.split[DATA_TEST].count);
	data_loader_close(dl);
	data_set_free(&set);
	free(nih);
}

/* FNV-1a of a batch's valid images, indices and labels. */
static uint64_t batch_hash(const struct batch *b)
{
	uint64_t h = 1469598103934665603ull;
	size_t px = (size_t)b->size * b->size;
	for (int t = 0; t < b->count; t++) {
		uint32_t c = crc32c(0, b->pixels + t * px, px) ^ b->index[t];
		c = crc32c(c, b->labels + t * CHEXNET_CLASSES, CHEXNET_CLASSES * sizeof(float));
		h = (h ^ c) * 1099511628211ull;
	}
	return h;
}

static void test_direct_mode_equals_packed(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	struct data_loader *a = open_loader("pack", DATA_TRAIN, 0, 1, 8, 1, 1, 9);
	struct data_loader *b = open_loader("nih", DATA_TRAIN, 0, 1, 8, 1, 2, 9);
	if (!a || !b)
		return;
	CHECK_INT(data_loader_records(a), data_loader_records(b));
	for (int i = 0; i < 12; i++) {  /* across the end of the first epoch */
		struct batch *x, *y;
		int ra = data_loader_next(a, &x), rb = data_loader_next(b, &y);
		CHECK_INT(ra, rb);
		if (ra == 0) {
			ra = data_loader_next(a, &x);
			rb = data_loader_next(b, &y);
		}
		CHECK_INT(ra, 1);
		CHECK_INT(rb, 1);
		if (!x || !y)
			break;
		CHECK(batch_hash(x) == batch_hash(y));
		CHECK(memcmp(x->index, y->index, 8 * sizeof(uint32_t)) == 0);
		data_loader_release(a, x);
		data_loader_release(b, y);
	}
	data_loader_close(a);
	data_loader_close(b);
}

static void test_eval_exactly_once_across_1_2_3_ranks(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	for (int world = 1; world <= 3; world++) {
		int seen[SYNTH_COUNT] = { 0 };
		long batches[3] = { 0 };
		size_t n = 0;
		for (int r = 0; r < world; r++) {
			struct data_loader *dl = open_loader("pack", DATA_VAL, r, world, 5, 1, 2, 0);
			if (!dl)
				return;
			n = data_loader_records(dl);
			struct batch *b;
			while (data_loader_next(dl, &b) == 1) {
				batches[r]++;
				for (int t = 0; t < b->capacity; t++) {
					if (t < b->count && b->index[t] < SYNTH_COUNT)
						seen[b->index[t]]++;
					if (t >= b->count)  /* padding: marked, zeroed */
						CHECK(b->index[t] == UINT32_MAX && b->pixels[t * STORED * STORED] == 0);
				}
				data_loader_release(dl, b);
			}
			data_loader_close(dl);
		}
		for (size_t i = 0; i < n; i++)
			CHECK_MSG(seen[i] == 1, "world %d: record %zu seen %d times", world, i, seen[i]);
		for (int r = 1; r < world; r++)
			CHECK_INT(batches[r], batches[0]);  /* every rank runs the same number */
		CHECK(n > 10);
	}
}

/* Global micro-batch j = union over ranks; step s = K consecutive ones. The
 * per-step multiset of (record, pixels, labels) is summed order-free. */
static void step_hashes(int world, int accum, int batch, int steps, uint64_t *out, int threads)
{
	memset(out, 0, sizeof(*out) * (size_t)steps);
	for (int r = 0; r < world; r++) {
		struct data_loader *dl = open_loader("pack", DATA_TRAIN, r, world, batch, accum, threads, 5);
		if (!dl)
			return;
		for (int s = 0; s < steps; s++)
			for (int k = 0; k < accum; k++) {
				struct batch *b;
				if (data_loader_next(dl, &b) != 1) {
					/* end of epoch: continue with the next one */
					CHECK_INT(data_loader_next(dl, &b), 1);
				}
				if (!b)
					return;
				size_t px = (size_t)b->size * b->size;
				for (int t = 0; t < b->count; t++)
					out[s] += crc32c(b->index[t], b->pixels + t * px, px) *
						  (uint64_t)(b->labels[t * CHEXNET_CLASSES] + 3);
				data_loader_release(dl, b);
			}
		data_loader_close(dl);
	}
}

static void test_global_batches_identical_for_same_r_times_k(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	enum { STEPS = 9 };  /* more than one epoch (training split ~76 records / 8 per step) */
	uint64_t a[STEPS], b[STEPS], c[STEPS], d[STEPS], e[STEPS];
	step_hashes(1, 2, 4, STEPS, a, 1);
	step_hashes(2, 1, 4, STEPS, b, 2);
	for (int s = 0; s < STEPS; s++)
		CHECK_MSG(a[s] == b[s], "step %d: R=1,K=2 differs from R=2,K=1", s);
	step_hashes(1, 4, 2, STEPS, c, 2);
	step_hashes(4, 1, 2, STEPS, d, 1);
	step_hashes(2, 2, 2, STEPS, e, 3);
	for (int s = 0; s < STEPS; s++) {
		CHECK_MSG(c[s] == d[s], "step %d: R=1,K=4 differs from R=4,K=1", s);
		CHECK_MSG(c[s] == e[s], "step %d: R=1,K=4 differs from R=2,K=2", s);
		CHECK_MSG(a[s] == c[s], "step %d: B=4,K=2 differs from B=2,K=4", s);
	}
	CHECK(a[0] != a[1]);
}

static void test_deterministic_per_seed_and_thread_count(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	uint64_t h[4][20];
	const int threads[4] = { 1, 4, 2, 1 };
	const uint64_t seeds[4] = { 11, 11, 11, 12 };
	for (int k = 0; k < 4; k++) {
		struct data_loader *dl = open_loader("pack", DATA_TRAIN, 1, 2, 6, 1, threads[k], seeds[k]);
		if (!dl)
			return;
		for (int i = 0; i < 20; i++) {
			struct batch *b;
			int rc = data_loader_next(dl, &b);
			if (rc == 0)
				rc = data_loader_next(dl, &b);
			CHECK_INT(rc, 1);
			h[k][i] = b ? batch_hash(b) : 0;
			if (b)
				data_loader_release(dl, b);
		}
		data_loader_close(dl);
	}
	CHECK(memcmp(h[0], h[1], sizeof(h[0])) == 0);
	CHECK(memcmp(h[0], h[2], sizeof(h[0])) == 0);
	CHECK(memcmp(h[0], h[3], sizeof(h[0])) != 0);
}

static void test_epochs_permute_cut_and_resume(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	struct data_loader *dl = open_loader("pack", DATA_TRAIN, 0, 1, 5, 2, 2, 21);
	if (!dl)
		return;
	size_t n = data_loader_records(dl);
	long m = data_loader_batches_per_epoch(dl);
	CHECK_INT(m, (long)(n / 10) * 2);
	uint64_t order[2][SYNTH_COUNT], after[4];
	for (int e = 0; e < 2; e++) {
		int seen[SYNTH_COUNT] = { 0 };
		struct batch *b;
		for (long j = 0; j < m; j++) {
			CHECK_INT(data_loader_next(dl, &b), 1);
			for (int t = 0; b && t < b->count; t++) {
				order[e][j * 5 + t] = b->index[t];
				seen[b->index[t]]++;
			}
			if (b)
				data_loader_release(dl, b);
		}
		for (size_t i = 0; i < n; i++)
			CHECK(seen[i] <= 1);  /* a permutation, cut to a multiple of 10 */
		CHECK_INT(data_loader_next(dl, &b), 0);  /* end of epoch */
		CHECK(b == NULL);
		CHECK(data_loader_last_wait(dl) >= 0);
	}
	CHECK(memcmp(order[0], order[1], sizeof(uint64_t) * (size_t)m * 5) != 0);
	/* resume at (epoch 2, step 1) == what the running loader does next */
	struct batch *b;
	CHECK_INT(data_loader_next(dl, &b), 1);
	data_loader_release(dl, b);
	CHECK_INT(data_loader_next(dl, &b), 1);
	data_loader_release(dl, b);
	int epoch;
	long step, micro;
	data_loader_position(dl, &epoch, &step, &micro);
	CHECK_INT(epoch, 2);
	CHECK_INT(step, 1);
	CHECK_INT(micro, 2);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(data_loader_next(dl, &b), 1);
		after[i] = batch_hash(b);
		data_loader_release(dl, b);
	}
	CHECK(data_loader_total_wait(dl) >= 0);
	data_loader_close(dl);
	struct data_loader_config c;
	char err[2048] = "", *dir = test_path(test_tmpdir(), "pack");
	data_loader_config_init(&c);
	c.dir = dir, c.split = DATA_TRAIN, c.batch = 5, c.accumulation = 2, c.size = 40;
	c.flip = 1, c.seed = 21, c.threads = 3, c.start_epoch = 2, c.start_step = 1;
	dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	for (int i = 0; dl && i < 4; i++) {
		CHECK_INT(data_loader_next(dl, &b), 1);
		CHECK(batch_hash(b) == after[i]);
		data_loader_release(dl, b);
	}
	data_loader_close(dl);
	free(dir);
}

/* The last step of an epoch resumes; one more, or one that would wrap
 * around when multiplied by K, is refused. */
static void test_resume_step_must_lie_inside_the_epoch(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	struct data_loader *dl = open_loader("pack", DATA_TRAIN, 0, 1, 5, 2, 1, 21);
	if (!dl)
		return;
	long steps = data_loader_batches_per_epoch(dl) / 2;
	data_loader_close(dl);
	struct data_loader_config c;
	char err[2048] = "", *dir = test_path(test_tmpdir(), "pack");
	data_loader_config_init(&c);
	c.dir = dir, c.split = DATA_TRAIN, c.batch = 5, c.accumulation = 2, c.size = 40;
	c.threads = 1, c.start_epoch = 3, c.start_step = steps - 1;
	dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	data_loader_close(dl);
	const long bad_steps[] = { steps, LONG_MAX / 2 + 1 };
	for (int i = 0; i < 2; i++) {
		c.start_step = bad_steps[i];
		dl = data_loader_open(&c, err, sizeof(err));
		CHECK(dl == NULL);
		data_loader_close(dl);
		CHECK_CONTAINS(err, "': beyond the ");
	}
	free(dir);
}

/* Which crop of stored (STORED x STORED) img (side x side) is: 0 and
 * *flipped when some offset and flip reproduce it exactly, else -1. */
static int find_crop(const uint8_t *stored, const uint8_t *img, int side, int *flipped)
{
	uint8_t tmp[STORED * STORED];
	for (int f = 0; f < 2; f++)
		for (int y = 0; y + side <= STORED; y++)
			for (int x = 0; x + side <= STORED; x++) {
				image_crop(stored, STORED, x, y, side, f, tmp);
				if (memcmp(tmp, img, (size_t)side * side) == 0) {
					*flipped = f;
					return 0;
				}
			}
	return -1;
}

/* Training images are crops of their stored record, flipped for about
 * half of them (seeded per position), never flipped with flip off. */
static void test_random_crop_and_flip_come_from_the_stored_image(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	char err[2048] = "", *pack = test_path(test_tmpdir(), "pack");
	struct shard_set set;
	uint8_t rec[SHARD_RECORD_HEADER_BYTES + STORED * STORED];
	struct shard_record_info info;
	CHECK_INT(shard_set_open(&set, pack, DATA_TRAIN, err, sizeof(err)), 0);
	for (int flip = 0; flip < 2; flip++) {
		struct data_loader *dl = open_loader("pack", DATA_TRAIN, 0, 1, 10, 1, 2, 5);
		if (!dl)
			break;
		int counts[2] = { 0 }, unmatched = 0;
		struct batch *b;
		if (!flip) {   /* the same loader with flip off */
			data_loader_close(dl);
			struct data_loader_config c;
			data_loader_config_init(&c);
			c.dir = pack, c.split = DATA_TRAIN, c.batch = 10, c.size = 40, c.seed = 5;
			c.threads = 2;
			dl = data_loader_open(&c, err, sizeof(err));
			CHECK_MSG(dl != NULL, "%s", err);
			if (!dl)
				break;
		}
		while (data_loader_next(dl, &b) == 1) {
			for (int t = 0; t < b->count; t++) {
				int flipped = 0;
				CHECK_INT(shard_set_read(&set, b->index[t], rec, &info, err, sizeof(err)), 0);
				if (find_crop(rec + SHARD_RECORD_HEADER_BYTES,
					      b->pixels + (size_t)t * 40 * 40, 40, &flipped) != 0)
					unmatched++;
				else
					counts[flipped]++;
			}
			data_loader_release(dl, b);
		}
		data_loader_close(dl);
		CHECK_INT(unmatched, 0);
		int total = counts[0] + counts[1];
		CHECK(total >= 40);
		if (flip)
			CHECK_MSG(counts[1] > total / 4 && counts[0] > total / 4,
				  "%d flipped of %d", counts[1], total);
		else
			CHECK_INT(counts[1], 0);
	}
	shard_set_close(&set);
	free(pack);
}

static void test_permutation_is_a_bijection(void)
{
	const uint64_t sizes[] = { 1, 2, 3, 17, 1000, 4099 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t n = sizes[k];
		uint8_t *hit = calloc(n, 1);
		for (uint64_t p = 0; p < n; p++) {
			uint64_t v = data_order_permute(7, 3, n, p);
			CHECK(v < n);
			if (v < n)
				hit[v]++;
		}
		for (uint64_t i = 0; i < n; i++)
			CHECK(hit[i] == 1);
		free(hit);
	}
	struct data_plan p;
	const char *why = NULL;
	CHECK_INT(data_plan_init(&p, 10, 3, 2, 2, 1, &why), -1);
	CHECK_CONTAINS(why, "fewer training records");
}

/* Flips one pixel byte of record `rec` in the first train shard. */
static void corrupt_byte(const char *shard, size_t rec, int size)
{
	FILE *f = fopen(shard, "r+b");
	long at = SHARD_HEADER_BYTES + (long)(rec * shard_record_bytes(size)) + SHARD_RECORD_HEADER_BYTES + 3;
	int c;
	CHECK(f != NULL);
	if (!f)
		return;
	fseek(f, at, SEEK_SET);
	c = fgetc(f);
	fseek(f, at, SEEK_SET);
	fputc(c ^ 0x40, f);
	fclose(f);
}

static void test_damaged_pack_is_an_error_naming_offset(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	char err[2048] = "", *shard = test_path(test_tmpdir(), "pack/test-00000.shard");
	struct shard_set s;
	uint8_t rec[SHARD_RECORD_HEADER_BYTES + STORED * STORED];
	struct shard_record_info info;
	corrupt_byte(shard, 2, STORED);
	CHECK_INT(shard_set_open(&s, test_path(test_tmpdir(), "pack"), DATA_TEST, err, sizeof(err)), 0);
	CHECK_INT(shard_set_read(&s, 1, rec, &info, err, sizeof(err)), 0);
	CHECK_INT(shard_set_read(&s, 2, rec, &info, err, sizeof(err)), -1);
	char want[128];
	snprintf(want, sizeof(want), "test-00000.shard': offset %zu: record 2: record CRC32C mismatch",
		 SHARD_HEADER_BYTES + 2 * shard_record_bytes(STORED));
	CHECK_CONTAINS(err, want);
	CHECK(one_line(err));
	shard_set_close(&s);
	/* through the loader: next() fails with the same message */
	struct data_loader *dl = open_loader("pack", DATA_TEST, 0, 1, 4, 1, 2, 0);
	struct batch *b;
	if (dl) {
		CHECK_INT(data_loader_next(dl, &b), -1);
		CHECK_CONTAINS(data_loader_error(dl), "record CRC32C mismatch");
		data_loader_close(dl);
	}
	/* one byte too many: a shard is complete only at its exact size */
	char *pack = test_path(test_tmpdir(), "pack");
	FILE *f = fopen(shard, "ab");
	CHECK(f && fputc(0, f) == 0 && fclose(f) == 0);
	CHECK_INT(shard_set_open(&s, pack, DATA_TEST, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "test-00000.shard': offset ");
	CHECK_CONTAINS(err, ": trailing bytes (");
	free(pack);
	/* truncated tail */
	CHECK_INT(truncate(shard, 1000), 0);
	CHECK_INT(shard_set_open(&s, test_path(test_tmpdir(), "pack"), DATA_TEST, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "test-00000.shard': offset 1000: truncated tail");
	free(shard);
}

static void test_missing_image_in_direct_mode(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	struct data_set set;
	char err[2048] = "", path[8192], *nih = test_path(test_tmpdir(), "nih");
	CHECK_INT(data_set_open(&set, nih, 0.2, err, sizeof(err)), 0);
	const struct data_entry *e = &set.split[DATA_TRAIN].items[0];
	snprintf(path, sizeof(path), "%s/images/%s", nih, e->name);
	CHECK_INT(unlink(path), 0);
	CHECK_INT(data_set_image_path(&set, e, path, sizeof(path), err, sizeof(err)), -1);
	char want[256];
	snprintf(want, sizeof(want), "chexnet: image '%s': not found in %s/images", e->name, nih);
	CHECK_CONTAINS(err, want);
	data_set_free(&set);
	free(nih);
}

static void test_label_counts_pack_equals_folder(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	char err[2048] = "", *nih = test_path(test_tmpdir(), "nih"), *pack = test_path(test_tmpdir(), "pack");
	for (int split = 0; split < 3; split++) {
		size_t a[CHEXNET_CLASSES], b[CHEXNET_CLASSES], na = 0, nb = 0, sum = 0;
		CHECK_INT(data_split_label_counts(nih, split, 0.2, a, &na, err, sizeof(err)), 0);
		CHECK_INT(data_split_label_counts(pack, split, -1, b, &nb, err, sizeof(err)), 0);
		CHECK_INT(na, nb);
		for (int c = 0; c < CHEXNET_CLASSES; c++) {
			CHECK_INT(a[c], b[c]);
			sum += a[c];
		}
		CHECK(na > 0 && sum > 0);
	}
	free(nih);
	free(pack);
}

static void *counting_alloc(size_t bytes, void *ctx)
{
	(*(int *)ctx)++;
	return malloc(bytes);
}

static void counting_free(void *p, void *ctx)
{
	(*(int *)ctx)--;
	free(p);
}

static void test_pixel_allocator_hook_owns_every_buffer(void)
{
	if (make_data(STORED, 1) != 0)
		return;
	struct data_loader_config c;
	char err[2048] = "", *dir = test_path(test_tmpdir(), "pack");
	int live = 0;
	data_loader_config_init(&c);
	c.dir = dir, c.split = DATA_VAL, c.batch = 4, c.size = STORED, c.crop = DATA_CROP_RESIZE;
	c.threads = 2, c.prefetch = 3;
	c.alloc_pixels = counting_alloc, c.free_pixels = counting_free, c.alloc_ctx = &live;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	CHECK_INT(live, 4);  /* prefetch + 1 slots */
	struct batch *b;
	CHECK_INT(data_loader_next(dl, &b), 1);
	data_loader_close(dl);  /* a held batch is freed too */
	CHECK_INT(live, 0);
	c.free_pixels = NULL;
	CHECK(data_loader_open(&c, err, sizeof(err)) == NULL);
	CHECK_CONTAINS(err, "go together");
	free(dir);
}

static void test_real_pngs_pack_and_load(void)
{
	if (!test_data_dir())
		SKIP("HVD_TEST_DATA unset: no real X-rays");
	char cmd[16384], err[2048] = "";
	struct test_proc p;
	const char *t = test_tmpdir(), *nih = test_data_dir();
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/real/images' && cd '%s/real' && "
		 "cp '%s/data/nih/00000001_000.png' '%s/data/nih/00027426_000.png' images/ && "
		 "zcat '%s/data/nih/Data_Entry_2017_v2020.csv.gz' | "
		 "grep -E '^(Image Index|00000001_000.png|00027426_000.png),' > Data_Entry_2017_v2020.csv && "
		 "echo 00000001_000.png > train_val_list.txt && echo 00027426_000.png > test_list.txt",
		 t, t, nih, nih, nih);
	CHECK(test_run(cmd, 60, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	char *real = test_path(t, "real"), *out = test_path(t, "realpack");
	struct pack_config pc = { .data_dir = real, .out_dir = out, .size = 256, .val_fraction = 0 };
	struct pack_result res;
	CHECK_MSG(data_pack(&pc, &res, err, sizeof(err)) == 0, "%s", err);
	CHECK_INT(res.records[DATA_TRAIN], 1);
	CHECK_INT(res.records[DATA_TEST], 1);
	struct data_loader_config c;
	data_loader_config_init(&c);
	c.dir = out, c.split = DATA_TEST, c.batch = 2, c.size = 256, c.crop = DATA_CROP_RESIZE;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	struct batch *b = NULL;
	if (dl && data_loader_next(dl, &b) == 1) {
		static uint8_t want[256 * 256];
		snprintf(cmd, sizeof(cmd), "%s/data/nih/00027426_000.png", nih);
		CHECK_INT(image_load_square(cmd, 256, IMAGE_ASPECT_PAD, want, NULL, err, sizeof(err)), 0);
		CHECK_INT(b->count, 1);
		CHECK(memcmp(b->pixels, want, sizeof(want)) == 0);
		for (int k = 0; k < CHEXNET_CLASSES; k++)
			CHECK(b->labels[k] == 0.0f);  /* No Finding */
		CHECK(b->labels[CHEXNET_CLASSES + 1] == 0.0f);  /* padding */
		data_loader_release(dl, b);
	}
	data_loader_close(dl);
	free(real);
	free(out);
}

/* An image of a folder under evaluation (centre crop, the default stored
 * side) is what image_load_view gives `chexnet predict` for its file:
 * both take the centre size x size of the image area-resized to 8/7 of
 * it. The test split is read in its list's order. */
static void test_folder_eval_view_is_what_predict_sees(void)
{
	CHECK_INT(image_stored_side(224), 256);
	CHECK_INT(image_stored_side(32), 37);
	if (make_data(STORED, 1) != 0)
		return;
	struct data_loader_config c;
	char err[2048] = "", *dir = test_path(test_tmpdir(), "nih");
	data_loader_config_init(&c);
	c.dir = dir, c.split = DATA_TEST, c.batch = 4, c.size = 40, c.crop = DATA_CROP_CENTER;
	c.threads = 1;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	char list[4200], name[160], path[4400];
	snprintf(list, sizeof(list), "%s/test_list.txt", dir);
	FILE *f = fopen(list, "r");
	CHECK(f != NULL);
	struct batch *b;
	int seen = 0;
	while (dl && f && seen < 8 && data_loader_next(dl, &b) == 1) {
		for (int k = 0; k < b->count && fscanf(f, "%159s", name) == 1; k++, seen++) {
			uint8_t want[40 * 40];
			snprintf(path, sizeof(path), "%s/images/%s", dir, name);
			CHECK_MSG(image_load_view(path, 40, image_stored_side(40), IMAGE_ASPECT_PAD, want, err, sizeof(err)) == 0, "%s", err);
			CHECK_MSG(memcmp(b->pixels + (size_t)k * sizeof(want), want, sizeof(want)) == 0,
				  "%s: eval's view differs from predict's", name);
		}
		data_loader_release(dl, b);
	}
	CHECK_INT(seen, 8);
	if (f)
		fclose(f);
	data_loader_close(dl);
	free(dir);
}

/* Hashes of the first `count` micro-batches of one rank. */
static void micro_hashes(int rank, int world, int accum, int count, uint64_t *out)
{
	struct data_loader *dl = open_loader("pack", DATA_TRAIN, rank, world, 3, accum, 2, 8);
	for (int i = 0; dl && i < count; i++) {
		struct batch *b;
		int rc = data_loader_next(dl, &b);
		CHECK_INT(rc, 1);
		out[i] = rc == 1 ? batch_hash(b) : 0;
		if (rc == 1)
			data_loader_release(dl, b);
	}
	data_loader_close(dl);
}

/* Rank r's micro-batch j of an R-rank run is micro-batch j*R + r of a
 * one-rank run with R times the accumulation: the same images in the same
 * batch (batch norm statistics match, not only the step's image set). */
static void test_rank_micro_batches_equal_one_rank_micro_batches(void)
{
	if (make_data(STORED, 2) != 0)
		return;
	uint64_t one[12], r0[4], r1[4], r2[4];
	micro_hashes(0, 1, 3, 12, one);
	micro_hashes(0, 3, 1, 4, r0);
	micro_hashes(1, 3, 1, 4, r1);
	micro_hashes(2, 3, 1, 4, r2);
	for (int j = 0; j < 4; j++) {
		CHECK_MSG(r0[j] == one[3 * j], "rank 0 micro %d", j);
		CHECK_MSG(r1[j] == one[3 * j + 1], "rank 1 micro %d", j);
		CHECK_MSG(r2[j] == one[3 * j + 2], "rank 2 micro %d", j);
	}
}

const struct test_case data_loader_tests[] = {
	{ "rank_micro_batches_equal_one_rank_micro_batches", test_rank_micro_batches_equal_one_rank_micro_batches },
	{ "real_pngs_pack_and_load", test_real_pngs_pack_and_load },
	{ "folder_eval_view_is_what_predict_sees", test_folder_eval_view_is_what_predict_sees },
	{ "pixel_allocator_hook_owns_every_buffer", test_pixel_allocator_hook_owns_every_buffer },
	{ "label_counts_pack_equals_folder", test_label_counts_pack_equals_folder },
	{ "pack_load_round_trip_bit_exact", test_pack_load_round_trip_bit_exact },
	{ "direct_mode_equals_packed", test_direct_mode_equals_packed },
	{ "eval_exactly_once_across_1_2_3_ranks", test_eval_exactly_once_across_1_2_3_ranks },
	{ "global_batches_identical_for_same_r_times_k", test_global_batches_identical_for_same_r_times_k },
	{ "deterministic_per_seed_and_thread_count", test_deterministic_per_seed_and_thread_count },
	{ "epochs_permute_cut_and_resume", test_epochs_permute_cut_and_resume },
	{ "random_crop_and_flip_come_from_the_stored_image",
	  test_random_crop_and_flip_come_from_the_stored_image },
	{ "resume_step_must_lie_inside_the_epoch", test_resume_step_must_lie_inside_the_epoch },
	{ "permutation_is_a_bijection", test_permutation_is_a_bijection },
	{ "damaged_pack_is_an_error_naming_offset", test_damaged_pack_is_an_error_naming_offset },
	{ "missing_image_in_direct_mode", test_missing_image_in_direct_mode },
	{ 0 }
};
