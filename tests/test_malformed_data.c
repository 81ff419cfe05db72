/* test_malformed_data.c - malformed data-set and pack files are refused
 * with one line naming the file and the field (issue 19, point 4; the
 * findings of the first libFuzzer run of the readers, kept as regression
 * cases): index.txt numbers with signs, junk or overflow, positives above
 * the records, a labels line counting records no shard holds; list lines
 * longer than a name; image paths leaving the data directory; PNGs cut
 * after their image data or with a bad IDAT CRC; a PNG declaring more
 * pixels than its file can hold (refused before allocating); bytes after
 * a gzip CSV; a FIFO named like an image (never waited on); a data set's
 * key file that is junk, short, a FIFO or a symbolic link. Well-formed files next to each are still accepted.
 * What it does not test: the fuzz targets themselves (test_fuzz_files.c).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "runner.h"
#include "data/dicom/dicom_pixels.h"
#include "data/sets/set.h"
#include "data/sets/split_key.h"
#include "data/pack/shard.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"

static int one_line(const char *s) { return s && *s && !strchr(s, '\n'); }

static const char zeros[] = " 0 0 0 0 0 0 0 0 0 0 0 0 0 0";

/* index.txt of "hvd-pack 1\nsize 8\n" + body; label_counts of train must
 * fail with want (NULL: succeed). */
static void index_case(const char *body, const char *want)
{
	char *path = test_path(test_tmpdir(), "index.txt"), *text = NULL, err[1024] = "";
	uint64_t counts[SHARD_COUNTS];
	CHECK(asprintf(&text, "hvd-pack 1\n%s", body) > 0);
	test_write_file(path, text, strlen(text));
	int rc = shard_index_label_counts(test_tmpdir(), 0, counts, err, sizeof(err));
	if (!want) {
		CHECK_MSG(rc == 0, "refused: %s: %s", body, err);
	} else {
		CHECK_MSG(rc == -1, "accepted: %s", body);
		CHECK_CONTAINS(err, want);
		CHECK_CONTAINS(err, "index.txt");
		CHECK(one_line(err));
	}
	free(text);
	free(path);
}

static void test_index_txt_findings_are_refused(void)
{
	char ok[512], body[1024];
	snprintf(ok, sizeof(ok), "labels train 0%s\nlabels val 0%s\nlabels test 0%s\n", zeros, zeros, zeros);
	snprintf(body, sizeof(body), "size 8\n%s", ok);
	index_case(body, NULL);   /* an empty pack reads */
	snprintf(body, sizeof(body), "size 8junk\n%s", ok);
	index_case(body, "line 2: size '8junk': not an unsigned decimal");
	snprintf(body, sizeof(body), "size 8\nshard train 0 train-00000.shard 0 -4294967292\n%s", ok);
	index_case(body, "line 3: record count '-4294967292': not an unsigned decimal");
	snprintf(body, sizeof(body), "size 8\nshard train 0 train-00000.shard 0 18446744073709551620\n%s", ok);
	index_case(body, "record count '18446744073709551620': out of range");
	snprintf(body, sizeof(body), "size 8\nlabels train -1%s\n", zeros);
	index_case(body, "line 3: labels records '-1': not an unsigned decimal");
	snprintf(body, sizeof(body), "size 8\nlabels train 2 3%s\n", zeros + 2);
	index_case(body, "line 3: labels positives '3': out of range 0..2");
	snprintf(body, sizeof(body), "size 8\nlabels train 4%s\nlabels val 0%s\nlabels test 0%s\n",
		 zeros, zeros, zeros);
	index_case(body, "labels train records '4': the shards of train hold 0");
	snprintf(body, sizeof(body), "size 8\nshard train 1 train-00001.shard 0 4\n%s", ok);
	index_case(body, "shard number '1': out of sequence");
	snprintf(body, sizeof(body), "size 8\nshard train 0 ../x.shard 0 4\n%s", ok);
	index_case(body, "shard file '../x.shard'");
	snprintf(body, sizeof(body), "size 8\nshard valid 0 valid-00000.shard 0 4\n%s", ok);
	index_case(body, "split 'valid': expected train, val or test");
	snprintf(body, sizeof(body), "size 8\n%slabels train 0%s\n", ok, zeros);
	index_case(body, "labels split 'train': given twice");
	index_case("size 8\nlabels train 0 0\n", "labels line");
	index_case("size 8\nlabels train 0\n", "labels line");
	snprintf(body, sizeof(body), "size 8\n%sextra 1\n", ok);
	index_case(body, "line 6: line 'extra': expected 'shard', 'labels', 'pixels', 'aspect' or 'patient-key'");
	snprintf(body, sizeof(body), "size 8\npatient-key 00112233445566778899aabbccddeeff\n%s", ok);
	index_case(body, NULL);
	snprintf(body, sizeof(body), "size 8\npatient-key 0011\n%s", ok);
	index_case(body, "patient-key line '0011': expected 'patient-key' and 32 hex digits");
	/* the pixels rule: optional (older packs), once, one printable token */
	snprintf(body, sizeof(body), "size 8\npixels png16=sbit,else-p0.5-99.5\n%s", ok);
	index_case(body, NULL);
	snprintf(body, sizeof(body), "size 8\npixels a\npixels a\n%s", ok);
	index_case(body, "line 4: pixels line 'a': given twice");
	snprintf(body, sizeof(body), "size 8\npixels a b\n%s", ok);
	index_case(body, "line 3: pixels line 'pixels': expected 'pixels RULE'");
	snprintf(body, sizeof(body), "size 8\npixels a\tb\n%s", ok);
	index_case(body, "pixels rule 'a\tb': not printable ASCII");
	snprintf(body, sizeof(body), "size  8\n%s", ok);
	index_case(body, "empty field");
}

/* dir/name <- text */
static void put(const char *dir, const char *name, const char *text)
{
	char *path = test_path(dir, name);
	test_write_file(path, text, strlen(text));
	free(path);
}

/* data_set_open of the temporary directory must fail with want. */
static void set_refused(const char *want)
{
	struct data_set set;
	char err[2048] = "";
	memset(&set, 0, sizeof(set));
	int rc = data_set_open(&set, test_tmpdir(), 0.1, err, sizeof(err));
	CHECK_MSG(rc == -1, "accepted (%s expected)", want);
	if (rc == 0)
		data_set_free(&set);
	CHECK_CONTAINS(err, want);
	CHECK(one_line(err));
}

static const char entry_head[] =
	"Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position,"
	"OriginalImage[Width,Height],OriginalImagePixelSpacing[x,y]\n";

static void test_list_line_longer_than_a_name_is_refused(void)
{
	char name[200], csv[1024], list[512];
	memset(name, 'n', 155);
	strcpy(name + 155, ".png");   /* 159 bytes: the longest name */
	snprintf(csv, sizeof(csv), "%s%s,No Finding,0,1,58,M,PA,1,1,0.1,0.1\n"
		 "b.png,No Finding,0,2,58,M,PA,1,1,0.1,0.1\n", entry_head, name);
	put(test_tmpdir(), "Data_Entry_2017_v2020.csv", csv);
	put(test_tmpdir(), "test_list.txt", "b.png\n");
	snprintf(list, sizeof(list), "%s\n", name);
	put(test_tmpdir(), "train_val_list.txt", list);
	struct data_set set;
	char err[2048] = "";
	CHECK_MSG(data_set_open(&set, test_tmpdir(), 0.0, err, sizeof(err)) == 0, "%s", err);
	data_set_free(&set);
	snprintf(list, sizeof(list), "%sgarbage\n", name);   /* cut to 159 bytes it was the name */
	put(test_tmpdir(), "train_val_list.txt", list);
	set_refused("train_val_list.txt' line 1: image '");
	set_refused("longer than 159 bytes");
}

static const char generic_head[] =
	"path,Atelectasis,Cardiomegaly,Effusion,Infiltration,Mass,Nodule,Pneumonia,Pneumothorax,"
	"Consolidation,Edema,Emphysema,Fibrosis,Pleural_Thickening,Hernia\n";
static const char labels[] = ",0,0,0,0,0,0,0,0,0,0,0,0,0,0\n";

static void generic_path_refused(const char *path, const char *want)
{
	char csv[1024];
	snprintf(csv, sizeof(csv), "%s%s%s", generic_head, path, labels);
	put(test_tmpdir(), "train.csv", csv);
	set_refused(want);
}

static void test_paths_outside_the_data_dir_are_refused(void)
{
	char csv[1024];
	snprintf(csv, sizeof(csv), "%simg/a.png%s", generic_head, labels);
	put(test_tmpdir(), "test.csv", csv);
	put(test_tmpdir(), "train.csv", csv);
	struct data_set set;
	char err[2048] = "";
	CHECK_MSG(data_set_open(&set, test_tmpdir(), 0.0, err, sizeof(err)) == 0, "%s", err);
	data_set_free(&set);
	generic_path_refused("../../../../etc/passwd", "train.csv' line 2: path '../../../../etc/passwd': '.' or '..' component");
	generic_path_refused("img/../../x.png", "path 'img/../../x.png': '.' or '..' component");
	generic_path_refused("/etc/passwd", "path '/etc/passwd': absolute path");
	generic_path_refused("img//a.png", "empty path component");
	/* NIH: the image index is a file name, never '..' */
	char *dir = test_path(test_tmpdir(), "nih");
	mkdir(dir, 0755);
	snprintf(csv, sizeof(csv), "%s..,No Finding,0,1,58,M,PA,1,1,0.1,0.1\n", entry_head);
	put(dir, "Data_Entry_2017_v2020.csv", csv);
	put(dir, "train_val_list.txt", "..\n");
	put(dir, "test_list.txt", "");
	memset(&set, 0, sizeof(set));
	CHECK(data_set_open(&set, dir, 0.0, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "line 2: image index '..': not a file name");
	CHECK(one_line(err));
	/* a control character (a terminal escape) never reaches a message */
	snprintf(csv, sizeof(csv), "%s\x1b[2Ja.png,No Finding,0,1,58,M,PA,1,1,0.1,0.1\n", entry_head);
	put(dir, "Data_Entry_2017_v2020.csv", csv);
	CHECK(data_set_open(&set, dir, 0.0, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "Data_Entry_2017_v2020.csv' line 2: control character 0x1b at byte 1");
	CHECK(!strchr(err, 0x1b));
	free(dir);
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

/* Offset of the chunk of type in png (its length field), or 0. */
static size_t png_chunk(const uint8_t *png, size_t bytes, const char *type)
{
	for (size_t at = 8; at + 12 <= bytes; at += 12 + be32(png + at))
		if (memcmp(png + at + 4, type, 4) == 0)
			return at;
	return 0;
}

static void decode_refused(const void *png, size_t bytes, const char *want)
{
	struct image img;
	char err[1024] = "";
	CHECK_MSG(image_decode_memory(png, bytes, "x.png", 0, &img, err, sizeof(err)) == -1,
		  "accepted (%s expected)", want);
	CHECK_CONTAINS(err, "image 'x.png'");
	CHECK_CONTAINS(err, want);
	CHECK(one_line(err));
}

static void test_png_cut_or_with_bad_crc_is_refused(void)
{
	uint8_t px[32 * 32];
	void *png = NULL;
	size_t bytes = 0;
	struct image img;
	char err[1024] = "";
	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (uint8_t)(i * 7);
	CHECK(image_png_encode(px, 32, 32, 0, 8, &png, &bytes) == 0);
	uint8_t *p = png;
	CHECK_MSG(image_decode_memory(p, bytes, "x.png", 0, &img, err, sizeof(err)) == 0, "%s", err);
	image_free(&img);
	size_t idat = png_chunk(p, bytes, "IDAT");
	CHECK(idat > 0);
	size_t data_end = idat + 8 + be32(p + idat);
	decode_refused(p, data_end, "truncated or corrupt PNG");       /* no IDAT CRC, no IEND */
	decode_refused(p, data_end + 4, "truncated or corrupt PNG");   /* no IEND */
	p[data_end] ^= 0x01;                                           /* IDAT CRC */
	decode_refused(p, bytes, "truncated or corrupt PNG");
	free(png);
}

/* A small PNG whose IHDR says side x side RGBA: refused before decoding. */
static void test_png_declaring_a_huge_image_is_refused_before_allocating(void)
{
	uint8_t px[4 * 4 * 4] = { 0 };
	void *png = NULL;
	size_t bytes = 0;
	CHECK(image_png_encode(px, 4, 4, 6, 8, &png, &bytes) == 0);
	uint8_t *p = png;
	size_t ihdr = png_chunk(p, bytes, "IHDR");
	for (int i = 0; i < 8; i++)   /* width, height = 16384 */
		p[ihdr + 8 + i] = (uint8_t)((16384u >> (24 - 8 * (i % 4))) & 0xff);
	uint32_t crc = (uint32_t)crc32(0, p + ihdr + 4, 4 + 13);
	for (int i = 0; i < 4; i++)
		p[ihdr + 8 + 13 + i] = (uint8_t)(crc >> (24 - 8 * i));
	char want[128];
	snprintf(want, sizeof(want), "PNG 16384x16384: declares 1073758208 bytes of pixel data, "
		 "more than a %zu-byte file can hold", bytes);
	decode_refused(p, bytes, want);
	free(png);
}

/* A FIFO named like an image: open would wait for a writer forever. */
static void test_fifo_named_like_an_image_is_refused_at_once(void)
{
	char *path = test_path(test_tmpdir(), "x.png"), err[1024] = "";
	struct image img;
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(image_decode_file(path, 0, &img, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "x.png': not a regular file");
	free(path);
}

/* The data set's key file: made once and read back the same; junk, a
 * short key, a FIFO (never waited on) or a symbolic link is refused in
 * one line naming the file. */
static void test_bad_key_file_is_refused(void)
{
	static const struct { const char *setup, *want; } cases[] = {
		{ "printf 'not a key\\n' > k/chexnet-key.txt", "expected one line of 32 lowercase hex" },
		{ "printf '0011\\n' > k/chexnet-key.txt", "expected one line of 32 lowercase hex" },
		{ "mkfifo k/chexnet-key.txt", "expected one line of 32 lowercase hex" },
		{ "echo 00112233445566778899aabbccddeeff > k/real && ln -s real k/chexnet-key.txt",
		  "chexnet-key.txt': Too many levels of symbolic links" },
	};
	char cmd[4400], err[1024] = "";
	uint8_t key[16], again[16];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p k", test_tmpdir());
	CHECK(test_run(cmd, 10, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	char *dir = test_path(test_tmpdir(), "k");
	CHECK_MSG(data_split_key(dir, key, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(data_split_key(dir, again, err, sizeof(err)) == 0, "%s", err);
	CHECK(memcmp(key, again, 16) == 0);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f k/chexnet-key.txt && %s", test_tmpdir(),
			 cases[k].setup);
		CHECK(test_run(cmd, 10, &p) == 0 && p.exit_code == 0);
		test_proc_free(&p);
		err[0] = 0;
		CHECK_INT(data_split_key(dir, key, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, cases[k].want);
		CHECK_CONTAINS(err, "k/chexnet-key.txt");
		CHECK(one_line(err));
	}
	free(dir);
}

static void write_gz(FILE *f, const char *text)
{
	uLongf n = compressBound(strlen(text)) + 64;
	uint8_t *out = malloc(n);
	z_stream z = { 0 };
	CHECK(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (uint8_t *)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = out;
	z.avail_out = (uInt)n;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	fwrite(out, 1, z.total_out, f);
	deflateEnd(&z);
	free(out);
}

static void test_gzip_csv_followed_by_other_bytes_is_refused(void)
{
	char *fixture = test_path(test_src_dir(), "tests/fixtures/data/entry_2017.csv");
	char *text = test_read_file(fixture, NULL), *path = test_path(test_tmpdir(), "e.csv.gz");
	char err[1024] = "";
	struct data_list l = { 0 };
	CHECK(text != NULL);
	size_t cut = strlen(text) / 2;
	while (text && text[cut - 1] != '\n')
		cut--;
	/* two members (what `cat a.gz b.gz` makes): one file */
	FILE *f = fopen(path, "wb");
	char keep = text[cut];
	text[cut] = 0;
	write_gz(f, text);
	text[cut] = keep;
	write_gz(f, text + cut);
	fclose(f);
	CHECK_MSG(data_nih_read_entries(path, &l, err, sizeof(err)) == 0, "%s", err);
	CHECK_INT(l.count, 4);
	data_list_free(&l);
	/* one member, then other bytes */
	f = fopen(path, "wb");
	write_gz(f, text);
	long end = ftell(f);
	fputs("junk,not,gzip\n", f);
	fclose(f);
	CHECK(data_nih_read_entries(path, &l, err, sizeof(err)) == -1);
	char want[128];
	snprintf(want, sizeof(want), "e.csv.gz': offset %ld: bytes after the gzip data", end);
	CHECK_CONTAINS(err, want);
	CHECK(one_line(err));
	free(text);
	free(path);
	free(fixture);
}

/* fuzz-dicom's finding: a DICOM string with a newline (a Window Center
 * "1\n2") made a two-line reason; the file's control characters are
 * shown as '?'. A NaN from inf - inf never reaches the 8-bit cast. */
static void test_dicom_reason_with_a_newline_stays_one_line(void)
{
	uint16_t px[4] = { 0, 100, 200, 300 };
	struct dicom_raw raw = {
		.has_pixel_data = 1, .image_parsed = 1, .width = 2, .height = 2, .frames = 1,
		.samples = 1, .bits_allocated = 16, .bits_stored = 12, .high_bit = 11,
		.photometric = "MONOCHROME2", .window_center = "1\n2", .window_width = "10",
		.pixels = px, .pixel_bytes = sizeof(px),
	};
	struct image img;
	char why[512] = "";
	CHECK_INT(dicom_pixels_convert(&raw, &img, why, sizeof(why)), -1);
	CHECK_STR(why, "Window Center '1?2': not a decimal number");
	snprintf(raw.window_center, sizeof(raw.window_center), "%s", "");
	snprintf(raw.slope, sizeof(raw.slope), "%s", "1e308");
	snprintf(raw.intercept, sizeof(raw.intercept), "%s", "1e308");
	CHECK_INT(dicom_pixels_convert(&raw, &img, why, sizeof(why)), -1);
	CHECK_CONTAINS(why, "Rescale Slope '1e308' / Intercept '1e308': values out of range");
}

const struct test_case malformed_data_tests[] = {
	{ "bad_key_file_is_refused", test_bad_key_file_is_refused },
	{ "index_txt_findings_are_refused", test_index_txt_findings_are_refused },
	{ "list_line_longer_than_a_name_is_refused", test_list_line_longer_than_a_name_is_refused },
	{ "paths_outside_the_data_dir_are_refused", test_paths_outside_the_data_dir_are_refused },
	{ "png_cut_or_with_bad_crc_is_refused", test_png_cut_or_with_bad_crc_is_refused },
	{ "png_declaring_a_huge_image_is_refused_before_allocating",
	  test_png_declaring_a_huge_image_is_refused_before_allocating },
	{ "fifo_named_like_an_image_is_refused_at_once", test_fifo_named_like_an_image_is_refused_at_once },
	{ "gzip_csv_followed_by_other_bytes_is_refused", test_gzip_csv_followed_by_other_bytes_is_refused },
	{ "dicom_reason_with_a_newline_stays_one_line", test_dicom_reason_with_a_newline_stays_one_line },
	{ 0 }
};
