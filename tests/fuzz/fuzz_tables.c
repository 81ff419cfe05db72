/* fuzz_tables.c - libFuzzer target for the text files a data set is made
 * of (data/sets/csv.c, data/sets/nih.c, data/sets/generic.c): the first input byte picks
 * which file the rest becomes - NIH Data_Entry CSV, the NIH train/val and
 * test lists (the rest split at the first NUL), or a generic train.csv -
 * next to valid versions of the others, and whether it is written plain
 * or as gzip (the first half compressed, the rest appended raw: trailing
 * bytes). data_set_open must then succeed or fail with one line; every
 * entry it returns must have a name that stays inside the data directory.
 * Seeds: the valid files themselves.
 * What it does not do: open images (fuzz_image.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/sets/path_check.h"
#include "data/sets/set.h"
#include "fuzz_files.h"

static const char entry_csv[] =
	"Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position,"
	"OriginalImage[Width,Height],OriginalImagePixelSpacing[x,y]\n"
	"00000001_000.png,Cardiomegaly,0,1,58,M,PA,2682,2749,0.143,0.143\n"
	"00000001_001.png,Cardiomegaly|Emphysema,1,1,58,M,PA,2894,2729,0.143,0.143\n"
	"00000002_000.png,No Finding,0,2,81,M,PA,2500,2048,0.171,0.171\n"
	"00000003_000.png,Hernia,0,3,81,F,PA,2582,2991,0.143,0.143\n";
static const char train_list[] = "00000001_000.png\n00000001_001.png\n00000002_000.png\n";
static const char test_list[] = "00000003_000.png\n";
static const char generic_head[] =
	"path,Atelectasis,Cardiomegaly,Effusion,Infiltration,Mass,Nodule,Pneumonia,Pneumothorax,"
	"Consolidation,Edema,Emphysema,Fibrosis,Pleural_Thickening,Hernia,patient\n";
static const char generic_rows[] =
	"a/x.png,0,1,0,0,0,0,0,0,0,0,0,0,0,0,1\nb.png,1,0,0,0,0,0,0,0,0,0,0,0,0,1,2\n";

/* name <- data, gzip'd up to half when gz (the rest raw after it). */
static void put(const char *name, const uint8_t *data, size_t size, int gz)
{
	if (!gz) {
		fuzz_write(name, data, size);
		return;
	}
	size_t half = size / 2;
	uLongf out_bytes = compressBound(half) + 64;
	uint8_t *out = malloc(out_bytes + size);
	z_stream z = { 0 };
	deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)half;
	z.next_out = out;
	z.avail_out = (uInt)out_bytes;
	deflate(&z, Z_FINISH);
	size_t n = z.total_out;
	deflateEnd(&z);
	memcpy(out + n, data + half, size - half);
	fuzz_write(name, out, n + size - half);
	free(out);
}

static void reset_dir(void)
{
	static const char *const names[] = { "Data_Entry_2017_v2020.csv", "Data_Entry_2017_v2020.csv.gz",
		"train_val_list.txt", "test_list.txt", "train.csv", "test.csv", NULL };
	char path[1024];
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), names[i]);
		remove(path);
	}
}

static void check_set(void)
{
	struct data_set set;
	char err[1024] = "";
	memset(&set, 0, sizeof(set));
	if (data_set_open(&set, fuzz_dir(), 0.25, err, sizeof(err)) == 0) {
		for (int s = 0; s < 3; s++)
			for (size_t i = 0; i < set.split[s].count; i++)
				if (data_path_check(set.split[s].items[i].name))
					abort();   /* a name that leaves the data directory got through */
		data_set_free(&set);
	} else {
		for (const char *c = err; *c; c++)   /* one line, nothing for a terminal but tabs */
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				abort();
		if (!err[0])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int mode = (data[0] & 0x7f) % 3, gz = data[0] & 0x80;
	const uint8_t *rest = data + 1;
	size_t n = size - 1;
	reset_dir();
	if (mode == 0) {
		put(gz ? "Data_Entry_2017_v2020.csv.gz" : "Data_Entry_2017_v2020.csv", rest, n, gz);
		fuzz_write("train_val_list.txt", train_list, strlen(train_list));
		fuzz_write("test_list.txt", test_list, strlen(test_list));
	} else if (mode == 1) {
		const uint8_t *nul = memchr(rest, 0, n);
		size_t first = nul ? (size_t)(nul - rest) : n;
		fuzz_write("Data_Entry_2017_v2020.csv", entry_csv, strlen(entry_csv));
		put("train_val_list.txt", rest, first, gz);
		put("test_list.txt", nul ? nul + 1 : rest + n, nul ? n - first - 1 : 0, 0);
	} else {
		char *test = malloc(strlen(generic_head) + strlen(generic_rows) + 1);
		sprintf(test, "%s%s", generic_head, generic_rows);
		put("train.csv", rest, n, gz);
		fuzz_write("test.csv", test, strlen(test));
		free(test);
	}
	check_set();
	return 0;
}

static void seed_with(const char *dir, const char *name, int mode, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	uint8_t *buf = malloc(2 + la + lb);
	buf[0] = (uint8_t)mode;
	memcpy(buf + 1, a, la);
	if (b) {
		buf[1 + la] = 0;
		memcpy(buf + 2 + la, b, lb);
	}
	fuzz_seed(dir, name, buf, 1 + la + (b ? 1 + lb : 0));
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	char generic[1024];
	if (!dir)
		return 0;
	snprintf(generic, sizeof(generic), "%s%s", generic_head, generic_rows);
	seed_with(dir, "seed-entry", 0, entry_csv, NULL);
	seed_with(dir, "seed-entry-gz", 0x80 | 0, entry_csv, NULL);
	seed_with(dir, "seed-lists", 1, train_list, test_list);
	seed_with(dir, "seed-generic", 2, generic, NULL);
	return 0;
}
