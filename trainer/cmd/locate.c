/* cmd/locate.c - `chexnet locate --checkpoint DIR --size S [--seed S]
 * [--finding Effusion] [--images 100] [--min-ratio 2]`: CAM localisation
 * on generated images whose finding is drawn at a known place. Images
 * numbered from LOCATE_FIRST_IMAGE (never in a `chexnet synth` set of
 * fewer images, so never trained on) are drawn by the generator of
 * `chexnet synth --seed S` with their own labels plus the finding, at
 * 2S pixels, then prepared as training saw images: area-resized to the
 * checkpoint's stored side (older checkpoints: image_stored_side(S), the
 * pack of `make demo`) and centre-cropped to S (the loader).
 * The finding's mask goes through the same resize and crop geometry.
 * Prints the share of images whose CAM maximum is a region cell
 * (eval/cam_score.h), the chance of a random cell, their ratio, and
 * fails (exit 1) below --min-ratio times chance.
 * What it does not do: train, or read image files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/checkpoint_defaults.h"
#include "cmd/run.h"
#include "loop/session.h"
#include "data/image/image_resize.h"
#include "data/sets/labels.h"
#include "data/synth/synth.h"
#include "eval/cam.h"
#include "eval/cam_score.h"
#include "train/checkpoint.h"

#define LOCATE_FIRST_IMAGE 100000000u
#define LOCATE_FLOOR 0.05           /* chexnet synth's default --floor */
#define LOCATE_MAX_BATCH 256
#define LOCATE_MAX_CELLS 4096       /* feature map cells (64x64: 2048 px images) */

struct tally {
	long images, hits;
	double chance;                  /* summed over images */
};

/* Image k (side x side) and its finding mask, as the demo evaluates them. */
static int prepare(const struct settings *o, int c, long k, int side, uint8_t *pixels,
		   uint8_t *mask)
{
	size_t i = LOCATE_FIRST_IMAGE + (size_t)k;
	uint16_t labels = data_synth_labels(o->train.session.seed, i, LOCATE_FLOOR) | (uint16_t)(1u << c);
	/* the checkpoint's stored side (cmd/checkpoint_defaults.h), else 8/7 */
	int stored = o->train.data.stored_size >= side ? (int)o->train.data.stored_size : image_stored_side(side);
	int drawn = 2 * side > stored ? 2 * side : stored;
	uint8_t *big = malloc((size_t)drawn * drawn), *mid = malloc((size_t)stored * stored);
	if (!big || !mid) {
		free(big);
		free(mid);
		return -1;
	}
	data_synth_image(o->train.session.seed, i, labels, drawn, big);
	image_resize_area(big, drawn, drawn, mid, stored, stored);
	image_crop_centre(mid, stored, side, 0, pixels);
	data_synth_finding_mask(o->train.session.seed, i, labels, c, stored, mid);
	image_crop_centre(mid, stored, side, 0, mask);
	free(big);
	free(mid);
	return 0;
}

/* One batch of n images: forward, feature maps, a CAM and its score each. */
static int score_batch(struct session *s, struct batch *b, const uint8_t *masks, int n, int c,
		       float *maps, struct tally *t)
{
	struct trainer_error err = { "" };
	struct model_features f;
	float logits[CHEXNET_CLASSES * LOCATE_MAX_BATCH], cam[LOCATE_MAX_CELLS];
	struct backend_input in = { .images = b, .count = n };

	b->count = n;
	if (model_features_find(&s->model.desc, &f, &err) || f.height * f.width > LOCATE_MAX_CELLS ||
	    s->ops->forward(s->backend, &in, 0, logits, &err) ||
	    s->ops->features(s->backend, maps, &err))
		return fprintf(stderr, "chexnet: locate: %s\n", err.msg[0] ? err.msg : "map too large"), -1;
	const float *w = s->model.params + s->model.desc.layers[f.classifier].weight_offset +
		(size_t)c * f.channels;
	size_t per = (size_t)f.channels * f.height * f.width, side = (size_t)b->size;
	for (int j = 0; j < n; j++) {
		double chance;
		cam_compute(w, maps + j * per, f.channels, f.height, f.width, cam);
		int hit = cam_score(cam, f.height, f.width, masks + j * side * side, b->size, &chance);
		if (hit < 0)
			continue;   /* the finding left no visible trace here */
		t->images++;
		t->hits += hit;
		t->chance += chance;
	}
	return 0;
}

static int locate_all(struct session *s, const struct settings *o, int c, struct tally *t)
{
	int side = (int)o->train.session.size, bs = (int)o->train.session.batch;
	struct model_features f;
	struct trainer_error err = { "" };
	if (model_features_find(&s->model.desc, &f, &err))
		return fprintf(stderr, "chexnet: locate: %s\n", err.msg), -1;
	struct batch b = { .capacity = bs, .size = side };
	b.pixels = malloc((size_t)bs * side * side);
	b.labels = calloc((size_t)bs * CHEXNET_CLASSES, sizeof(float));
	uint8_t *masks = malloc((size_t)bs * side * side);
	float *maps = malloc((size_t)bs * f.channels * f.height * f.width * sizeof(float));
	int rc = b.pixels && b.labels && masks && maps ? 0 : -1;
	for (long k = 0; rc == 0 && k < o->locate_images; k += bs) {
		int n = o->locate_images - k < bs ? (int)(o->locate_images - k) : bs;
		for (int j = 0; j < n && rc == 0; j++)
			rc = prepare(o, c, k + j, side, b.pixels + (size_t)j * side * side,
				     masks + (size_t)j * side * side);
		if (rc == 0)
			rc = score_batch(s, &b, masks, n, c, maps, t);
	}
	free(b.pixels);
	free(b.labels);
	free(masks);
	free(maps);
	return rc;
}

static int report(const struct settings *o, const struct session *s, int c, const struct tally *t)
{
	struct model_features f;
	struct trainer_error err = { "" };
	model_features_find(&s->model.desc, &f, &err);
	double hit = t->images ? (double)t->hits / t->images : 0;
	double chance = t->images ? t->chance / t->images : 1;
	double ratio = chance > 0 ? hit / chance : 0;
	printf("chexnet: locate: %s: CAM maximum in the drawn region in %ld of %ld generated images "
	       "(%.1f%%); chance %.1f%% (a random cell of the %dx%d map); %.2fx chance, bound %.2fx: %s\n",
	       data_class_names[c], t->hits, t->images, 100 * hit, 100 * chance, f.height, f.width,
	       ratio, o->locate_min_ratio, ratio >= o->locate_min_ratio ? "ok" : "MISSED");
	if (t->images == 0 || ratio < o->locate_min_ratio) {
		fprintf(stderr, "chexnet: locate: %s: %.2fx chance is below the bound %.2fx\n",
			data_class_names[c], ratio, o->locate_min_ratio);
		return 1;
	}
	return 0;
}

int run_locate(const struct settings *given)
{
	struct settings run = *given, *o = &run;
	struct session s;
	struct trainer_error err = { "" };
	struct tally t = { 0 };
	int c = data_class_find(o->locate_finding, strlen(o->locate_finding));

	if (c < 0) {
		fprintf(stderr, "chexnet: --finding: '%s': unknown finding\n", o->locate_finding);
		return 2;
	}
	if (!o->checkpoint || o->train.session.batch > LOCATE_MAX_BATCH) {
		fprintf(stderr, "chexnet: locate: need --checkpoint DIR and --batch at most %d\n",
			LOCATE_MAX_BATCH);
		return 2;
	}
	int usage = checkpoint_defaults(&run);
	if (usage)
		return usage;
	struct session_config config = o->train.session;
	config.params_given = 1;   /* the checkpoint's, loaded strictly */
	if (session_open(&s, &config))
		return 1;
	if (!s.ops->features ||
	    checkpoint_load_model(o->checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err)) {
		fprintf(stderr, "chexnet: locate: %s\n", err.msg[0] ? err.msg : "backend has no feature maps");
		session_close(&s);
		return 1;
	}
	int rc = locate_all(&s, o, c, &t) ? 1 : report(o, &s, c, &t);
	session_close(&s);
	return rc;
}
