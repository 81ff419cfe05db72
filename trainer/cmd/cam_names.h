/* cam_names.h - the names of predict --cam's pictures, planned for every
 * IMAGE before any is written, so that no two are one file: an image's
 * pictures are DIR/<base>_<Finding>.png, its base the image's file name
 * without folders and extension, or, when another IMAGE has the same
 * (a/x.png and b/x.png; one image given twice), that name, '-' and the
 * image's position among the IMAGE arguments (x-1, x-2). When two
 * pictures would still share a name (an image whose own name is x-2
 * beside those two), the command is refused in one line naming both
 * images, before any work.
 * What this is not: writing them (cmd/predict_cam.c).
 */
#ifndef HVD_TRAINER_CAM_NAMES_H
#define HVD_TRAINER_CAM_NAMES_H

#include "base/error.h"

/* The bases of inputs[0..count) (a NULL-terminated array the caller
 * frees with cam_names_free), or NULL + err ("--cam: ..."). */
char **cam_names_plan(char *const *inputs, int count, struct trainer_error *err);
void cam_names_free(char **bases);

#endif
