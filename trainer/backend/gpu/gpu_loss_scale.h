/* gpu_loss_scale.h - dynamic loss scaling for fp16 training (M4): the
 * state machine alone, pure C, unit-tested on the CPU
 * (tests/test_gpu_pure.c).
 *
 * The backend multiplies dy by `scale` before backward and the gradients
 * by 1/scale after; if any gradient is inf or NaN the step is skipped and
 * the scale halves (never below min_scale); after growth_interval clean
 * steps in a row it doubles (never above max_scale). The same rules as
 * torch.cuda.amp.GradScaler with its defaults. What this is not: the
 * device-side inf check (gpu_kernels.h) or the optimizer.
 */
#ifndef HVD_TRAINER_GPU_LOSS_SCALE_H
#define HVD_TRAINER_GPU_LOSS_SCALE_H

#include "base/error.h"

struct gpu_loss_scale {
	float scale;          /* current factor on the loss gradient */
	float growth_factor;  /* 2 */
	float backoff_factor; /* 0.5 */
	int growth_interval;  /* 2000 clean steps before growing */
	float min_scale;      /* 1 */
	float max_scale;      /* 2^24: fp32's exact integer range */
	int clean_steps;      /* clean steps since the last change */
	long skipped_steps;   /* total steps skipped for inf/NaN */
};

/* torch's defaults: scale 65536, x2 every 2000 clean steps, x0.5 on overflow. */
void gpu_loss_scale_init(struct gpu_loss_scale *s);
/* Explicit settings; -1 (err) when they are inconsistent. */
int gpu_loss_scale_init_with(struct gpu_loss_scale *s, float initial, float growth,
			     float backoff, int interval, struct trainer_error *err);
/* After a backward: found_inf != 0 means skip this step. Returns 1 when
 * the optimizer step must be skipped, 0 when it may run. */
int gpu_loss_scale_update(struct gpu_loss_scale *s, int found_inf);

#endif
