/* backend/hooks.h - the types training and a backend share (HACKING.md,
 * "Layers": a backend includes backend/, model and base, nothing of
 * train/; train/ includes this file): the optimizer's state (a device
 * optimizer updates it), the device gradient hooks of grad_sync.h, the
 * staging hooks of dist.h and the range hooks of span.h. Plain C types
 * only; the functions that use them stay in optim.h, grad_sync.h, dist.h
 * and span.h. What this is not: an API of its own (no functions).
 */
#ifndef HVD_TRAINER_BACKEND_HOOKS_H
#define HVD_TRAINER_BACKEND_HOOKS_H

#include <stddef.h>

/* The optimizer (optim.h). */
enum optim_kind { OPTIM_ADAM, OPTIM_SGD };

struct optim_config {
	enum optim_kind kind;
	double beta1, beta2, eps;   /* Adam */
	double momentum;            /* SGD (0 = plain SGD) */
	double weight_decay;
};

struct optim {
	struct optim_config cfg;
	size_t count;
	float *m;        /* (count) Adam first moment / SGD momentum buffer */
	float *v;        /* (count) Adam second moment (NULL for SGD) */
	long steps;      /* updates done (Adam's bias correction) */
};

/* Gradients (grad_sync.h): micro-batch accumulation on the device, in place over params
 * [offset, offset + count): micro 0 of K: sum = grads; 0 < micro < K-1:
 * sum += grads; micro K-1: grads = (sum + grads) / K (K > 1 only).
 * Queued, not waited for. 0 or -1. */
struct grad_sync_device {
	void *ctx;
	float *grads;                 /* (param_count) device gradients */
	int (*accumulate)(void *ctx, size_t offset, size_t count, int micro, int accumulate);
};

/* Blocking collectives (dist.h): host <-> device copies for the blocking collectives on a device
 * backend; each call is complete when it returns. */
struct dist_staging {
	void *ctx;
	/* A device buffer of at least `bytes`, kept between calls (grown only
	 * when a larger collective comes). NULL when out of memory. */
	void *(*buffer)(void *ctx, size_t bytes);
	int (*to_device)(void *ctx, void *dev, const void *host, size_t bytes);
	int (*to_host)(void *ctx, void *host, const void *dev, size_t bytes);
};

/* Training-phase ranges (span.h). */
struct span_ranges {
	void (*push)(const char *name);
	void (*pop)(void);
};

#endif
