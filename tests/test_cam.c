/* test_cam.c - class activation maps: the CAM of a tiny model equals the
 * formula worked out by hand (and the backends' feature maps are the
 * tensor the pooling reads); on DenseNet-121 and ResNet-50 the ref and cpu
 * backends agree on the feature maps and CAMs of one saved checkpoint,
 * and mean(CAM) + bias is the logit; the upsampling and the picture are
 * registered to the image (a CAM concentrated in one cell lights the
 * matching pixels); the localisation score on a hand-made mask and the
 * generator's effusion region at a lung base; predict
 * --cam writes the pictures, two images of one file name (a/x.png,
 * b/x.png) each under its own name beside a foreign file left as it was,
 * and bad input (names that would still collide, (an unknown --cam-classes
 * name, a CAM directory that cannot be written, an unknown locate
 * --finding) is a one-line error naming it.
 * What it does not test: localisation of a trained model (make demo,
 * chexnet locate).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/backend.h"
#include "cmd/cam_names.h"
#include "cmd/cam_png.h"
#include "data/codec/image_decode.h"
#include "data/codec/image_encode.h"
#include "data/synth/synth.h"
#include "eval/cam.h"
#include "eval/cam_score.h"
#include "train/checkpoint.h"

/* input (2, 2, 2) -> relu -> features (2, 2, 2) -> global pool -> linear (2 classes). */
static int tiny_model(struct model *m)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct model_layer relu = { .kind = LAYER_RELU, .name = "relu",
				    .in = { 0, 0, 2 }, .out = { 1, 0, 2 } };
	struct model_layer gap = { .kind = LAYER_GLOBAL_AVGPOOL, .name = "pool",
				   .in = { 1, 0, 2 }, .out = { 2, 0, 2 } };
	struct model_layer fc = { .kind = LAYER_LINEAR, .name = "classifier", .has_bias = 1,
				  .in = { 2, 0, 2 }, .out = { 3, 0, 2 } };

	model_desc_init(&d, "cam-tiny");
	d.classes = 2;
	int rc = model_desc_add_tensor(&d, "input", TENSOR_PLAIN, 2, 2, 2, &err) < 0 ||
		 model_desc_add_tensor(&d, "features", TENSOR_PLAIN, 2, 2, 2, &err) < 0 ||
		 model_desc_add_tensor(&d, "pool", TENSOR_PLAIN, 2, 1, 1, &err) < 0 ||
		 model_desc_add_tensor(&d, "classifier", TENSOR_PLAIN, 2, 1, 1, &err) < 0 ||
		 model_desc_add_layer(&d, &relu, &err) || model_desc_add_layer(&d, &gap, &err) ||
		 model_desc_add_layer(&d, &fc, &err) || model_desc_finish(&d, &err) ||
		 model_create(m, &d, &err);
	CHECK_MSG(!rc, "%s", err.msg);
	if (rc)
		return -1;
	static const float w[4] = { 0.5f, 2.0f, -1.0f, 1.0f }, bias[2] = { 0.25f, -0.5f };
	memcpy(m->params + m->desc.layers[2].weight_offset, w, sizeof(w));
	memcpy(m->params + m->desc.layers[2].bias_offset, bias, sizeof(bias));
	return 0;
}

/* By hand: F = relu(x) = [[1 2 3 4], [0 0 2 0.5]];
 * CAM_0 = 0.5 F0 + 2 F1 = [0.5 1 5.5 3], CAM_1 = -F0 + F1 = [-1 -2 -1 -3.5];
 * logits = mean + bias = 2.5 + 0.25 = 2.75 and -1.875 - 0.5 = -2.375. */
static void check_tiny(const struct backend_ops *ops)
{
	static const float x[8] = { 1, 2, 3, 4, 0, -1, 2, 0.5f };
	static const float f_hand[8] = { 1, 2, 3, 4, 0, 0, 2, 0.5f };
	static const float cam_hand[2][4] = { { 0.5f, 1, 5.5f, 3 }, { -1, -2, -1, -3.5f } };
	struct model m;
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = 1, .threads = 1 };
	struct model_features f;
	float y[2], maps[8], cam[4];

	if (tiny_model(&m))
		return;
	CHECK_MSG(model_features_find(&m.desc, &f, &err) == 0, "%s", err.msg);
	CHECK_INT(f.tensor, 1);
	CHECK_INT(f.channels * 100 + f.height * 10 + f.width, 222);
	struct backend *b = ops->create(&m, &opt, &err);
	CHECK_MSG(b != NULL, "%s: %s", ops->name, err.msg);
	struct backend_input in = { .x = x, .count = 1 };
	if (b && ops->forward(b, &in, 0, y, &err) == 0 && ops->features(b, maps, &err) == 0) {
		for (int i = 0; i < 8; i++)
			CHECK_NEAR(maps[i], f_hand[i], 1e-6, 0);
		CHECK_NEAR(y[0], 2.75, 1e-5, 0);
		CHECK_NEAR(y[1], -2.375, 1e-5, 0);
		for (int c = 0; c < 2; c++) {
			cam_compute(m.params + m.desc.layers[2].weight_offset + c * 2, maps, 2, 2, 2, cam);
			for (int p = 0; p < 4; p++)
				CHECK_NEAR(cam[p], cam_hand[c][p], 1e-6, 0);
		}
		CHECK_INT(cam_argmax(cam_hand[0], 2, 2), 2);   /* row 1, column 0 */
	} else {
		CHECK_MSG(0, "%s: %s", ops->name, err.msg);
	}
	if (b)
		ops->destroy(b);
	model_destroy(&m);
}

static void test_tiny_model_by_hand_ref(void)
{
	check_tiny(&backend_ref_ops);
}

static void test_tiny_model_by_hand_cpu(void)
{
#ifdef HAVE_CPU_BACKEND
	check_tiny(&backend_cpu_ops);
#else
	SKIP("built without the cpu backend (oneDNN)");
#endif
}

static void test_layer_model_refused(void)
{
	struct model_desc d;
	struct model_features f;
	struct trainer_error err = { "" };
	struct model_layer relu = { .kind = LAYER_RELU, .name = "relu",
				    .in = { 0, 0, 2 }, .out = { 1, 0, 2 } };

	model_desc_init(&d, "layer");
	CHECK(model_desc_add_tensor(&d, "input", TENSOR_PLAIN, 2, 2, 2, &err) == 0);
	CHECK(model_desc_add_tensor(&d, "out", TENSOR_PLAIN, 2, 2, 2, &err) == 1);
	CHECK(model_desc_add_layer(&d, &relu, &err) == 0 && model_desc_finish(&d, &err) == 0);
	CHECK(model_features_find(&d, &f, &err) == -1);
	CHECK_CONTAINS(err.msg, "model 'layer': not a classifier network");
	model_desc_free(&d);
}

/* One 64-px generated X-ray, uint8. */
static void xray(uint8_t *px, int side)
{
	data_synth_image(1, 7, 1u << 2, side, px);
}

#ifdef HAVE_CPU_BACKEND /* the ref/cpu comparison's helpers */
/* Feature maps and logits of the checkpoint at dir on one backend. */
static int run_backend(const char *name, const char *dir, const struct backend_ops *ops,
		       float *maps, float *logits, struct model *m)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = 1, .threads = 1 };
	uint8_t px[64 * 64];
	struct batch b = { .count = 1, .capacity = 1, .size = 64, .pixels = px };

	xray(px, 64);
	if (model_by_name(&d, name, 64, 14, &err) || model_create(m, &d, &err) ||
	    checkpoint_load_model(dir, m, CHECKPOINT_STRICT, NULL, &err)) {
		CHECK_MSG(0, "%s: %s", name, err.msg);
		return -1;
	}
	struct backend *be = ops->create(m, &opt, &err);
	struct backend_input in = { .images = &b, .count = 1 };
	int rc = !be || ops->forward(be, &in, 0, logits, &err) || ops->features(be, maps, &err);
	CHECK_MSG(!rc, "%s on %s: %s", name, ops->name, err.msg);
	if (be)
		ops->destroy(be);
	return rc ? -1 : 0;
}

/* mean(CAM_c) + bias_c == logit_c for every class. */
static void check_mean_is_logit(const struct model *m, const struct model_features *f,
				const float *maps, const float *logits, const char *what)
{
	const struct model_layer *fc = &m->desc.layers[f->classifier];
	int hw = f->height * f->width;
	float *cam = malloc(hw * sizeof(float));

	for (int c = 0; cam && c < 14; c++) {
		cam_compute(m->params + fc->weight_offset + (size_t)c * f->channels, maps, f->channels,
			    f->height, f->width, cam);
		double mean = 0;
		for (int p = 0; p < hw; p++)
			mean += cam[p] / hw;
		CHECK_MSG(test_near(mean + m->params[fc->bias_offset + c], logits[c], 1e-4, 1e-4),
			  "%s class %d: mean(CAM) + bias %.6f, logit %.6f", what, c,
			  mean + m->params[fc->bias_offset + c], logits[c]);
	}
	free(cam);
}

#endif

/* A checkpoint with moved BN statistics (not the identity of a fresh model). */
static int save_checkpoint(const char *name, const char *dir, uint64_t seed)
{
	struct model_desc d;
	struct model m;
	struct trainer_error err = { "" };

	if (model_by_name(&d, name, 64, 14, &err) || model_create(&m, &d, &err)) {
		CHECK_MSG(0, "%s", err.msg);
		return -1;
	}
	model_init_params(&m, seed);
	for (int e = 0; e < m.desc.entry_count; e++) {
		const struct state_entry *en = &m.desc.entries[e];
		int var = strstr(en->key, "running_var") != NULL;
		for (size_t i = 0; en->kind == ENTRY_RUNNING && i < en->count; i++)
			m.state[en->offset + i] = var ? 0.8f + 0.1f * (i % 5) : 0.05f * ((int)(i % 5) - 2);
	}
	int rc = checkpoint_save(dir, &m, NULL, NULL, NULL, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	model_destroy(&m);
	return rc;
}

static void check_ref_cpu_agree(const char *name)
{
#ifdef HAVE_CPU_BACKEND
	char *dir = test_path(test_tmpdir(), "ck");
	struct model mr, mc;
	struct model_desc d;
	struct model_features f;
	struct trainer_error err = { "" };
	float lr[14], lc[14];

	if (save_checkpoint(name, dir, 11) || model_by_name(&d, name, 64, 14, &err) ||
	    model_features_find(&d, &f, &err)) {
		free(dir);
		return;
	}
	model_desc_free(&d);
	size_t n = (size_t)f.channels * f.height * f.width;
	float *ref = malloc(n * sizeof(float)), *cpu = malloc(n * sizeof(float));
	if (run_backend(name, dir, &backend_ref_ops, ref, lr, &mr) == 0 &&
	    run_backend(name, dir, &backend_cpu_ops, cpu, lc, &mc) == 0) {
		double worst = 0, scale = 0;
		for (size_t i = 0; i < n; i++) {
			worst = fmax(worst, fabs(ref[i] - cpu[i]));
			scale = fmax(scale, fabs(ref[i]));
		}
		CHECK_MSG(scale > 0 && worst <= 1e-3 * scale, "%s: feature maps differ by %g (largest %g)",
			  name, worst, scale);
		check_mean_is_logit(&mr, &f, ref, lr, "ref");
		check_mean_is_logit(&mc, &f, cpu, lc, "cpu");
		const struct model_layer *fc = &mr.desc.layers[f.classifier];
		float cr[16], cc[16];
		for (int c = 0; c < 14; c++) {
			cam_compute(mr.params + fc->weight_offset + (size_t)c * f.channels, ref, f.channels,
				    f.height, f.width, cr);
			cam_compute(mc.params + fc->weight_offset + (size_t)c * f.channels, cpu, f.channels,
				    f.height, f.width, cc);
			for (int p = 0; p < f.height * f.width; p++)
				CHECK_NEAR(cr[p], cc[p], 1e-3, 1e-3);
		}
		model_destroy(&mr);
		model_destroy(&mc);
	}
	free(ref);
	free(cpu);
	free(dir);
#else
	SKIP("built without the cpu backend (oneDNN)");
#endif
}

static void test_ref_cpu_agree_densenet121(void)
{
	check_ref_cpu_agree("densenet121");
}

static void test_ref_cpu_agree_resnet50(void)
{
	check_ref_cpu_agree("resnet50");
}

/* A one-hot CAM at cell (i, j) of 4x4 over side 64: the upsampled values
 * above half lie in the cell's 16x16 block and cover its centre. */
static void test_upsampling_registered(void)
{
	static const int cells[][2] = { { 0, 0 }, { 1, 2 }, { 3, 1 }, { 3, 3 } };
	float cam[16], up[64 * 64];

	for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
		int ci = cells[k][0], cj = cells[k][1], outside = 0, centre = 0;
		memset(cam, 0, sizeof(cam));
		cam[ci * 4 + cj] = 3;
		cam_upsample(cam, 4, 4, 64, up);
		for (int y = 0; y < 64; y++)
			for (int x = 0; x < 64; x++) {
				int inside = y / 16 == ci && x / 16 == cj;
				int middle = inside && abs(y % 16 - 8) < 4 && abs(x % 16 - 8) < 4;
				outside += !inside && up[y * 64 + x] > 1.5f;
				centre += middle && up[y * 64 + x] > 1.5f;
			}
		CHECK_MSG(outside == 0 && centre == 49, "cell (%d,%d): %d pixels above half outside "
			  "the block, %d of its 49 centre pixels", ci, cj, outside, centre);
	}
}

/* The same through the picture: black X-ray, one hot cell; the pixels
 * brighter than half the brightest lie in the cell's block (k x k per
 * image pixel, below the title band). */
static void test_overlay_registered(void)
{
	static const int cells[][2] = { { 0, 3 }, { 2, 1 } };
	uint8_t black[64 * 64] = { 0 };
	char path[4096], e[256];
	struct trainer_error err = { "" };
	float cam[16];

	if (!cam_png_available())
		SKIP("built without cairo");
	int k = cam_png_scale(64), d = 64 * k, block = 16 * k;
	for (size_t n = 0; n < sizeof(cells) / sizeof(cells[0]); n++) {
		int ci = cells[n][0], cj = cells[n][1];
		struct image img = { 0 };
		memset(cam, 0, sizeof(cam));
		cam[ci * 4 + cj] = 1;
		snprintf(path, sizeof(path), "%s/cam%zu.png", test_tmpdir(), n);
		CHECK_MSG(cam_png_write(path, black, 64, cam, 4, 4, "t", "s", &err) == 0, "%s", err.msg);
		if (image_decode_file(path, 0, &img, e, sizeof(e))) {
			CHECK_MSG(0, "%s", e);
			return;
		}
		CHECK_INT(img.width, d);
		CHECK_INT(img.height, d + CAM_PNG_TITLE_H);
		int most = 0, x0 = d, x1 = -1, y0 = d, y1 = -1;
		for (int y = 0; y < d; y++)
			for (int x = 0; x < d; x++)
				most = img.pixels[(size_t)(y + CAM_PNG_TITLE_H) * d + x] > most ?
				       img.pixels[(size_t)(y + CAM_PNG_TITLE_H) * d + x] : most;
		for (int y = 0; y < d; y++)
			for (int x = 0; x < d; x++)
				if (2 * img.pixels[(size_t)(y + CAM_PNG_TITLE_H) * d + x] > most) {
					x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
					y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
				}
		CHECK_MSG(most > 60, "cell (%d,%d): brightest %d: no heat drawn", ci, cj, most);
		CHECK_MSG(x0 >= cj * block && x1 < (cj + 1) * block && y0 >= ci * block &&
			  y1 < (ci + 1) * block && x1 - x0 > block / 4 && y1 - y0 > block / 4,
			  "cell (%d,%d): bright pixels x %d..%d y %d..%d, block x %d..%d y %d..%d", ci, cj,
			  x0, x1, y0, y1, cj * block, (cj + 1) * block - 1, ci * block, (ci + 1) * block - 1);
		image_free(&img);
	}
}

/* 8x8 image, 2x2 map: the mask fills cell (1,0) and a sliver of (1,1). */
static void test_score_by_hand(void)
{
	uint8_t mask[64] = { 0 };
	float cam[4] = { 0, 0, 5, 1 };
	double chance;

	for (int y = 4; y < 8; y++)
		for (int x = 0; x < 5; x++)
			mask[y * 8 + x] = 1;
	CHECK_INT(cam_score(cam, 2, 2, mask, 8, &chance), 1);
	CHECK_NEAR(chance, 0.25, 1e-12, 0);   /* the sliver's cell does not count */
	cam[3] = 9;
	CHECK_INT(cam_score(cam, 2, 2, mask, 8, &chance), 0);
	memset(mask, 0, sizeof(mask));
	CHECK_INT(cam_score(cam, 2, 2, mask, 8, &chance), -1);
}

/* The generator's effusion region: below the lung middle, on one side,
 * non-empty; a finding the image does not have leaves no region. */
static void test_synth_effusion_mask_at_lung_base(void)
{
	uint8_t mask[64 * 64];

	for (size_t i = 0; i < 20; i++) {
		long n = 0, left = 0, high = 0;
		data_synth_finding_mask(1, i, 1u << 2, 2, 64, mask);
		for (int y = 0; y < 64; y++)
			for (int x = 0; x < 64; x++)
				if (mask[y * 64 + x]) {
					n++;
					left += x < 32;
					high += y < 32;
				}
		CHECK_MSG(n > 20 && high == 0 && (left == 0 || left == n),
			  "image %zu: %ld region pixels, %ld in the upper half, %ld on the left", i, n,
			  high, left);
		data_synth_finding_mask(1, i, 1u << 2, 4, 64, mask);   /* no mass drawn */
		n = 0;
		for (int p = 0; p < 64 * 64; p++)
			n += mask[p];
		CHECK_INT(n, 0);
	}
}

static void chexnet(const char *args, struct test_proc *p)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, 120, p) == 0);
}

static int one_line(const char *s)
{
	return strchr(s, '\n') == s + strlen(s) - 1;
}

static int checkpoint_and_image(void)
{
	char *dir = test_path(test_tmpdir(), "ck"), *png = test_path(test_tmpdir(), "x.png"), e[256];
	uint8_t px[64 * 64];

	xray(px, 64);
	int rc = save_checkpoint("densenet121", dir, 3) ||
		 image_write_png_gray(png, px, 64, 64, e, sizeof(e));
	free(dir);
	free(png);
	return rc ? -1 : 0;
}

static void test_predict_writes_cams(void)
{
	struct test_proc p;
	struct image img = { 0 };
	char path[4096], e[256];

	if (!cam_png_available())
		SKIP("built without cairo");
	if (checkpoint_and_image())
		return;
	chexnet("predict --checkpoint ck --size 64 --threads 1 --backend ref --cam cams "
		"--cam-classes Effusion,cardiomegaly x.png", &p);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	CHECK_CONTAINS(p.err, "chexnet: predict: CAM 'cams/x_Cardiomegaly.png' (Cardiomegaly ");
	CHECK_CONTAINS(p.err, "'cams/x_Effusion.png' (Effusion ");
	test_proc_free(&p);
	snprintf(path, sizeof(path), "%s/cams/x_Effusion.png", test_tmpdir());
	CHECK_MSG(image_decode_file(path, 0, &img, e, sizeof(e)) == 0, "%s", e);
	CHECK_INT(img.width, 64 * cam_png_scale(64));
	image_free(&img);
	chexnet("predict --checkpoint ck --size 64 --threads 1 --cam cams x.png", &p);
	CHECK_INT(p.exit_code, 1);   /* no thresholds.json beside this checkpoint */
	CHECK_CONTAINS(p.err, "chexnet: --cam: 'cams': the checkpoint has no stored thresholds");
	test_proc_free(&p);
}

/* The names planned for predict's pictures: a file's own name while it
 * is the only one; with another of the same name, its position after it;
 * names that would still collide are refused naming both images. */
static void test_cam_names_distinct(void)
{
	char *inputs[] = { "a/x.png", "b/x.png", "c/y.jpeg", "x", "z.dcm" };
	struct trainer_error err = { "" };
	char **b = cam_names_plan(inputs, 5, &err);

	CHECK_MSG(b != NULL, "%s", err.msg);
	if (!b)
		return;
	CHECK_STR(b[0], "x-1");
	CHECK_STR(b[1], "x-2");
	CHECK_STR(b[2], "y");
	CHECK_STR(b[3], "x-4");
	CHECK_STR(b[4], "z");
	CHECK(b[5] == NULL);
	cam_names_free(b);
	char *twice[] = { "x.png", "x.png" };
	CHECK((b = cam_names_plan(twice, 2, &err)) != NULL);
	CHECK_STR(b ? b[1] : "", "x-2");
	cam_names_free(b);
	char *clash[] = { "a/x.png", "b/x.png", "x-2.png" };
	CHECK(cam_names_plan(clash, 3, &err) == NULL);
	CHECK_STR(err.msg, "--cam: 'x-2.png': its picture 'x-2_Atelectasis.png' would have the "
		  "name of one of 'b/x.png''s: rename one of them");
}

/* The names and sizes of every file under the case's folder but ck/ and
 * cams/x-*.png, with their checksums. */
static char *files_but_cams(void)
{
	struct test_proc p;

	chexnet("-h >/dev/null; find . -type f ! -path './ck/*' ! -name 'x-*_*.png' | LC_ALL=C sort | "
		"while IFS= read -r f; do echo \"$f $(cksum < \"$f\")\"; done", &p);
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

/* Two images named x.png in two folders: both pictures are written, each
 * under its own name; a file already in the CAM folder is left as it
 * was; names that would still collide are refused before any work. */
static void test_predict_cams_of_one_name_both_written(void)
{
	struct test_proc p;
	struct image img = { 0 };
	char path[4096], e[256];

	if (!cam_png_available())
		SKIP("built without cairo");
	if (checkpoint_and_image())
		return;
	chexnet("-h >/dev/null; mkdir a b cams && cp x.png a/x.png && cp x.png b/x.png && "
		"echo theirs > cams/notes.txt", &p);
	test_proc_free(&p);
	char *before = files_but_cams();
	chexnet("predict --checkpoint ck --size 64 --threads 1 --backend ref --cam cams "
		"--cam-classes Effusion a/x.png b/x.png", &p);
	CHECK_MSG(p.exit_code == 0, "%.600s", p.err);
	CHECK_CONTAINS(p.err, "chexnet: predict: CAM 'cams/x-1_Effusion.png' (Effusion ");
	CHECK_CONTAINS(p.err, "chexnet: predict: CAM 'cams/x-2_Effusion.png' (Effusion ");
	test_proc_free(&p);
	for (int i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s/cams/x-%d_Effusion.png", test_tmpdir(), i);
		CHECK_MSG(image_decode_file(path, 0, &img, e, sizeof(e)) == 0, "%s", e);
		image_free(&img);
	}
	chexnet("-h >/dev/null; ls cams | tr '\\n' ' '", &p);
	CHECK_STR(p.out, "notes.txt x-1_Effusion.png x-2_Effusion.png ");
	test_proc_free(&p);
	char *after = files_but_cams();
	CHECK_STR(after, before);
	free(after);
	chexnet("-h >/dev/null; cp x.png x-2.png", &p);
	test_proc_free(&p);
	before = (free(before), files_but_cams());
	chexnet("predict --checkpoint ck --size 64 --threads 1 --backend ref --cam cams2 "
		"--cam-classes Effusion a/x.png b/x.png x-2.png", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "chexnet: --cam: 'x-2.png': its picture 'x-2_Atelectasis.png' would have "
		  "the name of one of 'b/x.png''s: rename one of them\n");
	test_proc_free(&p);
	after = files_but_cams();
	CHECK_STR(after, before);
	free(after);
	free(before);
	chexnet("-h >/dev/null; test ! -e cams2", &p);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
}

static void test_unknown_cam_class_refused(void)
{
	struct test_proc p;

	if (checkpoint_and_image())
		return;
	chexnet("predict --checkpoint ck --size 64 --cam cams --cam-classes Effusion,Nodules x.png", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: --cam-classes: 'Nodules': unknown finding");
	CHECK(one_line(p.err));
	test_proc_free(&p);
	chexnet("predict --checkpoint ck --size 64 --cam cams --cam-classes Mass,Mass x.png", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: --cam-classes: 'Mass': repeated finding");
	test_proc_free(&p);
}

static void test_unwritable_cam_dir_refused(void)
{
	struct test_proc p;

	if (checkpoint_and_image())
		return;
	chexnet("predict --checkpoint ck --size 64 --cam /dev/null/cams x.png", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: --cam: '/dev/null/cams': ");
	CHECK(one_line(p.err));
	test_proc_free(&p);
}

static void test_locate_unknown_finding_refused(void)
{
	struct test_proc p;

	chexnet("locate --checkpoint ck --size 64 --finding Efusion", &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: --finding: 'Efusion': unknown finding");
	CHECK(one_line(p.err));
	test_proc_free(&p);
}

const struct test_case cam_tests[] = {
	{ "tiny_model_by_hand_ref", test_tiny_model_by_hand_ref },
	{ "tiny_model_by_hand_cpu", test_tiny_model_by_hand_cpu },
	{ "layer_model_refused", test_layer_model_refused },
	{ "ref_cpu_agree_densenet121", test_ref_cpu_agree_densenet121 },
	{ "ref_cpu_agree_resnet50", test_ref_cpu_agree_resnet50 },
	{ "upsampling_registered", test_upsampling_registered },
	{ "overlay_registered", test_overlay_registered },
	{ "score_by_hand", test_score_by_hand },
	{ "synth_effusion_mask_at_lung_base", test_synth_effusion_mask_at_lung_base },
	{ "predict_writes_cams", test_predict_writes_cams },
	{ "cam_names_distinct", test_cam_names_distinct },
	{ "predict_cams_of_one_name_both_written", test_predict_cams_of_one_name_both_written },
	{ "unknown_cam_class_refused", test_unknown_cam_class_refused },
	{ "unwritable_cam_dir_refused", test_unwritable_cam_dir_refused },
	{ "locate_unknown_finding_refused", test_locate_unknown_finding_refused },
	{ 0 },
};
