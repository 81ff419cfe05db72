/* predict_cam.h - `chexnet predict --cam DIR [--cam-classes all|A,B]`:
 * which findings get a class activation map (--cam-classes names them,
 * `all` is every one; by default those whose probability reaches the
 * checkpoint's stored threshold), and for one image that has been through
 * the model, their CAMs from the backend's last feature maps and the
 * classifier's weights, written as DIR/<image name>_<Finding>.png
 * (cmd/cam_png.h; two IMAGEs with one file name get distinct names,
 * cmd/cam_names.h), one stderr line per image saying where.
 * What this is not: the probabilities' output (cmd/predict_output.h).
 */
#ifndef HVD_TRAINER_PREDICT_CAM_H
#define HVD_TRAINER_PREDICT_CAM_H

#include "base/classes.h"
#include "train/settings.h"
#include "loop/session.h"
#include "eval/thresholds_file.h"

struct predict_cam {
	const char *dir;
	int listed;                      /* --cam-classes given */
	int chosen[CHEXNET_CLASSES];     /* listed: the findings named */
	const struct thresholds *t;      /* not listed: the stored thresholds */
	struct model_features f;
	float *maps;                     /* (C, h, w) of one image */
	float *cam;                      /* (h, w) */
	char **bases;                    /* per IMAGE: its pictures' base name */
};

/* "all" or comma-separated finding names (data_class_names) into chosen;
 * -1 + err naming the unknown or repeated one. */
int cam_classes_parse(const char *spec, int chosen[CHEXNET_CLASSES], struct trainer_error *err);

/* Before the model is built: cairo, the classes, the pictures' names
 * distinct (cmd/cam_names.h), DIR writable. 0, or 2
 * (printed: the exit status of bad input). */
int predict_cam_check(const struct settings *o);

/* After the checkpoint is loaded: the model's feature maps, the backend's
 * features op, thresholds when no classes are listed (t may be NULL).
 * 0 or -1 + err. */
int predict_cam_open(struct predict_cam *pc, const struct settings *o,
		     const struct session *s, const struct thresholds *t, struct trainer_error *err);

/* After the forward of image (side x side), IMAGE number input (0-based)
 * at path, with these probabilities: the CAM pictures. 0 or -1 + err. */
int predict_cam_image(struct predict_cam *pc, struct session *s, const uint8_t *image, int side,
		      int input, const char *path, const float *probs, struct trainer_error *err);

void predict_cam_close(struct predict_cam *pc);

#endif
