/* test_dicom.c - group data-dicom: DICOM files no one here wrote (the
 * test files of the pinned pydicom wheel) and DX images pydicom generates,
 * each decoded by chexnet (GDCM + dicom_pixels.c) and compared with the
 * reference pipeline tests/dicom_reference.py computes with pydicom +
 * numpy (+ pylibjpeg for compressed syntaxes), or refused with its reason
 * in one line. The virtual environment is tests/pyenv.sh's (BUILD/pyenv).
 * What it does not do: packing or training (test_data_pack.c, the
 * end-to-end case below aside).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dicom/dicom_pixels.h"
#include "data/codec/image_decode.h"
#include "base/crc32c.h"
#include "data/sets/set.h"
#include "data/pack/shard.h"
#include "data/sets/view.h"
#include "runner.h"

/* Builds BUILD/pyenv and runs the reference into the case's folder. */
static int make_reference(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/tests/pyenv.sh' '%s' && '%s/pyenv/bin/python' -W ignore "
		 "'%s/tests/dicom_reference.py' '%s/ref'", test_src_dir(), test_build_dir(),
		 test_build_dir(), test_src_dir(), test_tmpdir());
	int rc = test_run(cmd, 400, &p);
	CHECK_MSG(rc == 0 && p.exit_code == 0, "reference: %s", p.err);
	rc = (rc == 0 && p.exit_code == 0) ? 0 : -1;
	test_proc_free(&p);
	return rc;
}

static int decode(const char *name, struct image *img, char *err, size_t err_bytes)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/ref/files/%s", test_tmpdir(), name);
	return image_decode_file(path, 0, img, err, err_bytes);
}

/* `NAME ok W H MAXDIFF MINEXACT`: within tolerance of NAME.u8. */
static void check_ok(const char *name, int w, int h, int maxdiff, double min_exact)
{
	struct image img;
	char err[1024] = "", path[4200], flat[256];
	snprintf(flat, sizeof(flat), "%s", name);
	for (char *c = flat; *c; c++)
		*c = *c == '/' ? '_' : *c;
	snprintf(path, sizeof(path), "%s/ref/%s.u8", test_tmpdir(), flat);
	size_t len = 0;
	uint8_t *ref = (uint8_t *)test_read_file(path, &len);
	int rc = decode(name, &img, err, sizeof(err));
	CHECK_MSG(rc == 0, "%s: refused: %s", name, err);
	if (rc == 0 && ref) {
		CHECK_MSG(img.width == w && img.height == h && len == (size_t)w * h,
			  "%s: %dx%d, reference %dx%d", name, img.width, img.height, w, h);
		if (img.width == w && img.height == h && len == (size_t)w * h) {
			int worst = 0;
			size_t equal = 0;
			for (size_t i = 0; i < len; i++) {
				int d = abs(img.pixels[i] - ref[i]);
				worst = d > worst ? d : worst;
				equal += d == 0;
			}
			CHECK_MSG(worst <= maxdiff && equal >= min_exact * (double)len,
				  "%s: max |diff| %d (allowed %d), %zu of %zu equal (need %.0f%%)", name,
				  worst, maxdiff, equal, len, 100 * min_exact);
		}
	}
	if (rc == 0)
		image_free(&img);
	free(ref);
}

static void check_refused(const char *name, const char *reason)
{
	struct image img;
	char err[1024] = "", want[600];
	int rc = decode(name, &img, err, sizeof(err));
	CHECK_MSG(rc == -1, "%s: accepted, expected refused: %s", name, reason);
	if (rc == 0) {
		image_free(&img);
		return;
	}
	snprintf(want, sizeof(want), "/%s': DICOM: ", name);
	CHECK_MSG(strstr(err, want) && strstr(err, reason) && !strchr(err, '\n') &&
		  !strncmp(err, "chexnet: image '", 16), "%s: message '%s', expected '...%s...%s'",
		  name, err, want, reason);
}

static void check_same(const char *a, const char *b)
{
	struct image x, y;
	char err[1024] = "";
	int ra = decode(a, &x, err, sizeof(err)), rb = decode(b, &y, err, sizeof(err));
	CHECK_MSG(ra == 0 && rb == 0, "%s / %s: %s", a, b, err);
	if (ra == 0 && rb == 0)
		CHECK_MSG(x.width == y.width && x.height == y.height &&
			  !memcmp(x.pixels, y.pixels, (size_t)x.width * x.height),
			  "%s and %s decode to different images", a, b);
	if (ra == 0)
		image_free(&x);
	if (rb == 0)
		image_free(&y);
}

static void test_pydicom_files_and_generated_dx_match_the_reference(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_reference() != 0)
		return;
	char *path = test_path(test_tmpdir(), "ref/manifest.txt");
	char *text = test_read_file(path, NULL);
	int lines = 0, decoded = 0, refused = 0;
	CHECK(text != NULL);
	for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		char *f[6] = { 0 }, *s2 = NULL;
		int n = 0;
		for (char *t = strtok_r(line, "\t", &s2); t && n < 6; t = strtok_r(NULL, "\t", &s2))
			f[n++] = t;
		if (n == 6 && !strcmp(f[1], "ok"))
			check_ok(f[0], atoi(f[2]), atoi(f[3]), atoi(f[4]), atof(f[5])), decoded++;
		else if (n == 3 && !strcmp(f[1], "refuse"))
			check_refused(f[0], f[2]), refused++;
		else if (n == 3 && !strcmp(f[1], "same"))
			check_same(f[0], f[2]);
		else if (n == 4 && !strcmp(f[1], "decodes")) {
			struct image img;
			char err[1024] = "";
			int rc = decode(f[0], &img, err, sizeof(err));
			CHECK_MSG(rc == 0 && img.width == atoi(f[2]) && img.height == atoi(f[3]),
				  "%s: %s", f[0], err);
			if (rc == 0)
				image_free(&img);
			decoded++;
		} else
			CHECK_MSG(0, "manifest line %d: not understood", lines + 1);
	}
	CHECK_MSG(decoded >= 25 && refused >= 20, "%d decoded, %d refused: the manifest is short",
		  decoded, refused);
	free(text);
	free(path);
}

/* The generated data sets (dicom_reference.py --dataset) in the case's
 * folder: set/, disagree/, overlap/, truth.txt. */
static int make_dataset(void)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/tests/pyenv.sh' '%s' && '%s/pyenv/bin/python' -W ignore "
		 "'%s/tests/dicom_reference.py' --dataset '%s/ds'", test_src_dir(), test_build_dir(),
		 test_build_dir(), test_src_dir(), test_tmpdir());
	int rc = test_run(cmd, 400, &p);
	CHECK_MSG(rc == 0 && p.exit_code == 0, "dataset: %s", p.err);
	rc = (rc == 0 && p.exit_code == 0) ? 0 : -1;
	test_proc_free(&p);
	return rc;
}

static void tool(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "cd '%s' && B='%s' && %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

/* The letter truth.txt gives image name, or 0. */
static char truth_patient(const char *truth, const char *name)
{
	char key[200];
	snprintf(key, sizeof(key), "%s ", name);
	const char *at = strstr(truth, key);
	return at ? at[strlen(key)] : 0;
}

/* Patients come from the DICOM Patient IDs (no patient column): the
 * images of one patient share a number and a split (val by patient),
 * different patients differ; the pack records the key and stores no ID. */
static void test_dicom_patients_stay_together_and_ids_are_not_stored(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_dataset() != 0)
		return;
	char dir[4200], err[1024] = "";
	snprintf(dir, sizeof(dir), "%s/ds/set", test_tmpdir());
	char *truth_path = test_path(test_tmpdir(), "ds/truth.txt");
	char *truth = test_read_file(truth_path, NULL);
	struct data_set set;
	CHECK_MSG(data_set_open(&set, dir, 0.4, err, sizeof(err)) == 0, "%s", err);
	uint32_t number[26] = { 0 };
	int split_of[26], seen[26] = { 0 };
	CHECK_INT((int)set.dicom_images, 12);
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < set.split[s].count; i++) {
			const struct data_entry *e = &set.split[s].items[i];
			char letter = truth ? truth_patient(truth, strrchr(e->name, '/') + 1) : 0;
			CHECK_MSG(letter >= 'A' && letter <= 'Z', "%s: not in truth.txt", e->name);
			if (letter < 'A' || letter > 'Z')
				continue;
			int k = letter - 'A';
			if (seen[k])
				CHECK_MSG(number[k] == e->patient && split_of[k] == s,
					  "patient %c: images in two splits or with two numbers", letter);
			number[k] = e->patient, split_of[k] = s, seen[k] = 1;
		}
	for (int a = 0; a < 26; a++)
		for (int b = a + 1; b < 26; b++)
			if (seen[a] && seen[b])
				CHECK_MSG(number[a] != number[b], "patients %c and %c: one number", 'A' + a, 'A' + b);
	CHECK_MSG(set.split[1].count > 0, "no val images");
	CHECK_INT(split_of['E' - 'A'], 2);
	data_set_free(&set);
	struct test_proc p;
	tool("\"$B/chexnet-data\" pack --data ds/set --out pk --size 16 2>&1 && "
	     "grep -c '^patient-key [0-9a-f]\\{32\\}$' pk/index.txt && ! grep -rl HOSP- pk", &p, 120);
	CHECK_MSG(p.exit_code == 0, "pack, key line or an ID in the pack: %s%s", p.out, p.err);
	test_proc_free(&p);
	free(truth);
	free(truth_path);
}

/* A patient column that does not pair one to one with the Patient IDs,
 * and a patient with train and test images, are refused in one line
 * that names images, never an ID. */
static void test_patient_disagreement_and_overlap_are_refused(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_dataset() != 0)
		return;
	const struct { const char *dir, *want; } cases[] = {
		{ "disagree", "images 'images/img00.dcm' and 'images/img01.dcm': one DICOM Patient ID but "
		  "patients 65 and 66 in the labels CSV" },
		{ "overlap", "test image 'images/img02.dcm': its patient (" },
	};
	for (size_t k = 0; k < 2; k++) {
		char dir[4200], err[1024] = "";
		struct data_set set;
		snprintf(dir, sizeof(dir), "%s/ds/%s", test_tmpdir(), cases[k].dir);
		CHECK_INT(data_set_open(&set, dir, 0.1, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, cases[k].want);
		CHECK(!strchr(err, '\n') && !strstr(err, "HOSP-"));
	}
}

/* Views of every record of a split of pack dir: count per code. */
static void pack_views(const char *dir, int split, size_t counts[8])
{
	struct shard_set set;
	struct shard_record_info info;
	char err[1024] = "";
	memset(counts, 0, 8 * sizeof(counts[0]));
	CHECK_MSG(shard_set_open(&set, dir, split, err, sizeof(err)) == 0, "%s", err);
	uint8_t *rec = malloc(set.record_bytes);
	for (size_t i = 0; rec && i < set.count; i++) {
		int rc = shard_set_read(&set, i, rec, &info, err, sizeof(err));
		CHECK_MSG(rc == 0, "%s", err);
		counts[rc == 0 && info.view < 8 ? info.view : 7]++;
	}
	free(rec);
	shard_set_close(&set);
}

/* Rewrites every shard of dir as version 1 (header CRC recomputed): what
 * a pack written before views were stored looks like. */
static void make_version_1(const char *dir)
{
	char cmd[8192];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "ls '%s'/*.shard", dir);
	CHECK(test_run(cmd, 30, &p) == 0);
	for (char *save = NULL, *f = strtok_r(p.out, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
		FILE *fp = fopen(f, "r+b");
		uint8_t head[64];
		CHECK(fp && fread(head, 1, 64, fp) == 64);
		head[8] = 1, head[9] = head[10] = head[11] = 0;
		uint32_t crc = crc32c(0, head, 60);
		for (int i = 0; i < 4; i++)
			head[60 + i] = (uint8_t)(crc >> (8 * i));
		CHECK(fp && fseek(fp, 0, SEEK_SET) == 0 && fwrite(head, 1, 64, fp) == 64);
		if (fp)
			fclose(fp);
	}
	test_proc_free(&p);
}

/* --views keeps the NIH rows (View Position column) and the DICOM images
 * (0018,5101) of the views named; each record stores its view (shard
 * version 2); a version-1 pack still reads, and a repack rewrites it. */
static void test_views_filter_nih_rows_and_dicom_and_are_stored(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_dataset() != 0)
		return;
	struct test_proc p;
	size_t v[8], total = 0;
	char dir[4200];
	tool("\"$B/chexnet-data\" pack --data ds/set --out pa --size 16 --views PA", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	CHECK_CONTAINS(p.out, "packed 6 images");
	test_proc_free(&p);
	snprintf(dir, sizeof(dir), "%s/pa", test_tmpdir());
	for (int s = 0; s < 3; s++) {
		pack_views(dir, s, v);
		total += v[DATA_VIEW_PA];
		size_t other = 0;
		for (int c = 0; c < 8; c++)
			other += c == DATA_VIEW_PA ? 0 : v[c];
		CHECK_MSG(other == 0, "split %d: %zu records not PA", s, other);
	}
	CHECK_INT(total, 6);
	/* NIH: synth writes PA; three rows become AP */
	tool("\"$B/chexnet-data\" synth --out nih --count 12 --size 32 > /dev/null && cd nih && "
	     "awk -F, -v OFS=, 'NR >= 2 && NR <= 4 { $7 = \"AP\" } 1' Data_Entry_2017_v2020.csv > e && "
	     "mv e Data_Entry_2017_v2020.csv && cd .. && \"$B/chexnet-data\" pack --data nih --out ap "
	     "--size 16 --views AP", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	CHECK_CONTAINS(p.out, "packed 3 images");
	test_proc_free(&p);
	tool("\"$B/chexnet-data\" pack --data nih --out ap --size 16 --views LATERAL", &p, 60);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: views 'LATERAL': 'LATERAL': not one of PA, AP, LL, RL, OTHER");
	test_proc_free(&p);
	/* a version-1 pack (its headers rewritten; real ones hold 0 where
	 * the view is) still reads; a repack keeps none of it */
	make_version_1(dir);
	pack_views(dir, 0, v);
	CHECK_MSG(v[DATA_VIEW_PA] > 0, "version 1 shards no longer read");
	tool("\"$B/chexnet-data\" pack --data ds/set --out pa --size 16 --views PA", &p, 120);
	CHECK_CONTAINS(p.out, "(0 kept from a previous run)");
	test_proc_free(&p);
}

/* Two unreadable files in the set (pydicom's truncated MR, an SR): pack
 * stops at the first, naming it; with --skip-unreadable it packs the
 * other 10, lists both in OUT/skipped.txt (one line each) and the
 * index's counts are the 10 (and --preview passes over the two); a clean
 * repack (an MR among them: packed with a note) removes the old list. */
static void test_skip_unreadable_lists_them_and_packs_the_rest(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_dataset() != 0 || make_reference() != 0)
		return;
	struct test_proc p;
	tool("cp ref/files/MR_truncated.dcm ds/set/images/img03.dcm && "
	     "cp ref/files/test-SR.dcm ds/set/images/img09.dcm && "
	     "\"$B/chexnet-data\" pack --data ds/set --out pk --size 16", &p, 120);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "img03.dcm': DICOM: pixel data of 8192 bytes cut short by the end of the file");
	test_proc_free(&p);
	tool("\"$B/chexnet-data\" pack --data ds/set --out pk --size 16 --skip-unreadable && "
	     "cat pk/skipped.txt && grep '^labels' pk/index.txt | awk '{ n += $3 } END { print \"records\", n }'",
	     &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	CHECK_CONTAINS(p.out, "packed 10 images");
	CHECK_CONTAINS(p.out, "skipped 2 unreadable images");
	CHECK(!strstr(p.out, "note:"));   /* the MR was skipped: all DX */
	CHECK_CONTAINS(p.out, "\nchexnet: image 'ds/set/images/img03.dcm': DICOM: pixel data of 8192 bytes cut "
		       "short by the end of the file: truncated\n");
	CHECK_CONTAINS(p.out, "\nchexnet: image 'ds/set/images/img09.dcm': DICOM: no pixel data");
	CHECK_CONTAINS(p.out, "records 10\n");
	test_proc_free(&p);
	tool("\"$B/chexnet-data\" pack --data ds/set --preview 12 prev --size 16 --skip-unreadable", &p, 120);
	CHECK_CONTAINS(p.out, "wrote 10 preview images");
	test_proc_free(&p);
	tool("cp ref/files/MR_small.dcm ds/set/images/img03.dcm && cp ds/set/images/img01.dcm "
	     "ds/set/images/img09.dcm && \"$B/chexnet-data\" pack --data ds/set --out pk --size 16 "
	     "--skip-unreadable && test ! -e pk/skipped.txt", &p, 120);
	CHECK_MSG(p.exit_code == 0, "a clean repack: %s", p.err);
	CHECK_CONTAINS(p.out, "packed 12 images");
	CHECK_CONTAINS(p.out, "chexnet: note: 1 DICOM images are not CR, DX or DR (e.g. 'MR')");
	test_proc_free(&p);
}

/* End to end: a DICOM folder with a labels CSV packs, trains two steps
 * from the pack, predicts on a DICOM file named without extension,
 * evaluates and trains in direct mode from the folder itself (eval of
 * the folder gives exactly the pack's numbers: the checkpoint's view, a
 * pack at 40 for --size 32, not 8/7 of it); --preview writes the images
 * as the packer stores them. */
static void test_dicom_folder_packs_trains_and_predicts(void)
{
	if (!dicom_read_available())
		SKIP("built without GDCM (WITH_GDCM)");
	if (make_dataset() != 0)
		return;
	struct test_proc p;
	tool("\"$B/chexnet\" pack --data ds/set --out pk --size 40 && "
	     "\"$B/chexnet\" train --data pk --size 32 --backend ref --batch 2 --steps 2 --seed 7 "
	     "--out ck --quiet && \"$B/chexnet\" predict --checkpoint ck/last --backend ref --size 32 "
	     "ds/set/images/scan07", &p, 240);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	CHECK_CONTAINS(p.out, "packed 12 images");
	CHECK_CONTAINS(p.out, "\nds/set/images/scan07 0.");
	test_proc_free(&p);
	tool("\"$B/chexnet\" eval --checkpoint ck/last --data ds/set --backend ref --size 32 --batch 2 && "
	     "\"$B/chexnet\" train --data ds/set --size 32 --backend ref --batch 2 --steps 1 --seed 7 "
	     "--out ck2 --quiet", &p, 240);
	CHECK_MSG(p.exit_code == 0, "direct mode: %s", p.err);
	CHECK_CONTAINS(p.out, "Hernia");
	test_proc_free(&p);
	/* one view: the DICOM folder evaluates exactly as its pack */
	struct test_proc q;
	tool("\"$B/chexnet\" eval --json --bootstrap 0 --checkpoint ck/last --data pk --backend ref "
	     "--batch 2", &p, 240);
	tool("\"$B/chexnet\" eval --json --bootstrap 0 --checkpoint ck/last --data ds/set --backend ref "
	     "--batch 2", &q, 240);
	CHECK_MSG(p.exit_code == 0 && q.exit_code == 0, "%s %s", p.err, q.err);
	CHECK_MSG(strcmp(p.out, q.out) == 0, "the pack and the DICOM folder differ:\n%.300s\n%.300s",
		  p.out, q.out);
	test_proc_free(&p);
	test_proc_free(&q);
	/* both runs record how pixels became 8 bits: the pack's rule, direct
	 * mode's own (the same rule in this build) */
	tool("cat ck/run.json; echo ==; cat ck2/run.json", &p, 30);
	const char *rule = "\"pixels\":\t\"" IMAGE_PIXEL_RULE "\"", *second = strstr(p.out, "\n==\n");
	CHECK_MSG(second && strstr(p.out, rule) < second && strstr(second, rule), "%s in: %.3000s", rule, p.out);
	test_proc_free(&p);
	/* the preview is what the pack stores: record 0 of train == its PNG
	 * (patient A, img00-02, is val under the set's key) */
	tool("\"$B/chexnet\" pack --data ds/set --preview 2 prev --size 40 && ls prev", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	CHECK_CONTAINS(p.out, "wrote 2 preview images of 'ds/set' at 40x40 to 'prev'");
	CHECK_CONTAINS(p.out, "0000-images_img03.dcm.png\n0001-images_img04.dcm.png\n");
	test_proc_free(&p);
	char path[4200], dir[4200], err[1024] = "";
	struct image img;
	struct shard_set set;
	struct shard_record_info info;
	snprintf(path, sizeof(path), "%s/prev/0000-images_img03.dcm.png", test_tmpdir());
	snprintf(dir, sizeof(dir), "%s/pk", test_tmpdir());
	CHECK_MSG(image_decode_file(path, 0, &img, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(shard_set_open(&set, dir, 0, err, sizeof(err)) == 0, "%s", err);
	uint8_t *rec = malloc(set.record_bytes);
	CHECK(rec && shard_set_read(&set, 0, rec, &info, err, sizeof(err)) == 0);
	if (rec && img.pixels && img.width == 40)
		CHECK_MSG(!strcmp(info.name, "img03.dcm") &&
			  !memcmp(rec + SHARD_RECORD_HEADER_BYTES, img.pixels, 40 * 40),
			  "preview of %s differs from the packed record", info.name);
	free(rec);
	shard_set_close(&set);
	image_free(&img);
}

const struct test_case dicom_tests[] = {
	{ "pydicom_files_and_generated_dx_match_the_reference",
	  test_pydicom_files_and_generated_dx_match_the_reference },
	{ "dicom_patients_stay_together_and_ids_are_not_stored",
	  test_dicom_patients_stay_together_and_ids_are_not_stored },
	{ "patient_disagreement_and_overlap_are_refused", test_patient_disagreement_and_overlap_are_refused },
	{ "views_filter_nih_rows_and_dicom_and_are_stored", test_views_filter_nih_rows_and_dicom_and_are_stored },
	{ "skip_unreadable_lists_them_and_packs_the_rest", test_skip_unreadable_lists_them_and_packs_the_rest },
	{ "dicom_folder_packs_trains_and_predicts", test_dicom_folder_packs_trains_and_predicts },
	{ 0 }
};
