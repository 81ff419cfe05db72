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

#include "data/dicom_pixels.h"
#include "data/image_decode.h"
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

const struct test_case dicom_tests[] = {
	{ "pydicom_files_and_generated_dx_match_the_reference",
	  test_pydicom_files_and_generated_dx_match_the_reference },
	{ 0 }
};
