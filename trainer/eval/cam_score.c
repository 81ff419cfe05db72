/* eval/cam_score.c - a CAM's maximum against a region mask (cam_score.h).
 * What it does not do: aggregate over images (the caller counts).
 */
#include <stdlib.h>

#include "eval/cam.h"
#include "eval/cam_score.h"

int cam_score(const float *cam, int h, int w, const uint8_t *mask, int side, double *chance)
{
	long *count = calloc((size_t)h * w, sizeof(long)), most = 0;
	int cells = 0;

	*chance = 0;
	if (!count)
		return -1;
	for (int y = 0; y < side; y++)
		for (int x = 0; x < side; x++)
			count[(long)y * h / side * w + (long)x * w / side] += mask[(size_t)y * side + x] != 0;
	for (int p = 0; p < h * w; p++)
		most = count[p] > most ? count[p] : most;
	for (int p = 0; p < h * w; p++)
		cells += most > 0 && 2 * count[p] >= most;
	int best = cam_argmax(cam, h, w), hit = most > 0 && 2 * count[best] >= most;
	free(count);
	if (most == 0)
		return -1;
	*chance = (double)cells / (h * w);
	return hit;
}
