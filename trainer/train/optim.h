/* optim.h - the optimizers over the model's one parameter buffer: Adam
 * (CheXNet: beta 0.9/0.999, eps 1e-8) and SGD with momentum, both with
 * optional L2 weight decay added to the gradient (torch's weight_decay).
 * What this is not: the learning-rate schedule (schedule.h).
 */
#ifndef HVD_TRAINER_OPTIM_H
#define HVD_TRAINER_OPTIM_H

#include <stddef.h>

#include "base/error.h"
#include "backend/hooks.h"

/* Adam 0.9/0.999/1e-8, no weight decay. */
void optim_config_default(struct optim_config *cfg);
int optim_init(struct optim *o, const struct optim_config *cfg, size_t count,
	       struct trainer_error *err);
/* One update of params from grads with learning rate lr. */
void optim_step(struct optim *o, float *params, const float *grads, double lr);
void optim_free(struct optim *o);
const char *optim_name(enum optim_kind kind);

#endif
