/* gpu_loss_scale.c - the dynamic loss-scale state machine (see
 * gpu_loss_scale.h). What it does not do: look at any tensor.
 */
#include <math.h>

#include "backend/gpu/gpu_loss_scale.h"

#define MIN_SCALE 1.0f
#define MAX_SCALE 16777216.0f  /* 2^24 */

void gpu_loss_scale_init(struct gpu_loss_scale *s)
{
	*s = (struct gpu_loss_scale){
		.scale = 65536.0f, .growth_factor = 2.0f, .backoff_factor = 0.5f,
		.growth_interval = 2000, .min_scale = MIN_SCALE, .max_scale = MAX_SCALE,
	};
}

int gpu_loss_scale_init_with(struct gpu_loss_scale *s, float initial, float growth,
			     float backoff, int interval, struct trainer_error *err)
{
	if (!isfinite(initial) || initial < MIN_SCALE || initial > MAX_SCALE)
		return trainer_error_set(err, "loss scale: '%g': must be in [1, 2^24]", initial);
	if (!(growth > 1.0f) || !isfinite(growth))
		return trainer_error_set(err, "loss scale growth: '%g': must be > 1", growth);
	if (!(backoff > 0.0f && backoff < 1.0f))
		return trainer_error_set(err, "loss scale backoff: '%g': must be in (0, 1)", backoff);
	if (interval < 1)
		return trainer_error_set(err, "loss scale interval: '%d': must be at least 1", interval);
	gpu_loss_scale_init(s);
	s->scale = initial;
	s->growth_factor = growth;
	s->backoff_factor = backoff;
	s->growth_interval = interval;
	return 0;
}

int gpu_loss_scale_update(struct gpu_loss_scale *s, int found_inf)
{
	if (found_inf) {
		s->scale *= s->backoff_factor;
		if (s->scale < s->min_scale)
			s->scale = s->min_scale;
		s->clean_steps = 0;
		s->skipped_steps++;
		return 1;
	}
	if (++s->clean_steps >= s->growth_interval) {
		s->scale *= s->growth_factor;
		if (s->scale > s->max_scale)
			s->scale = s->max_scale;
		s->clean_steps = 0;
	}
	return 0;
}
