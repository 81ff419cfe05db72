/* host_loss.h - backend.h's loss ops for the backends whose logits live
 * in host memory (ref, cpu): where a training forward with y NULL keeps
 * the logits, loss_bce over them with the gradient kept for backward
 * (dy NULL), and the running sum loss_take reads (M3). The kept buffers
 * grow on the first such forward and are reused after that. The state
 * rules are the contract every backend keeps (the gpu backend mirrors
 * them in gpu_loss.c): loss only after a training forward with y NULL,
 * once; backward with dy NULL only after that loss.
 * What this is not: the loss formula (loss.c) or a backend.
 */
#ifndef HVD_TRAINER_HOST_LOSS_H
#define HVD_TRAINER_HOST_LOSS_H

#include <stddef.h>

#include "base/error.h"

enum host_loss_state { HOST_LOSS_NONE, HOST_LOSS_LOGITS, HOST_LOSS_GRAD };

struct host_loss {
	const char *who;          /* "backend ref", for messages */
	float *logits, *dy;       /* (capacity) each */
	size_t capacity;
	int count, outputs;       /* rows and values per row of the kept logits */
	enum host_loss_state state;
	double sum;               /* loss() results since the last take */
	long batches;
};

void host_loss_init(struct host_loss *h, const char *who);
void host_loss_free(struct host_loss *h);
/* Where forward writes the output: y itself, or (y NULL, training) the
 * kept buffer of count x outputs. NULL + err: y NULL in evaluation, or
 * out of memory. */
float *host_loss_output(struct host_loss *h, float *y, int count, int outputs, int training,
			struct trainer_error *err);
/* A forward failed (or is about to run): nothing it kept may be used,
 * neither logits for loss() nor a gradient for backward. */
void host_loss_discard(struct host_loss *h);
/* backend.h's loss(). */
int host_loss_compute(struct host_loss *h, const float *labels, const float *w_pos,
		      const float *w_neg, struct trainer_error *err);
/* The gradient backward starts from: dy itself, or (dy NULL) the one
 * loss() kept. NULL + err when there is none. */
const float *host_loss_grad(struct host_loss *h, const float *dy, struct trainer_error *err);
/* backend.h's loss_take(). */
void host_loss_take(struct host_loss *h, double *sum, long *batches);

#endif
