/* host_loss.c - the loss kept on a host backend (see host_loss.h).
 * What it does not do: compute the loss (loss.c does, the same call the
 * trainer made before M3, so host results are bit for bit unchanged).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/host_loss.h"
#include "model/loss.h"

void host_loss_init(struct host_loss *h, const char *who)
{
	memset(h, 0, sizeof(*h));
	h->who = who;
}

void host_loss_free(struct host_loss *h)
{
	free(h->logits);
	free(h->dy);
	h->logits = h->dy = NULL;
	h->capacity = 0;
}

static int grow(struct host_loss *h, size_t need, struct trainer_error *err)
{
	if (need <= h->capacity)
		return 0;
	float *logits = realloc(h->logits, need * sizeof(float));
	if (logits)
		h->logits = logits;
	float *dy = logits ? realloc(h->dy, need * sizeof(float)) : NULL;
	if (!dy)
		return trainer_error_set(err, "%s: loss: out of memory for %zu logits", h->who, need);
	h->dy = dy;
	h->capacity = need;
	return 0;
}

float *host_loss_output(struct host_loss *h, float *y, int count, int outputs, int training,
			struct trainer_error *err)
{
	h->state = HOST_LOSS_NONE;
	if (y)
		return y;
	if (!training) {
		trainer_error_set(err, "%s: forward: no output buffer in evaluation (y NULL keeps "
				  "the logits for loss(), training only)", h->who);
		return NULL;
	}
	if (grow(h, (size_t)count * (size_t)outputs, err))
		return NULL;
	h->count = count;
	h->outputs = outputs;
	h->state = HOST_LOSS_LOGITS;
	return h->logits;
}

void host_loss_discard(struct host_loss *h)
{
	h->state = HOST_LOSS_NONE;
}

int host_loss_compute(struct host_loss *h, const float *labels, const float *w_pos,
		      const float *w_neg, struct trainer_error *err)
{
	if (h->state != HOST_LOSS_LOGITS)
		return trainer_error_set(err, "%s: loss: %s", h->who, h->state == HOST_LOSS_GRAD ?
					 "already computed for this forward" :
					 "needs a training forward with y NULL first");
	h->sum += loss_bce(h->logits, labels, h->count, h->outputs, w_pos, w_neg, h->dy);
	h->batches++;
	h->state = HOST_LOSS_GRAD;
	return 0;
}

const float *host_loss_grad(struct host_loss *h, const float *dy, struct trainer_error *err)
{
	if (dy)
		return dy;
	if (h->state != HOST_LOSS_GRAD) {
		trainer_error_set(err, "%s: backward: dy NULL needs loss() after the training "
				  "forward", h->who);
		return NULL;
	}
	return h->dy;
}

void host_loss_take(struct host_loss *h, double *sum, long *batches)
{
	*sum = h->sum;
	*batches = h->batches;
	h->sum = 0;
	h->batches = 0;
}
