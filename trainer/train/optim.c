/* optim.c - Adam and SGD with momentum, as torch.optim computes them
 * (Adam: p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps); SGD: the first
 * momentum buffer is the gradient itself). Moments are fp32. Each update
 * is one vector loop (omp simd, sqrt without errno: module.mk), equal bit
 * for bit to the scalar formula since every operation is IEEE-rounded the
 * same way in either (test_training.c checks it).
 * What it does not do: gradient averaging across ranks (the runtime).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/optim.h"

void optim_config_default(struct optim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = OPTIM_ADAM;
	cfg->beta1 = 0.9;
	cfg->beta2 = 0.999;
	cfg->eps = 1e-8;
}

int optim_init(struct optim *o, const struct optim_config *cfg, size_t count,
	       struct trainer_error *err)
{
	memset(o, 0, sizeof(*o));
	o->cfg = *cfg;
	o->count = count;
	o->m = calloc(count ? count : 1, sizeof(float));
	if (cfg->kind == OPTIM_ADAM)
		o->v = calloc(count ? count : 1, sizeof(float));
	if (!o->m || (cfg->kind == OPTIM_ADAM && !o->v)) {
		optim_free(o);
		return trainer_error_set(err, "optimizer: out of memory for %zu parameters", count);
	}
	return 0;
}

void optim_free(struct optim *o)
{
	free(o->m);
	free(o->v);
	o->m = o->v = NULL;
}

static void adam_step(struct optim *o, float *p, const float *g, double lr)
{
	double bc1 = 1.0 - pow(o->cfg.beta1, (double)o->steps);
	double bc2 = 1.0 - pow(o->cfg.beta2, (double)o->steps);
	float b1 = (float)o->cfg.beta1, b2 = (float)o->cfg.beta2, wd = (float)o->cfg.weight_decay;
	float step = (float)(lr / bc1), sqrt_bc2 = (float)sqrt(bc2), eps = (float)o->cfg.eps;

	#pragma omp simd
	for (size_t i = 0; i < o->count; i++) {
		float grad = g[i] + wd * p[i];
		o->m[i] = b1 * o->m[i] + (1.0f - b1) * grad;
		o->v[i] = b2 * o->v[i] + (1.0f - b2) * grad * grad;
		p[i] -= step * o->m[i] / (sqrtf(o->v[i]) / sqrt_bc2 + eps);
	}
}

static void sgd_step(struct optim *o, float *p, const float *g, double lr)
{
	float mu = (float)o->cfg.momentum, wd = (float)o->cfg.weight_decay, rate = (float)lr;

	#pragma omp simd
	for (size_t i = 0; i < o->count; i++) {
		float grad = g[i] + wd * p[i];
		if (mu != 0.0f) {
			o->m[i] = o->steps == 1 ? grad : mu * o->m[i] + grad;
			grad = o->m[i];
		}
		p[i] -= rate * grad;
	}
}

void optim_step(struct optim *o, float *params, const float *grads, double lr)
{
	o->steps++;
	if (o->cfg.kind == OPTIM_ADAM)
		adam_step(o, params, grads, lr);
	else
		sgd_step(o, params, grads, lr);
}

const char *optim_name(enum optim_kind kind)
{
	return kind == OPTIM_ADAM ? "adam" : "sgd";
}
