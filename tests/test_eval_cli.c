/* test_eval_cli.c - `chexnet train | eval | predict` with the evaluation
 * features on a small synthetic checkpoint: train stores thresholds chosen
 * on val at the best epoch; eval prints intervals, AUPRC, ECE and the
 * operating points, and the same as JSON; --choose-thresholds only on
 * val (stored and read back with the chosen rule); a thresholds file that
 * does not match the weights or the model is refused naming it; predict
 * marks each finding positive/negative by the stored thresholds; one view
 * of an image everywhere (the pack and the folder evaluate and predict
 * alike, at the training size and from a larger pack); --plots
 * writes PNGs that decode, have the expected size, are not blank and
 * change with the data; an unwritable plots directory is refused.
 * What it does not test: the statistics' numbers (test_eval_stats.c).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "data/sets/labels.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"
#include "data/load/loader.h"
#include "cmd/plot_png.h"
#include "eval/thresholds_file.h"
#include "train/safetensors.h"

#define OPTS "--size 32 --seed 7 --batch 8 --threads 1"
#define DATA "--synthetic --synthetic-images 48"

static void chexnet(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

/* ck/best with thresholds.json; 0 or -1 (recorded). */
static int train_small(void)
{
	struct test_proc p;
	chexnet("train " DATA " --epochs 2 --quiet --out ck " OPTS, &p, 200);
	int ok = p.exit_code == 0;
	CHECK_MSG(ok, "train: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	return ok ? 0 : -1;
}

static char *tmp_path(const char *name)
{
	return test_path(test_tmpdir(), name);
}

static void test_train_stores_thresholds_from_val(void)
{
	struct thresholds t;
	struct trainer_error err = { "" };

	if (train_small())
		return;
	char *ck = tmp_path("ck/best");
	CHECK_MSG(thresholds_load(ck, "densenet121", &t, &err) == 0, "%s", err.msg);
	CHECK_STR(t.split, "val");
	CHECK_INT(t.rule.rule, THRESHOLD_YOUDEN);
	CHECK(thresholds_load(ck, "resnet50", &t, &err) == -1);
	CHECK_CONTAINS(err.msg, "made for model 'densenet121'");
	char *last = tmp_path("ck/last");
	CHECK_INT(thresholds_load(last, "densenet121", &t, &err), 1);   /* none there */
	free(ck);
	free(last);
}

static void check_json_report(const char *out, const char *rule)
{
	cJSON *root = cJSON_Parse(out);
	CHECK_MSG(root != NULL, "not JSON: %.300s", out);
	if (!root)
		return;
	const cJSON *classes = cJSON_GetObjectItem(root, "classes");
	CHECK_INT(cJSON_GetArraySize(classes), 14);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(root, "threshold_rule")), rule);
	CHECK_INT((int)cJSON_GetNumberValue(cJSON_GetObjectItem(root, "bootstrap_resamples")), 200);
	int with_ci = 0;
	for (int c = 0; c < cJSON_GetArraySize(classes); c++) {
		const cJSON *k = cJSON_GetArrayItem(classes, c), *ci = cJSON_GetObjectItem(k, "auroc_ci95");
		const cJSON *a = cJSON_GetObjectItem(k, "auroc");
		CHECK(cJSON_GetObjectItem(k, "sensitivity") && cJSON_GetObjectItem(k, "f1") &&
		      cJSON_GetObjectItem(k, "auprc") && cJSON_GetObjectItem(k, "ece"));
		if (cJSON_IsNumber(a) && cJSON_IsNumber(cJSON_GetArrayItem(ci, 0))) {
			with_ci++;
			CHECK(cJSON_GetArrayItem(ci, 0)->valuedouble <= a->valuedouble &&
			      a->valuedouble <= cJSON_GetArrayItem(ci, 1)->valuedouble);
		}
	}
	CHECK_MSG(with_ci >= 10, "%d classes with an interval", with_ci);
	CHECK(cJSON_IsNumber(cJSON_GetObjectItem(root, "ece")));
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(root, "reliability")), 10);
	cJSON_Delete(root);
}

static void test_eval_reports_intervals_and_operating_points(void)
{
	struct test_proc p;

	if (train_small())
		return;
	chexnet("eval --checkpoint ck/best " DATA " --bootstrap 200 " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	CHECK_CONTAINS(p.out, "95% CI");
	CHECK_CONTAINS(p.out, "threshold");
	CHECK_CONTAINS(p.out, "Pleural_Thickening");
	CHECK_CONTAINS(p.out, "percentile bootstrap over patients, 200 resamples");
	CHECK_CONTAINS(p.out, "thresholds: youden on val");
	test_proc_free(&p);
	chexnet("eval --json --checkpoint ck/best " DATA " --bootstrap 200 " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	check_json_report(p.out, "youden");
	test_proc_free(&p);
}

static void test_choose_thresholds_only_on_val(void)
{
	struct test_proc p;
	struct thresholds t;
	struct trainer_error err = { "" };

	if (train_small())
		return;
	chexnet("eval --checkpoint ck/last " DATA " --choose-thresholds " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: eval: --choose-thresholds: '--split test': ");
	CHECK_CONTAINS(p.err, "leaks");
	test_proc_free(&p);
	chexnet("eval --checkpoint ck/last " DATA " --split val --choose-thresholds "
		"--sensitivity 0.9 --bootstrap 200 --json " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	check_json_report(p.out, "sensitivity");
	test_proc_free(&p);
	char *ck = tmp_path("ck/last");
	CHECK_MSG(thresholds_load(ck, "densenet121", &t, &err) == 0, "%s", err.msg);
	CHECK_INT(t.rule.rule, THRESHOLD_SENSITIVITY);
	CHECK_NEAR(t.rule.target, 0.9, 1e-12, 0);
	free(ck);
	/* the sensitivity rule reaches 0.9 on the split it was chosen on */
	chexnet("eval --json --checkpoint ck/last " DATA " --split val --bootstrap 0 " OPTS, &p, 120);
	cJSON *root = cJSON_Parse(p.out);
	const cJSON *classes = cJSON_GetObjectItem(root, "classes");
	for (int c = 0; c < cJSON_GetArraySize(classes); c++) {
		const cJSON *s = cJSON_GetObjectItem(cJSON_GetArrayItem(classes, c), "sensitivity");
		if (cJSON_IsNumber(s))
			CHECK_MSG(s->valuedouble >= 0.9, "class %d: sensitivity %.3f", c, s->valuedouble);
	}
	cJSON_Delete(root);
	test_proc_free(&p);
	chexnet("eval --checkpoint ck/last " DATA " --split val --choose-thresholds "
		"--sensitivity 0.9 --specificity 0.9 " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "give one threshold rule");
	test_proc_free(&p);
	chexnet("eval --checkpoint ck/last " DATA " --split val --choose-thresholds "
		"--sensitivity 1.5 " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--sensitivity");
	test_proc_free(&p);
}

static void test_thresholds_of_other_weights_refused(void)
{
	struct test_proc p;
	char cmd[4096];

	if (train_small())
		return;
	snprintf(cmd, sizeof(cmd), "cp '%s/ck/best/thresholds.json' '%s/ck/last/'", test_tmpdir(),
		 test_tmpdir());
	CHECK(system(cmd) == 0);
	chexnet("eval --checkpoint ck/last " DATA " " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "chexnet: thresholds: 'ck/last/thresholds.json': made for other weights");
	test_proc_free(&p);
	chexnet("predict --checkpoint ck/last " OPTS " x.png", &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "'ck/last/thresholds.json': made for other weights");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "sed -i 's/densenet121/resnet50/' '%s/ck/best/thresholds.json'",
		 test_tmpdir());
	CHECK(system(cmd) == 0);
	chexnet("eval --checkpoint ck/best " DATA " " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "'ck/best/thresholds.json': made for model 'resnet50'");
	test_proc_free(&p);
}

static void test_predict_marks_findings_by_thresholds(void)
{
	struct test_proc p;
	struct thresholds t;
	struct trainer_error err = { "" };
	uint8_t px[32 * 32];
	char e[256];

	if (train_small())
		return;
	for (int i = 0; i < 32 * 32; i++)
		px[i] = (uint8_t)(i * 7);
	char *png = tmp_path("x.png"), *ck = tmp_path("ck/best");
	CHECK(image_write_png_gray(png, px, 32, 32, e, sizeof(e)) == 0);
	CHECK(thresholds_load(ck, "densenet121", &t, &err) == 0);
	chexnet("predict --json --checkpoint ck/best " OPTS " x.png", &p, 60);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	cJSON *root = cJSON_Parse(p.out);
	const cJSON *f = cJSON_GetObjectItem(root, "findings");
	CHECK_INT(cJSON_GetArraySize(f), 14);
	for (int c = 0; c < cJSON_GetArraySize(f); c++) {
		const cJSON *k = cJSON_GetArrayItem(f, c);
		double prob = cJSON_GetNumberValue(cJSON_GetObjectItem(k, "probability"));
		const cJSON *pos = cJSON_GetObjectItem(k, "positive");
		if (isnan(t.value[c]))
			continue;
		CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(k, "threshold")), t.value[c], 1e-9, 0);
		CHECK(cJSON_IsBool(pos) && cJSON_IsTrue(pos) == (prob >= t.value[c]));
	}
	cJSON_Delete(root);
	test_proc_free(&p);
	chexnet("predict --checkpoint ck/best " OPTS " x.png", &p, 60);
	CHECK_CONTAINS(p.out, "\nx.png ");
	CHECK_CONTAINS(p.out, "(threshold ");
	CHECK(strstr(p.out, "positive (") || strstr(p.out, "negative ("));
	test_proc_free(&p);
	free(png);
	free(ck);
}

/* syn: a generated NIH-layout folder whose first test image is cut to
 * 48 x 30 (not square); pk32 and pk40: packs of it at 32 and 40 px. */
static int make_view_data(void)
{
	struct test_proc p;
	char path[4400], e[256], test_image[160];
	struct image img = { 0 };

	chexnet("synth --out syn --count 40 --size 48 --seed 3", &p, 120);
	CHECK_MSG(p.exit_code == 0, "synth: %.600s", p.err);
	test_proc_free(&p);
	snprintf(path, sizeof(path), "%s/syn/test_list.txt", test_tmpdir());
	FILE *f = fopen(path, "r");
	int got = f && fscanf(f, "%159s", test_image) == 1;
	if (f)
		fclose(f);
	CHECK(got);
	snprintf(path, sizeof(path), "%s/syn/images/%s", test_tmpdir(), test_image);
	if (!got || image_decode_file(path, 0, &img, e, sizeof(e)) != 0)
		return -1;
	CHECK(image_write_png_gray(path, img.pixels + 9 * 48, 48, 30, e, sizeof(e)) == 0);
	image_free(&img);
	chexnet("pack --data syn --out pk32 --size 32 --threads 1", &p, 120);
	CHECK_MSG(p.exit_code == 0, "pack: %.600s", p.err);
	CHECK_CONTAINS(p.out, "1 images decoded were not square: padded");
	test_proc_free(&p);
	chexnet("pack --data syn --out pk40 --size 40 --threads 1", &p, 120);
	CHECK_MSG(p.exit_code == 0, "pack: %.600s", p.err);
	test_proc_free(&p);
	return 0;
}

/* Each stored test record of pack as DIR/NNNN.png; how many (-1: error). */
static int write_records(const char *pack, int side, const char *dir)
{
	struct data_loader_config c;
	char err[1024], path[4400];
	struct batch *b;
	int n = 0;

	data_loader_config_init(&c);
	c.dir = pack, c.split = DATA_TEST, c.batch = 4, c.size = side, c.crop = DATA_CROP_RESIZE;
	c.threads = 1;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	CHECK_MSG(dl != NULL, "%s", err);
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	CHECK(system(path) == 0);
	while (dl && data_loader_next(dl, &b) == 1) {
		for (int k = 0; k < b->count; k++, n++) {
			snprintf(path, sizeof(path), "%s/%04d.png", dir, n);
			CHECK(image_write_png_gray(path, b->pixels + (size_t)k * side * side, side, side,
						   err, sizeof(err)) == 0);
		}
		data_loader_release(dl, b);
	}
	data_loader_close(dl);
	return dl ? n : -1;
}

/* The 14 probabilities of every line of predict's text output. */
static int predict_numbers(const char *args, double *probs, int max)
{
	struct test_proc p;
	int n = 0;

	chexnet(args, &p, 120);
	CHECK_MSG(p.exit_code == 0, "predict: %.600s", p.err);
	for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n")) {
		char *at = strchr(line, ' ');
		for (int c = 0; at && c < CHEXNET_CLASSES && n < max; c++) {
			char *end;
			double v = strtod(at, &end);
			if (end == at)
				break;
			probs[n++] = v;
			at = end;
		}
	}
	test_proc_free(&p);
	return n;
}

/* run/last's weights and metadata in DIR/model.safetensors: without
 * setting.aspect and setting.normalise (a checkpoint written before the
 * view was recorded had size and stored_size) or, given pixels, with
 * that as setting.pixels. */
static int strip_view(const char *run, const char *dir, const char *pixels)
{
	char from[4400], to[4400];
	struct trainer_error err = { "" };
	struct st_file f;
	struct st_meta keep[64];
	int n = 0;

	snprintf(from, sizeof(from), "%s/%s/last/model.safetensors", test_tmpdir(), run);
	snprintf(to, sizeof(to), "mkdir -p '%s/%s'", test_tmpdir(), dir);
	CHECK(system(to) == 0);
	snprintf(to, sizeof(to), "%s/%s/model.safetensors", test_tmpdir(), dir);
	CHECK_MSG(st_read(from, &f, &err) == 0, "%s", err.msg);
	if (err.msg[0])
		return -1;
	for (int i = 0; i < f.meta_count && n < 64; i++) {
		if (pixels && !strcmp(f.meta[i].key, "setting.pixels"))
			keep[n++] = (struct st_meta){ f.meta[i].key, pixels };
		else if (pixels || (strcmp(f.meta[i].key, "setting.aspect") &&
				    strcmp(f.meta[i].key, "setting.normalise")))
			keep[n++] = f.meta[i];
	}
	int rc = st_write(to, f.tensors, f.count, keep, n, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	st_free(&f);
	return rc;
}

/* One view everywhere: a checkpoint trained on a pack at the training
 * size (32) and one trained on a larger pack (40, random crops of 32)
 * evaluate the test split identically (every number of eval --json) from
 * the pack and from the image folder, and predict gives the same
 * per-image probabilities for a folder image as for the pack's stored
 * record of it (within fp32 round-off); the non-square image is padded
 * alike on both paths. Before views were recorded, the folder was resized
 * to 8/7 of 32 and cropped: other numbers. */
static void test_pack_and_folder_give_one_view(void)
{
	char args[8192];
	static const int sides[2] = { 32, 40 };

	if (make_view_data())
		return;
	for (int k = 0; k < 2; k++) {
		struct test_proc a, b;
		char pk[16], run[16], *pack, *recs;
		snprintf(pk, sizeof(pk), "pk%d", sides[k]);
		snprintf(run, sizeof(run), "r%d", sides[k]);
		snprintf(args, sizeof(args), "train --data %s --steps 2 --quiet --out %s " OPTS, pk, run);
		chexnet(args, &a, 300);
		CHECK_MSG(a.exit_code == 0, "train: %.600s", a.err);
		test_proc_free(&a);
		snprintf(args, sizeof(args), "eval --json --bootstrap 0 --checkpoint %s/last --data %s "
			 "--threads 1", run, pk);
		chexnet(args, &a, 120);
		snprintf(args, sizeof(args), "eval --json --bootstrap 0 --checkpoint %s/last --data syn "
			 "--threads 1", run);
		chexnet(args, &b, 120);
		CHECK_MSG(a.exit_code == 0 && b.exit_code == 0, "%.600s %.600s", a.err, b.err);
		CHECK_MSG(strcmp(a.out, b.out) == 0, "%s: eval of the pack and of the folder differ:\n"
			  "%.400s\n%.400s", pk, a.out, b.out);
		test_proc_free(&a);
		test_proc_free(&b);
		/* the other pack cannot give this view exactly: said */
		snprintf(args, sizeof(args), "eval --bootstrap 0 --checkpoint %s/last --data pk%d "
			 "--threads 1", run, sides[1 - k]);
		chexnet(args, &a, 120);
		CHECK_MSG(a.exit_code == 0, "%.600s", a.err);
		snprintf(pk, sizeof(pk), "area-resized to %d", sides[k]);
		CHECK_CONTAINS(a.err, pk);
		test_proc_free(&a);
		snprintf(pk, sizeof(pk), "pk%d", sides[k]);
		pack = tmp_path(pk);
		recs = test_path(test_tmpdir(), run);
		char dir[4400];
		snprintf(dir, sizeof(dir), "%s-records", recs);
		int n = write_records(pack, sides[k], dir);
		static double from_files[64 * CHEXNET_CLASSES], from_records[64 * CHEXNET_CLASSES];
		char list[4400], name[160];
		snprintf(list, sizeof(list), "%s/syn/test_list.txt", test_tmpdir());
		FILE *f = fopen(list, "r");
		int len = snprintf(args, sizeof(args), "predict --checkpoint %s/last --threads 1", run);
		for (int i = 0; f && i < n && i < 64 && fscanf(f, "%159s", name) == 1; i++)
			len += snprintf(args + len, sizeof(args) - len, " syn/images/%s", name);
		if (f)
			fclose(f);
		int got = predict_numbers(args, from_files, 64 * CHEXNET_CLASSES);
		len = snprintf(args, sizeof(args), "predict --checkpoint %s/last --threads 1", run);
		for (int i = 0; i < n && i < 64; i++)
			len += snprintf(args + len, sizeof(args) - len, " %s-records/%04d.png", run, i);
		int want = predict_numbers(args, from_records, 64 * CHEXNET_CLASSES);
		CHECK_MSG(n > 1 && got == n * CHEXNET_CLASSES && want == got, "%s: %d images, %d and %d "
			  "probabilities", pk, n, got, want);
		for (int i = 0; i < got && i < want; i++)
			CHECK_MSG(fabs(from_files[i] - from_records[i]) <= 1e-5, "%s: image %d class %d: "
				  "folder %.7f, pack record %.7f", pk, i / CHEXNET_CLASSES,
				  i % CHEXNET_CLASSES, from_files[i], from_records[i]);
		free(pack);
		free(recs);
	}
	/* a checkpoint recording no view: the older rule (the folder at 8/7,
	 * centre crop), said in one line: other numbers than the pack's */
	struct test_proc a, b;
	if (strip_view("r32", "legacy", NULL) || strip_view("r32", "oldpixels", "png16=high-byte"))
		return;
	chexnet("eval --json --bootstrap 0 --checkpoint legacy --data syn --threads 1", &a, 120);
	chexnet("eval --json --bootstrap 0 --checkpoint legacy --data pk32 --threads 1", &b, 120);
	CHECK_MSG(a.exit_code == 0 && b.exit_code == 0, "%.600s %.600s", a.err, b.err);
	CHECK_CONTAINS(a.err, "records no image view (written before views were): images are "
		       "area-resized to 8/7 of 32 px");
	CHECK_MSG(strcmp(a.out, b.out) != 0, "the older rule gave the pack's numbers");
	test_proc_free(&a);
	test_proc_free(&b);
	/* another 8-bit rule than this build's: said for files, not a pack */
	chexnet("eval --bootstrap 0 --checkpoint oldpixels --data syn --threads 1", &a, 120);
	chexnet("eval --bootstrap 0 --checkpoint oldpixels --data pk32 --threads 1", &b, 120);
	CHECK_CONTAINS(a.err, "saw images made 8-bit by 'png16=high-byte'; this build decodes");
	CHECK(!strstr(b.err, "made 8-bit by"));
	test_proc_free(&a);
	test_proc_free(&b);
}

/* A PNG of the expected size that is not blank; *hash: a checksum. */
static void check_png(const char *dir, const char *name, int w, int h, unsigned long *hash)
{
	char path[4096], e[256];
	struct image img = { 0 };

	snprintf(path, sizeof(path), "%s/%s/%s", test_tmpdir(), dir, name);
	CHECK_MSG(image_decode_file(path, 0, &img, e, sizeof(e)) == 0, "%s", e);
	CHECK_INT(img.width, w);
	CHECK_INT(img.height, h);
	double sum = 0, sq = 0;
	size_t n = (size_t)img.width * img.height;
	*hash = 5381;
	for (size_t i = 0; i < n && img.pixels; i++) {
		sum += img.pixels[i];
		sq += (double)img.pixels[i] * img.pixels[i];
		*hash = *hash * 33 + img.pixels[i];
	}
	double var = n ? sq / n - (sum / n) * (sum / n) : 0;
	CHECK_MSG(var > 100, "%s: pixel variance %.1f: blank?", name, var);
	image_free(&img);
}

static void test_plots_decode_and_follow_the_data(void)
{
	struct test_proc p;
	unsigned long a[3], b[3];

	if (!plot_png_available())
		SKIP("built without cairo");
	if (train_small())
		return;
	chexnet("eval --checkpoint ck/best " DATA " --bootstrap 100 --plots plots " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	CHECK_CONTAINS(p.err, "plots written to 'plots'");
	test_proc_free(&p);
	check_png("plots", "roc.png", PLOT_ROC_SIDE, PLOT_ROC_SIDE, &a[0]);
	check_png("plots", "reliability.png", PLOT_RELIABILITY_SIDE, PLOT_RELIABILITY_SIDE, &a[1]);
	check_png("plots", "auroc.png", PLOT_AUROC_W, PLOT_AUROC_H, &a[2]);
	chexnet("eval --checkpoint ck/best " DATA " --bootstrap 100 --plots plots2 " OPTS
		" --seed 9", &p, 120);   /* other synthetic images */
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	test_proc_free(&p);
	check_png("plots2", "roc.png", PLOT_ROC_SIDE, PLOT_ROC_SIDE, &b[0]);
	check_png("plots2", "reliability.png", PLOT_RELIABILITY_SIDE, PLOT_RELIABILITY_SIDE, &b[1]);
	check_png("plots2", "auroc.png", PLOT_AUROC_W, PLOT_AUROC_H, &b[2]);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(a[i] != b[i], "plot %d did not change with the data", i);
}

static void test_unwritable_plots_dir_refused(void)
{
	struct test_proc p;

	chexnet("eval --checkpoint ck/best " DATA " --plots /dev/null/plots " OPTS, &p, 60);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: --plots: '/dev/null/plots': ");
	CHECK(strchr(p.err, '\n') == p.err + strlen(p.err) - 1);   /* one line */
	test_proc_free(&p);
}

const struct test_case eval_cli_tests[] = {
	{ "train_stores_thresholds_from_val", test_train_stores_thresholds_from_val },
	{ "eval_reports_intervals_and_operating_points", test_eval_reports_intervals_and_operating_points },
	{ "choose_thresholds_only_on_val", test_choose_thresholds_only_on_val },
	{ "thresholds_of_other_weights_refused", test_thresholds_of_other_weights_refused },
	{ "predict_marks_findings_by_thresholds", test_predict_marks_findings_by_thresholds },
	{ "pack_and_folder_give_one_view", test_pack_and_folder_give_one_view },
	{ "plots_decode_and_follow_the_data", test_plots_decode_and_follow_the_data },
	{ "unwritable_plots_dir_refused", test_unwritable_plots_dir_refused },
	{ 0 }
};
