/* predict_cam.c - predict's class activation maps (predict_cam.h): the
 * findings chosen, the CAM of each from the backend's feature maps and the
 * classifier row, the picture per finding under its planned name.
 * What it does not do: the CAM arithmetic (eval/cam.c), the names
 * (cmd/cam_names.c) or drawing (cmd/cam_png.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cam_names.h"
#include "cmd/cam_png.h"
#include "cmd/out_dir.h"
#include "cmd/predict_cam.h"
#include "eval/cam.h"

static int class_named(const char *name, size_t len)
{
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		if (strlen(data_class_names[c]) == len && strncasecmp(data_class_names[c], name, len) == 0)
			return c;
	return -1;
}

int cam_classes_parse(const char *spec, int chosen[CHEXNET_CLASSES], struct trainer_error *err)
{
	memset(chosen, 0, CHEXNET_CLASSES * sizeof(int));
	if (strcmp(spec, "all") == 0) {
		for (int c = 0; c < CHEXNET_CLASSES; c++)
			chosen[c] = 1;
		return 0;
	}
	for (const char *p = spec;; p++) {
		size_t len = strcspn(p, ",");
		int c = class_named(p, len);
		if (c < 0 || chosen[c])
			return trainer_error_set(err, "--cam-classes: '%.*s': %s finding (all, or names "
						 "like Effusion,Cardiomegaly)", (int)len, p,
						 c < 0 ? "unknown" : "repeated");
		chosen[c] = 1;
		p += len;
		if (!*p)
			return 0;
	}
}

int predict_cam_check(const struct settings *o)
{
	struct trainer_error err = { "" };
	int chosen[CHEXNET_CLASSES];

	if (!o->cam) {
		if (!o->cam_classes)
			return 0;
		fprintf(stderr, "chexnet: --cam-classes: '%s': only with --cam DIR\n", o->cam_classes);
		return 2;
	}
	if (!cam_png_available()) {
		fprintf(stderr, "chexnet: --cam: '%s': this chexnet was built without cairo "
			"(libcairo2-dev): run make deps and make\n", o->cam);
		return 2;
	}
	char **bases = NULL;
	if ((o->cam_classes && cam_classes_parse(o->cam_classes, chosen, &err)) ||
	    !(bases = cam_names_plan(o->inputs, o->input_count, &err))) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 2;
	}
	cam_names_free(bases);
	return out_dir_writable("--cam", o->cam) ? 2 : 0;
}

int predict_cam_open(struct predict_cam *pc, const struct settings *o,
		     const struct session *s, const struct thresholds *t, struct trainer_error *err)
{
	memset(pc, 0, sizeof(*pc));
	pc->dir = o->cam;
	pc->t = t;
	pc->listed = o->cam_classes != NULL;
	if (pc->listed && cam_classes_parse(o->cam_classes, pc->chosen, err))
		return -1;
	if (!pc->listed && !t)
		return trainer_error_set(err, "--cam: '%s': the checkpoint has no stored thresholds "
					 "to pick findings by: name them with --cam-classes", o->cam);
	if (!s->ops->features)
		return trainer_error_set(err, "--cam: backend '%s': feature maps not supported: use "
					 "--backend ref or cpu", s->ops->name);
	if (model_features_find(&s->model.desc, &pc->f, err) ||
	    !(pc->bases = cam_names_plan(o->inputs, o->input_count, err)))
		return -1;
	pc->maps = malloc((size_t)pc->f.channels * pc->f.height * pc->f.width * sizeof(float));
	pc->cam = malloc((size_t)pc->f.height * pc->f.width * sizeof(float));
	if (!pc->maps || !pc->cam)
		return trainer_error_set(err, "--cam: out of memory");
	return 0;
}

static int wanted(const struct predict_cam *pc, int c, const float *probs)
{
	if (pc->listed)
		return pc->chosen[c];
	return !isnan(pc->t->value[c]) && probs[c] >= pc->t->value[c];
}

static int write_one(struct predict_cam *pc, const struct session *s, const uint8_t *image,
		     int side, const char *stem, int c, float p, char *out, size_t out_len,
		     struct trainer_error *err)
{
	const struct model_layer *fc = &s->model.desc.layers[pc->f.classifier];
	char title[160], subtitle[512];

	cam_compute(s->model.params + fc->weight_offset + (size_t)c * pc->f.channels, pc->maps,
		    pc->f.channels, pc->f.height, pc->f.width, pc->cam);
	snprintf(out, out_len, "%s/%s_%s.png", pc->dir, stem, data_class_names[c]);
	if (pc->t && !isnan(pc->t->value[c]))
		snprintf(title, sizeof(title), "%s: p = %.3f (threshold %.3f)", data_class_names[c], p,
			 pc->t->value[c]);
	else
		snprintf(title, sizeof(title), "%s: p = %.3f", data_class_names[c], p);
	snprintf(subtitle, sizeof(subtitle), "%s: CAM %dx%d, %s", stem, pc->f.height, pc->f.width,
		 s->model.desc.name);
	return cam_png_write(out, image, side, pc->cam, pc->f.height, pc->f.width, title, subtitle,
			     err);
}

int predict_cam_image(struct predict_cam *pc, struct session *s, const uint8_t *image, int side,
		      int input, const char *path, const float *probs, struct trainer_error *err)
{
	char out[4400];
	int written = 0;

	if (s->ops->features(s->backend, pc->maps, err))
		return -1;
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		if (!wanted(pc, c, probs))
			continue;
		if (write_one(pc, s, image, side, pc->bases[input], c, probs[c], out, sizeof(out), err))
			return -1;
		fprintf(stderr, "%s '%s' (%s %.3f)", written++ ? "," : "chexnet: predict: CAM",
			out, data_class_names[c], probs[c]);
	}
	if (written)
		fprintf(stderr, "\n");
	else
		fprintf(stderr, "chexnet: predict: '%s': no finding reaches its threshold: no CAM\n",
			path);
	return 0;
}

void predict_cam_close(struct predict_cam *pc)
{
	free(pc->maps);
	free(pc->cam);
	cam_names_free(pc->bases);
	pc->maps = pc->cam = NULL;
	pc->bases = NULL;
}
