/* test_data_formats.c - group data-formats: CRC32C, labels, CSV (NIH both
 * variants, generic), the real NIH label file, PNG/JPEG decoding of every
 * colour type, area resize, shard codecs, and one-line errors naming file
 * and line/offset for every bad input. What it does not do: the loader's
 * order (test_data_loader.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/crc32c.h"
#include "data/sets/csv.h"
#include "data/sets/labels.h"
#include "data/sets/set.h"
#include "data/pack/shard.h"
#include "data/sets/fingerprint.h"
#include "data/sets/split.h"
#include "data/sets/split_key.h"
#include "data/synth/synth.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"
#include "data/image/image_resize.h"
#include "data/image/image_window.h"
#include "runner.h"

static char *fixture(const char *name)
{
	char *dir = test_path(test_src_dir(), "tests/fixtures/data");
	char *p = test_path(dir, name);
	free(dir);
	return p;
}

static int one_line(const char *s) { return s && *s && !strchr(s, '\n'); }

static void test_crc32c_known_answer(void)
{
	CHECK_INT(crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_INT(crc32c(0, "", 0), 0);
	/* incremental == whole, across the 8-byte fast path boundary */
	const char *s = "The quick brown fox jumps over the lazy dog";
	size_t n = strlen(s);
	CHECK_INT(crc32c(crc32c(0, s, 13), s + 13, n - 13), crc32c(0, s, n));
	CHECK_INT(crc32c(0, s, n), 0x22620404u);
}

static void test_labels_parse(void)
{
	uint16_t m = 0xFFFF;
	char bad[64] = "";
	CHECK_INT(data_labels_parse("No Finding", &m, bad, sizeof(bad)), 0);
	CHECK_INT(m, 0);
	CHECK_INT(data_labels_parse("Cardiomegaly|Emphysema", &m, bad, sizeof(bad)), 0);
	CHECK_INT(m, (1 << 1) | (1 << 10));
	CHECK_INT(data_labels_parse("Hernia", &m, bad, sizeof(bad)), 0);
	CHECK_INT(m, 1 << 13);
	CHECK_INT(data_labels_parse("Effusion|Pneumonitis", &m, bad, sizeof(bad)), -1);
	CHECK_STR(bad, "Pneumonitis");
	CHECK_INT(data_labels_parse("Mass|Mass", &m, bad, sizeof(bad)), -1);
	CHECK_STR(bad, "Mass");
	CHECK_INT(data_labels_parse("Mass||Nodule", &m, bad, sizeof(bad)), -1);
	CHECK_STR(bad, "");
	CHECK_INT(data_labels_parse("No Finding|Mass", &m, bad, sizeof(bad)), -1);
	float f[CHEXNET_CLASSES];
	data_labels_to_floats((1 << 0) | (1 << 13), f);
	CHECK(f[0] == 1.0f && f[13] == 1.0f && f[1] == 0.0f && f[12] == 0.0f);
}

static void test_csv_split_quotes_and_brackets(void)
{
	char line[] = "a,\"b,c\",\"say \"\"hi\"\"\",,OriginalImage[Width,Height]";
	char *f[CSV_MAX_FIELDS];
	CHECK_INT(csv_split(line, f, CSV_MAX_FIELDS), 6);
	CHECK_STR(f[0], "a");
	CHECK_STR(f[1], "b,c");
	CHECK_STR(f[2], "say \"hi\"");
	CHECK_STR(f[3], "");
	CHECK_STR(f[4], "OriginalImage[Width");
	CHECK_STR(f[5], "Height]");
	char open_quote[] = "a,\"b";
	CHECK_INT(csv_split(open_quote, f, CSV_MAX_FIELDS), -1);
}

/* Independent count of the real file: zcat + awk, one line per class. */
static long awk_count(const char *csv_gz, const char *label)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "zcat '%s' | awk -F, 'NR>1 { n = split($2, a, \"|\"); "
		 "for (i = 1; i <= n; i++) if (a[i] == \"%s\") c++ } END { print c + 0 }'", csv_gz, label);
	if (test_run(cmd, 60, &p) != 0 || p.exit_code != 0) {
		test_proc_free(&p);
		return -1;
	}
	long v = atol(p.out);
	test_proc_free(&p);
	return v;
}

static void test_real_nih_csv_all_rows_and_label_counts(void)
{
	if (!test_data_dir())
		SKIP("HVD_TEST_DATA unset: no real NIH label file");
	char *csv = test_path(test_data_dir(), "data/nih/Data_Entry_2017_v2020.csv.gz");
	if (access(csv, R_OK) != 0) {
		free(csv);
		SKIP("$HVD_TEST_DATA/data/nih/Data_Entry_2017_v2020.csv.gz absent");
	}
	struct data_list l = { 0 };
	char err[1024] = "";
	CHECK_INT(data_nih_read_entries(csv, &l, err, sizeof(err)), 0);
	CHECK_INT(l.count, 112120);
	long counts[CHEXNET_CLASSES] = { 0 }, none = 0;
	for (size_t i = 0; i < l.count; i++) {
		none += l.items[i].labels == 0;
		for (int c = 0; c < CHEXNET_CLASSES; c++)
			counts[c] += (l.items[i].labels >> c) & 1;
	}
	CHECK_INT(counts[3], 19894);   /* Infiltration */
	CHECK_INT(counts[2], 13317);   /* Effusion */
	CHECK_INT(none, 60361);        /* No Finding */
	CHECK_INT(none, awk_count(csv, "No Finding"));
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		CHECK_INT(counts[c], awk_count(csv, data_class_names[c]));
		CHECK_INT(counts[c], data_synth_real_counts[c]);  /* synth's table is the real one */
	}
	CHECK_STR(l.items[0].name, "00000001_000.png");
	CHECK_INT(l.items[0].patient, 1);
	CHECK_INT(l.items[0].labels, 1 << 1);
	data_list_free(&l);
	free(csv);
}

static void test_nih_2017_variant_with_trailing_comma(void)
{
	char *csv = fixture("entry_2017.csv");
	struct data_list l = { 0 };
	char err[1024] = "";
	CHECK_INT(data_nih_read_entries(csv, &l, err, sizeof(err)), 0);
	CHECK_INT(l.count, 4);
	if (l.count == 4) {
		CHECK_INT(l.items[1].labels, (1 << 1) | (1 << 10));
		CHECK_INT(l.items[2].labels, 0);
		CHECK_INT(l.items[3].labels, (1 << 13) | (1 << 12));
		CHECK_INT(l.items[3].patient, 3);
	}
	data_list_free(&l);
	free(csv);
}

static void test_nih_bad_label_and_field_count_name_line(void)
{
	struct data_list l = { 0 };
	char err[1024] = "";
	char *csv = fixture("bad_label.csv");
	CHECK_INT(data_nih_read_entries(csv, &l, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "bad_label.csv' line 3: label 'Pneumonitis'");
	CHECK(one_line(err));
	data_list_free(&l);
	free(csv);
	csv = fixture("bad_fields.csv");
	CHECK_INT(data_nih_read_entries(csv, &l, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "bad_fields.csv' line 4: 10 fields, expected 11");
	data_list_free(&l);
	free(csv);
}

/* A .gz label file cut short must fail naming the file, never read as a
 * shorter CSV (zlib reports the missing trailer only through gzerror). */
static void test_truncated_gzip_csv_is_an_error(void)
{
	char *csv = fixture("entry_2017.csv");
	char cmd[8192], gz[4200], err[1024] = "";
	struct test_proc p;
	struct data_list l = { 0 };
	snprintf(gz, sizeof(gz), "%s/Data_Entry_2017.csv.gz", test_tmpdir());
	snprintf(cmd, sizeof(cmd), "gzip -c '%s' > '%s.full' && head -c 120 '%s.full' > '%s'",
		 csv, gz, gz, gz);
	CHECK(test_run(cmd, 10, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	CHECK_INT(data_nih_read_entries(gz, &l, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "Data_Entry_2017.csv.gz' line ");
	CHECK_CONTAINS(err, ": truncated file");
	CHECK(one_line(err));
	data_list_free(&l);
	/* the whole .gz reads like the plain file */
	snprintf(cmd, sizeof(cmd), "%s.full", gz);
	CHECK_INT(data_nih_read_entries(cmd, &l, err, sizeof(err)), 0);
	CHECK_INT(l.count, 4);
	data_list_free(&l);
	free(csv);
}

/* dir/name := text */
static void put_file(const char *dir, const char *name, const char *text)
{
	char *path = test_path(dir, name);
	CHECK(test_write_file(path, text, strlen(text)) == 0);
	free(path);
}

/* The NIH lists must name each image of the CSV at most once; rows have
 * 11 fields or a 12th that is empty (the 2017 file's trailing comma). */
static void test_nih_lists_and_rows_are_checked(void)
{
	char *csv = fixture("entry_2017.csv"), *text = test_read_file(csv, NULL), err[1024] = "";
	const char *dir = test_tmpdir();
	struct data_set set;
	CHECK(text != NULL);
	if (!text)
		return;
	put_file(dir, "Data_Entry_2017.csv", text);
	put_file(dir, "test_list.txt", "00000003_000.png\n");
	put_file(dir, "train_val_list.txt", "00000001_000.png\n00000002_000.png\n00000001_000.png\n");
	CHECK_INT(data_set_open(&set, dir, 0, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "train_val_list.txt' line 3: image '00000001_000.png': listed twice");
	put_file(dir, "train_val_list.txt", "00000001_000.png\n00000009_000.png\n");
	CHECK_INT(data_set_open(&set, dir, 0, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "train_val_list.txt' line 2: image '00000009_000.png': not in the Data_Entry CSV");
	put_file(dir, "train_val_list.txt", "00000001_000.png\n00000001_001.png\n00000002_000.png\n");
	CHECK_INT(data_set_open(&set, dir, 0, err, sizeof(err)), 0);
	CHECK_INT(set.split[0].count, 3);
	CHECK_INT(set.split[2].count, 1);
	data_set_free(&set);
	/* a 12th field with something in it is not the trailing comma */
	char *extra = test_path(dir, "extra.csv"), row[512];
	struct data_list l = { 0 };
	snprintf(row, sizeof(row), "%s00000004_000.png,Mass,0,4,040Y,F,PA,2048,2048,0.14,0.14,x\n", text);
	CHECK(test_write_file(extra, row, strlen(row)) == 0);
	CHECK_INT(data_nih_read_entries(extra, &l, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "extra.csv' line 6: 12 fields, expected 11");
	data_list_free(&l);
	free(extra);
	free(text);
	free(csv);
}

static void test_generic_layout_with_quoted_path(void)
{
	char *train = fixture("generic_train.csv");
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/train.csv' && cp '%s' '%s/test.csv'", train,
		 test_tmpdir(), train, test_tmpdir());
	CHECK(test_run(cmd, 10, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	struct data_set set;
	char err[1024] = "";
	CHECK_INT(data_set_open(&set, test_tmpdir(), 0, err, sizeof(err)), 0);
	CHECK_INT(set.split[0].count, 2);
	CHECK_INT(set.split[2].count, 2);
	if (set.split[0].count == 2) {
		CHECK_STR(set.split[0].items[0].name, "img/a,1.png");
		CHECK_INT(set.split[0].items[0].labels, 1 | (1 << 13));
		CHECK_INT(set.split[0].items[1].patient, 8);
	}
	data_set_free(&set);
	free(train);
}

/* Whole patients go to val, about the fraction asked of them (1000
 * patients, 10%: 100 expected, sd 9.5), order kept, none in both. */
static void test_patient_split_has_no_shared_patient(void)
{
	static const uint8_t key[16] = "0123456789abcde";
	struct data_list train = { 0 }, val = { 0 };
	for (uint32_t i = 0; i < 3000; i++) {
		struct data_entry *e = data_list_push(&train);
		snprintf(e->name, sizeof(e->name), "%08u_%03u.png", i / 3, i % 3);
		e->patient = i / 3;
	}
	CHECK_INT(data_split_by_patient(&train, &val, key, 0.1), 0);
	CHECK_INT(train.count + val.count, 3000);
	CHECK_MSG(val.count % 3 == 0 && val.count >= 3 * 60 && val.count <= 3 * 140, "val %zu",
		  val.count);
	for (size_t i = 0; i < val.count; i++)
		for (size_t j = 0; j < train.count; j++)
			if (val.items[i].patient == train.items[j].patient) {
				CHECK_MSG(0, "patient %u in both splits", val.items[i].patient);
				i = val.count;
				break;
			}
	for (size_t i = 1; i < train.count; i++)  /* order kept */
		CHECK(strcmp(train.items[i - 1].name, train.items[i].name) < 0);
	data_list_free(&train);
	data_list_free(&val);
}

/* A patient's split is a function of its id and the key: splitting all
 * 1000 patients, then only the odd ones, then them with 500 new ones,
 * puts every patient on the same side each time; another key gives
 * another split. */
static void test_patient_split_depends_on_id_and_key_only(void)
{
	static const uint8_t key[16] = "0123456789abcde", other[16] = "fedcba987654321";
	static unsigned char side[1500];
	int moved = 0, differs = 0;
	for (int round = 0; round < 3; round++) {
		struct data_list train = { 0 }, val = { 0 };
		for (uint32_t i = 0; i < 1500; i++)
			if ((round == 0 && i < 1000) || (round > 0 && i % 2) || (round == 2 && i >= 1000))
				data_list_push(&train)->patient = i;
		CHECK_INT(data_split_by_patient(&train, &val, key, 0.2), 0);
		for (size_t k = 0; k < val.count; k++) {
			uint32_t id = val.items[k].patient;
			moved += round > 0 && id < 1000 && side[id] != 1;
			side[id] = 1;
		}
		for (size_t k = 0; k < train.count; k++) {
			uint32_t id = train.items[k].patient;
			moved += round > 0 && id < 1000 && side[id] != 2;
			side[id] = 2;
		}
		data_list_free(&train);
		data_list_free(&val);
	}
	for (uint32_t i = 0; i < 1000; i++)
		differs += data_split_is_val(other, i, 0.2) != (side[i] == 1);
	CHECK_INT(moved, 0);
	CHECK_MSG(differs > 100, "another key moved only %d of 1000 patients", differs);
	CHECK_INT(data_split_is_val(key, 7, 0), 0);
}

static void test_real_pngs_decode_to_512(void)
{
	if (!test_data_dir())
		SKIP("HVD_TEST_DATA unset: no real X-rays");
	const char *names[] = { "data/nih/00000001_000.png", "data/nih/00027426_000.png" };
	for (int k = 0; k < 2; k++) {
		char *path = test_path(test_data_dir(), names[k]);
		struct image img;
		char err[1024] = "";
		CHECK_INT(image_decode_file(path, 0, &img, err, sizeof(err)), 0);
		CHECK_INT(img.width, 512);
		CHECK_INT(img.height, 512);
		if (img.pixels) {
			long sum = 0, lo = 255, hi = 0;
			for (int i = 0; i < 512 * 512; i++) {
				sum += img.pixels[i];
				lo = img.pixels[i] < lo ? img.pixels[i] : lo;
				hi = img.pixels[i] > hi ? img.pixels[i] : hi;
			}
			CHECK(hi - lo > 100);  /* a real X-ray, not a flat image */
			CHECK(sum > 512L * 512 * 30);
		}
		image_free(&img);
		free(path);
	}
}

/* A w x h test pattern: v(x, y) = (x * 7 + y * 13) & 255. */
static uint8_t pattern(int x, int y) { return (uint8_t)((x * 7 + y * 13) & 255); }

static void decode_png_bytes(const void *png, size_t bytes, int w, int h, const char *what)
{
	struct image img;
	char err[1024] = "";
	int rc = image_decode_memory(png, bytes, what, 0, &img, err, sizeof(err));
	CHECK_MSG(rc == 0, "%s: %s", what, err);
	if (rc != 0)
		return;
	CHECK_INT(img.width, w);
	CHECK_INT(img.height, h);
	int bad = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			bad += img.pixels[y * w + x] != pattern(x, y);
	CHECK_MSG(bad == 0, "%s: %d pixels differ from the pattern", what, bad);
	image_free(&img);
}

static void test_png_every_color_type_to_gray(void)
{
	enum { W = 21, H = 9 };
	uint8_t g8[H * W], ga8[H * W * 2], rgb8[H * W * 3], rgba8[H * W * 4];
	uint16_t g16[H * W], rgba16[H * W * 4];
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int i = y * W + x;
			uint8_t v = pattern(x, y);
			g8[i] = v;
			g16[i] = (uint16_t)(v * 257);
			ga8[2 * i] = v, ga8[2 * i + 1] = 17;
			for (int c = 0; c < 3; c++)
				rgb8[3 * i + c] = rgba8[4 * i + c] = v, rgba16[4 * i + c] = (uint16_t)(v * 257);
			rgba8[4 * i + 3] = 200;
			rgba16[4 * i + 3] = 999;
		}
	/* 16-bit with sBIT 16: v * 257 scales back to v exactly */
	struct { const void *px; int type, depth, sbit; const char *what; } cases[] = {
		{ g8, 0, 8, 0, "gray8" }, { g16, 0, 16, 16, "gray16" }, { ga8, 4, 8, 0, "gray+alpha" },
		{ rgb8, 2, 8, 0, "rgb8" }, { rgba8, 6, 8, 0, "rgba8" }, { rgba16, 6, 16, 16, "rgba16" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		void *png = NULL;
		size_t bytes = 0;
		CHECK_INT(image_png_encode_sbit(cases[k].px, W, H, cases[k].type, cases[k].depth,
						cases[k].sbit, &png, &bytes), 0);
		decode_png_bytes(png, bytes, W, H, cases[k].what);
		free(png);
	}
	/* colour to luma */
	uint8_t red[4 * 3] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 10, 10 };
	void *png = NULL;
	size_t bytes = 0;
	struct image img;
	char err[256];
	CHECK_INT(image_png_encode(red, 4, 1, 2, 8, &png, &bytes), 0);
	CHECK_INT(image_decode_memory(png, bytes, "rgb", 0, &img, err, sizeof(err)), 0);
	if (img.pixels) {
		CHECK_INT(img.pixels[0], 76);
		CHECK_INT(img.pixels[1], 150);
		CHECK_INT(img.pixels[2], 29);
		CHECK_INT(img.pixels[3], 10);
	}
	image_free(&img);
	free(png);
}

/* Decodes a W x H 16-bit gray PNG of px with sbit (0: none). */
static int decode_gray16(const uint16_t *px, int w, int h, int sbit, struct image *img)
{
	void *png = NULL;
	size_t bytes = 0;
	char err[256] = "";
	int rc = image_png_encode_sbit(px, w, h, 0, 16, sbit, &png, &bytes);
	if (rc == 0)
		rc = image_decode_memory(png, bytes, "gray16", 0, img, err, sizeof(err));
	CHECK_MSG(rc == 0, "sbit %d: %s", sbit, err);
	free(png);
	return rc;
}

/* A 12-bit X-ray stored unscaled in 16 bits (values 0..4095, as PadChest
 * ships them) decodes to the full 0..255 range: with sBIT 12 by 255/4095,
 * without sBIT by the 0.5-99.5 percentile window; never the high byte
 * (0..15). The spec's scaled samples (v << 4 with sBIT 12) give the same. */
static void test_png16_twelve_bit_data_decodes_full_range(void)
{
	enum { W = 64, H = 64, N = W * H };
	uint16_t px[N], scaled[N];
	for (int i = 0; i < N; i++) {
		px[i] = (uint16_t)(i * 4095 / (N - 1));
		scaled[i] = (uint16_t)(px[i] << 4 | px[i] >> 8);
	}
	struct image img;
	if (decode_gray16(px, W, H, 12, &img) == 0) {
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += img.pixels[i] != (px[i] * 510 + 4095) / 8190;
		CHECK_MSG(bad == 0, "sbit 12: %d pixels are not v * 255 / 4095", bad);
		CHECK_INT(img.pixels[0], 0);
		CHECK_INT(img.pixels[N - 1], 255);
		image_free(&img);
	}
	if (decode_gray16(scaled, W, H, 12, &img) == 0) {
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += img.pixels[i] != (px[i] * 510 + 4095) / 8190;
		CHECK_MSG(bad == 0, "sbit 12, scaled samples: %d pixels differ", bad);
		image_free(&img);
	}
	/* no sBIT: ranks 20 and 4075 of 4096 are the window's ends */
	if (decode_gray16(px, W, H, 0, &img) == 0) {
		uint32_t lo = px[image_window_lo_rank(N)], hi = px[image_window_hi_rank(N)];
		CHECK_INT(image_window_lo_rank(N), 20);
		CHECK_INT(image_window_hi_rank(N), 4075);
		int bad = 0;
		for (int i = 0; i < N; i++) {
			int want = px[i] <= lo ? 0 : px[i] >= hi ? 255 :
				(int)((510 * (px[i] - lo) + (hi - lo)) / (2 * (hi - lo)));
			bad += img.pixels[i] != want;
		}
		CHECK_MSG(bad == 0, "no sbit: %d pixels differ from the percentile window", bad);
		CHECK_INT(img.pixels[0], 0);
		CHECK_INT(img.pixels[N - 1], 255);
		CHECK_INT(img.pixels[N / 2], 128);
		image_free(&img);
	}
	/* a constant image has no window: all 0 */
	for (int i = 0; i < N; i++)
		px[i] = 3000;
	if (decode_gray16(px, W, H, 0, &img) == 0) {
		CHECK_INT(img.pixels[0], 0);
		CHECK_INT(img.pixels[N - 1], 0);
		image_free(&img);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The doubles' window (selection) equals sorting's order statistics. */
static void test_percentile_window_matches_sorting(void)
{
	static double v[5000], sorted[5000];
	unsigned seed = 7;
	for (size_t n = 1; n <= 5000; n = n * 3 + 1) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (double)((seed >> 8) % 97) - 40.5;   /* many ties */
		}
		memcpy(sorted, v, n * sizeof(*v));
		qsort(sorted, n, sizeof(*v), cmp_double);
		double lo = 1e9, hi = 1e9;
		CHECK_INT(image_window_f64(v, n, &lo, &hi), 0);
		CHECK_MSG(lo == sorted[image_window_lo_rank(n)], "n %zu: lo %g, want %g", n, lo,
			  sorted[image_window_lo_rank(n)]);
		CHECK_MSG(hi == sorted[image_window_hi_rank(n)], "n %zu: hi %g, want %g", n, hi,
			  sorted[image_window_hi_rank(n)]);
	}
}

static void *make_jpeg(int w, int h, unsigned long *bytes)
{
	uint8_t *px = malloc((size_t)w * h);
	unsigned char *jpeg = NULL;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			px[y * w + x] = (uint8_t)(40 + (x / 8 + y / 8) % 2 * 150);
	tjhandle tj = tjInitCompress();
	int rc = tjCompress2(tj, px, w, w, h, TJPF_GRAY, &jpeg, bytes, TJSAMP_GRAY, 95, 0);
	tjDestroy(tj);
	free(px);
	return rc == 0 ? jpeg : NULL;
}

/* A one-row PNG of 8 pixels built by hand (the encoder only writes 8 and
 * 16 bits): IHDR, optional PLTE, one IDAT with filter byte 0, IEND. */
static size_t tiny_png(int depth, int color_type, const uint8_t *row, size_t row_bytes,
		       const uint8_t *plte, size_t plte_bytes, uint8_t *out)
{
	uint8_t ihdr[13] = { 0, 0, 0, 8, 0, 0, 0, 1, (uint8_t)depth, (uint8_t)color_type, 0, 0, 0 };
	uint8_t raw[16] = { 0 }, idat[64];
	uLongf idat_bytes = sizeof(idat);
	size_t n = 8;
	memcpy(raw + 1, row, row_bytes);
	compress(idat, &idat_bytes, raw, (uLong)(row_bytes + 1));
	memcpy(out, "\x89PNG\r\n\x1a\n", 8);
	const struct { const char *type; const uint8_t *data; size_t bytes; } chunks[] = {
		{ "IHDR", ihdr, sizeof(ihdr) }, { "PLTE", plte, plte_bytes },
		{ "IDAT", idat, idat_bytes }, { "IEND", NULL, 0 },
	};
	for (int c = 0; c < 4; c++) {
		if (c == 1 && !plte)
			continue;
		uint32_t len = (uint32_t)chunks[c].bytes;
		uint8_t *at = out + n;
		at[0] = (uint8_t)(len >> 24), at[1] = (uint8_t)(len >> 16), at[2] = (uint8_t)(len >> 8);
		at[3] = (uint8_t)len;
		memcpy(at + 4, chunks[c].type, 4);
		if (len)
			memcpy(at + 8, chunks[c].data, len);
		uint32_t crc = (uint32_t)crc32(0, at + 4, 4 + len);
		at[8 + len] = (uint8_t)(crc >> 24), at[9 + len] = (uint8_t)(crc >> 16);
		at[10 + len] = (uint8_t)(crc >> 8), at[11 + len] = (uint8_t)crc;
		n += 12 + len;
	}
	return n;
}

/* 1/2/4-bit gray scale up to 0..255; palettes map through their colours. */
static void test_png_low_bit_depths_and_palette(void)
{
	const uint8_t g1[] = { 0xAA }, g2[] = { 0x1B, 0xE4 }, g4[] = { 0x0F, 0x5A, 0xF0, 0x00 };
	const uint8_t p1[] = { 0xAA }, plte[] = { 0, 0, 0, 255, 0, 0 };
	const struct { int depth, type; const uint8_t *row; size_t bytes; uint8_t want[8]; } cases[] = {
		{ 1, 0, g1, 1, { 255, 0, 255, 0, 255, 0, 255, 0 } },
		{ 2, 0, g2, 2, { 0, 85, 170, 255, 255, 170, 85, 0 } },
		{ 4, 0, g4, 4, { 0, 255, 85, 170, 255, 0, 0, 0 } },
		{ 1, 3, p1, 1, { 76, 0, 76, 0, 76, 0, 76, 0 } },   /* red -> luma 76 */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t png[256];
		struct image img;
		char err[256] = "";
		size_t n = tiny_png(cases[k].depth, cases[k].type, cases[k].row, cases[k].bytes,
				    cases[k].type == 3 ? plte : NULL, sizeof(plte), png);
		int rc = image_decode_memory(png, n, "tiny", 0, &img, err, sizeof(err));
		CHECK_MSG(rc == 0, "case %zu: %s", k, err);
		if (rc != 0)
			continue;
		CHECK_INT(img.width, 8);
		for (int i = 0; i < 8; i++)
			CHECK_MSG(img.pixels[i] == cases[k].want[i], "case %zu pixel %d: %d, want %d", k, i,
				  img.pixels[i], cases[k].want[i]);
		image_free(&img);
	}
}

static void test_jpeg_full_and_scaled_decode(void)
{
	unsigned long bytes = 0;
	unsigned char *jpeg = make_jpeg(128, 96, &bytes);
	CHECK(jpeg != NULL);
	if (!jpeg)
		return;
	struct image img;
	char err[1024] = "";
	CHECK_INT(image_decode_memory(jpeg, bytes, "a.jpg", 0, &img, err, sizeof(err)), 0);
	CHECK_INT(img.width, 128);
	CHECK_INT(img.height, 96);
	if (img.pixels)
		CHECK_NEAR(img.pixels[0], 40, 6, 0);
	image_free(&img);
	/* min side 24: 96 / 4 = 24 still covers it, / 8 would not */
	CHECK_INT(image_decode_memory(jpeg, bytes, "a.jpg", 24, &img, err, sizeof(err)), 0);
	CHECK_INT(img.width, 32);
	CHECK_INT(img.height, 24);
	image_free(&img);
	CHECK_INT(image_decode_memory(jpeg, bytes, "a.jpg", 12, &img, err, sizeof(err)), 0);
	CHECK_INT(img.width, 16);
	image_free(&img);
	tjFree(jpeg);
}

static void test_truncated_or_corrupt_images_are_errors(void)
{
	uint8_t px[64 * 64];
	void *png = NULL;
	size_t png_bytes = 0;
	unsigned long jpeg_bytes = 0;
	char err[1024] = "", *path;
	struct image img;
	for (int i = 0; i < 64 * 64; i++)
		px[i] = (uint8_t)(i * 31);
	CHECK_INT(image_png_encode(px, 64, 64, 0, 8, &png, &png_bytes), 0);
	unsigned char *jpeg = make_jpeg(64, 64, &jpeg_bytes);
	path = test_path(test_tmpdir(), "cut.png");
	CHECK_INT(test_write_file(path, png, png_bytes / 2), 0);
	CHECK_INT(image_decode_file(path, 0, &img, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "cut.png': truncated or corrupt PNG");
	CHECK(one_line(err) && img.pixels == NULL);
	free(path);
	path = test_path(test_tmpdir(), "flip.png");
	((uint8_t *)png)[png_bytes - 20] ^= 0x55;  /* inside the last chunks: CRC breaks */
	CHECK_INT(test_write_file(path, png, png_bytes), 0);
	CHECK_INT(image_decode_file(path, 0, &img, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "flip.png'");
	free(path);
	path = test_path(test_tmpdir(), "cut.jpg");
	CHECK_INT(test_write_file(path, jpeg, jpeg_bytes * 2 / 3), 0);
	CHECK_INT(image_decode_file(path, 0, &img, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "cut.jpg': truncated or corrupt JPEG");
	free(path);
	path = test_path(test_tmpdir(), "text.png");
	CHECK_INT(test_write_file(path, "hello", 5), 0);
	CHECK_INT(image_decode_file(path, 0, &img, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "text.png': neither PNG, JPEG nor DICOM");
	free(path);
	CHECK_INT(image_decode_file("/nonexistent/x.png", 0, &img, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "image '/nonexistent/x.png': No such file");
	free(png);
	tjFree(jpeg);
}

static void test_area_resize_exact_values(void)
{
	const uint8_t src[16] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60 };
	uint8_t dst[4], same[16], three[9];
	image_resize_area(src, 4, 4, dst, 2, 2);
	CHECK_INT(dst[0], 10);  /* (0+4+16+20)/4 */
	CHECK_INT(dst[1], 18);
	CHECK_INT(dst[2], 42);
	CHECK_INT(dst[3], 50);
	image_resize_area(src, 4, 4, same, 4, 4);
	CHECK(memcmp(src, same, 16) == 0);
	/* 4 -> 3: output 0 covers source [0, 4/3): weights 3 and 1 (of 4) */
	image_resize_area(src, 4, 4, three, 3, 3);
	/* row weights (3,1)/4, col weights (3,1)/4: (9*0 + 3*4 + 3*16 + 1*20) / 16 = 5 */
	CHECK_INT(three[0], 5);
	uint8_t flat[100], small[9];
	memset(flat, 77, sizeof(flat));
	image_resize_area(flat, 10, 10, small, 3, 3);
	for (int i = 0; i < 9; i++)
		CHECK_INT(small[i], 77);
	uint8_t crop[4];
	image_crop(src, 4, 1, 2, 2, 1, crop);
	CHECK_INT(crop[0], 40);
	CHECK_INT(crop[1], 36);
	CHECK_INT(crop[2], 56);
}

/* A folder's fingerprint covers its key, made by the first fingerprint
 * (before the loader opens the set), so a resume sees the first run's;
 * a new key (a new split) is a new fingerprint; a pack's is its index. */
static void test_fingerprint_covers_the_key(void)
{
	char a[64], b[64], c[64], err[1024] = "", path[4300];
	char *dir = test_path(test_tmpdir(), "fp");
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/train.csv", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("path\n", f);
	fclose(f);
	CHECK_MSG(data_fingerprint(dir, a, sizeof(a), err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/%s", dir, DATA_KEY_FILE);
	CHECK_MSG(access(path, F_OK) == 0, "no key made by the fingerprint");
	CHECK_MSG(data_fingerprint(dir, b, sizeof(b), err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(a, b);
	unlink(path);
	CHECK_MSG(data_fingerprint(dir, c, sizeof(c), err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(strcmp(a, c) != 0, "a new key kept the fingerprint %s", a);
	free(dir);
}

/* A 2:1 image (8x4, white) padded to a square is centred
 * between black bars, never stretched (squash fills the square); a
 * square image is resized exactly as before; odd margins keep the floor
 * offset (a 3x1 bar lands on the middle row of 3). */
static void test_pad_to_square_keeps_the_aspect(void)
{
	uint8_t wide[32], out[16], tall[16], bar[3] = { 200, 200, 200 }, three[9], same[16];
	memset(wide, 255, sizeof(wide));
	image_resize_square(wide, 8, 4, IMAGE_ASPECT_PAD, out, 4);
	for (int x = 0; x < 4; x++) {
		CHECK_INT(out[x], 0);          /* rows 0 and 3: the padding */
		CHECK_INT(out[4 + x], 255);    /* rows 1 and 2: the image */
		CHECK_INT(out[8 + x], 255);
		CHECK_INT(out[12 + x], 0);
	}
	image_resize_square(wide, 4, 8, IMAGE_ASPECT_PAD, tall, 4);
	for (int y = 0; y < 4; y++)
		CHECK(tall[y * 4] == 0 && tall[y * 4 + 1] == 255 && tall[y * 4 + 2] == 255 &&
		      tall[y * 4 + 3] == 0);
	image_resize_square(wide, 8, 4, IMAGE_ASPECT_SQUASH, out, 4);
	for (int i = 0; i < 16; i++)
		CHECK_INT(out[i], 255);
	image_resize_square(bar, 3, 1, IMAGE_ASPECT_PAD, three, 3);
	CHECK(three[0] == 0 && three[3] == 200 && three[5] == 200 && three[8] == 0);
	const uint8_t src[16] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60 };
	uint8_t ref[9];
	image_resize_square(src, 4, 4, IMAGE_ASPECT_PAD, three, 3);
	image_resize_area(src, 4, 4, ref, 3, 3);
	CHECK(memcmp(three, ref, 9) == 0);
	image_resize_square(src, 4, 4, IMAGE_ASPECT_PAD, same, 4);
	CHECK(memcmp(src, same, 16) == 0);
}

static void test_shard_codecs_and_bad_crc(void)
{
	enum { S = 8 };
	uint8_t rec[SHARD_RECORD_HEADER_BYTES + S * S], px[S * S], head[SHARD_HEADER_BYTES];
	const char *why = NULL;
	for (int i = 0; i < S * S; i++)
		px[i] = (uint8_t)i;
	struct shard_record_info in = { .index = 41, .patient = 7, .labels = 0x2001 }, out;
	snprintf(in.name, sizeof(in.name), "00000007_001.png");
	shard_record_encode(rec, S, &in, px);
	CHECK_INT(shard_record_decode(rec, S, &out, &why), 0);
	CHECK_INT(out.index, 41);
	CHECK_INT(out.patient, 7);
	CHECK_INT(out.labels, 0x2001);
	CHECK_STR(out.name, "00000007_001.png");
	CHECK(memcmp(rec + SHARD_RECORD_HEADER_BYTES, px, sizeof(px)) == 0);
	rec[SHARD_RECORD_HEADER_BYTES + 5] ^= 1;
	CHECK_INT(shard_record_decode(rec, S, &out, &why), -1);
	CHECK_STR(why, "record CRC32C mismatch");
	struct shard_header h = { .split = 2, .size = S, .record_bytes = (uint32_t)shard_record_bytes(S),
				  .first_record = 1ull << 33, .count = 5, .shard = 1, .shards = 3,
				  .plan_crc = 0xDEADBEEF }, g;
	shard_header_encode(&h, head);
	CHECK_INT(shard_header_decode(head, &g, &why), 0);
	CHECK(g.first_record == h.first_record && g.plan_crc == h.plan_crc && g.shards == 3);
	head[33] ^= 1;
	CHECK_INT(shard_header_decode(head, &g, &why), -1);
	CHECK_STR(why, "header CRC32C mismatch");
}

const struct test_case data_formats_tests[] = {
	{ "crc32c_known_answer", test_crc32c_known_answer },
	{ "labels_parse", test_labels_parse },
	{ "csv_split_quotes_and_brackets", test_csv_split_quotes_and_brackets },
	{ "real_nih_csv_all_rows_and_label_counts", test_real_nih_csv_all_rows_and_label_counts },
	{ "nih_2017_variant_with_trailing_comma", test_nih_2017_variant_with_trailing_comma },
	{ "nih_bad_label_and_field_count_name_line", test_nih_bad_label_and_field_count_name_line },
	{ "truncated_gzip_csv_is_an_error", test_truncated_gzip_csv_is_an_error },
	{ "nih_lists_and_rows_are_checked", test_nih_lists_and_rows_are_checked },
	{ "generic_layout_with_quoted_path", test_generic_layout_with_quoted_path },
	{ "patient_split_has_no_shared_patient", test_patient_split_has_no_shared_patient },
	{ "patient_split_depends_on_id_and_key_only", test_patient_split_depends_on_id_and_key_only },
	{ "pad_to_square_keeps_the_aspect", test_pad_to_square_keeps_the_aspect },
	{ "fingerprint_covers_the_key", test_fingerprint_covers_the_key },
	{ "real_pngs_decode_to_512", test_real_pngs_decode_to_512 },
	{ "png_every_color_type_to_gray", test_png_every_color_type_to_gray },
	{ "png_low_bit_depths_and_palette", test_png_low_bit_depths_and_palette },
	{ "png16_twelve_bit_data_decodes_full_range", test_png16_twelve_bit_data_decodes_full_range },
	{ "percentile_window_matches_sorting", test_percentile_window_matches_sorting },
	{ "jpeg_full_and_scaled_decode", test_jpeg_full_and_scaled_decode },
	{ "truncated_or_corrupt_images_are_errors", test_truncated_or_corrupt_images_are_errors },
	{ "area_resize_exact_values", test_area_resize_exact_values },
	{ "shard_codecs_and_bad_crc", test_shard_codecs_and_bad_crc },
	{ 0 }
};
