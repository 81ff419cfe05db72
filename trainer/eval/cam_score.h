/* eval/cam_score.h - does a class activation map point at the right place:
 * the map's largest cell against the cells that hold a known region (a
 * mask over the image, e.g. where the generator drew the finding). Map
 * cell (i, j) of an (h, w) map covers image rows y with y*h/S == i and
 * columns x with x*w/S == j (eval/cam.h's registration). The region's
 * cells are those holding at least half as many mask pixels as the
 * fullest cell, so a sliver at a cell edge does not count; chance is
 * the share of region cells: how often a cell picked at random hits.
 * What this is not: computing the CAM (cam.h) or drawing masks.
 */
#ifndef HVD_TRAINER_CAM_SCORE_H
#define HVD_TRAINER_CAM_SCORE_H

#include <stdint.h>

/* 1 when cam's (h, w) maximum is a region cell of mask (side x side),
 * 0 when not, -1 when the mask is empty. *chance: region cells / (h*w). */
int cam_score(const float *cam, int h, int w, const uint8_t *mask, int side, double *chance);

#endif
