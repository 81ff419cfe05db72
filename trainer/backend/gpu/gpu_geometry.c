/* gpu_geometry.c - validation and launch grid of the on-GPU input step
 * (see gpu_geometry.h). What it does not do: launch anything.
 */
#include <stdint.h>

#include "backend/gpu/gpu_geometry.h"

int gpu_input_geometry_init(struct gpu_input_geometry *g, int count, int src_size,
			    int out_size, const struct gpu_crop *crops,
			    struct trainer_error *err)
{
	*g = (struct gpu_input_geometry){ 0 };
	if (count < 1 || src_size < 1 || out_size < 1 || out_size > src_size)
		return trainer_error_set(err, "gpu: input: %d images of %d px into %d px: invalid",
					 count, src_size, out_size);
	if (!crops && src_size != out_size)
		return trainer_error_set(err, "gpu: input: images of %d px: the model takes %d px "
					 "and no crop windows were given", src_size, out_size);
	for (int i = 0; crops && i < count; i++) {
		const struct gpu_crop *c = &crops[i];
		if (c->x0 < 0 || c->y0 < 0 || c->x0 > src_size - out_size ||
		    c->y0 > src_size - out_size || (c->flip != 0 && c->flip != 1))
			return trainer_error_set(err, "gpu: input: image %d: window (%d, %d) of %d px "
						 "(flip %d): outside the %d px source", i, c->x0,
						 c->y0, out_size, c->flip, src_size);
	}
	int64_t pixels = (int64_t)count * out_size * out_size;
	int64_t blocks = (pixels + GPU_GEOMETRY_THREADS - 1) / GPU_GEOMETRY_THREADS;
	if (blocks > INT32_MAX)
		return trainer_error_set(err, "gpu: input: %d images of %d px: grid too large",
					 count, out_size);
	g->count = count;
	g->src_size = src_size;
	g->out_size = out_size;
	g->src_image_bytes = (size_t)src_size * src_size;
	g->out_image_elems = (size_t)3 * out_size * out_size;
	g->threads = GPU_GEOMETRY_THREADS;
	g->blocks = (int)blocks;
	return 0;
}

void gpu_crop_source(const struct gpu_crop *c, int out_size, int ox, int oy,
		     int *sx, int *sy)
{
	*sx = c->x0 + (c->flip ? out_size - 1 - ox : ox);
	*sy = c->y0 + oy;
}
