/* loop/train_save.c - a rank's training state gathered for a checkpoint
 * (loop/trainer.h): parameters, moments and BN statistics to the host,
 * BN statistics averaged over ranks, checked finite, and OUT/last or
 * OUT/best written.
 * What it does not do: choose when (loop/train.c, recover/lost_peer.c).
 */
#include <stdio.h>

#include "loop/diverge.h"
#include "loop/trainer.h"
#include "train/checkpoint.h"

/* This rank's parameters, moments and BN running statistics on the host. */
int trainer_state_to_host(struct trainer *t)
{
	struct trainer_error err = { "" };

	if (train_device_to_host(&t->device, &t->optim))  /* device parameters, moments */
		return -1;
	if (t->s.ops->store_state(t->s.backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Every rank: running statistics averaged over ranks, on host and backend;
 * fails (no checkpoint, no validation) when they or the parameters are
 * not finite. */
int trainer_average_bn(struct trainer *t)
{
	struct trainer_error err = { "" };
	struct model *m = &t->s.model;

	if (trainer_state_to_host(t))
		return -1;
	if (t->world > 1 && dist_average("bn.running", m->state, m->desc.state_count))
		return trainer_dist_failed();
	if (t->world > 1 && t->s.ops->load_params(t->s.backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return trainer_finite(t);
}

/* Every rank (the parameters are the same everywhere): -1 with the line
 * when a parameter or BN statistic is not finite, so no checkpoint and
 * no validation comes from a diverged state. */
int trainer_finite(const struct trainer *t)
{
	const struct model *m = &t->s.model;
	struct diverge_at at = { t->state.epoch, t->state.step };
	int loud = t->rank == 0;

	if (diverge_check_array(t->c.lr, &at, "parameters are", m->params, m->desc.param_count, loud) ||
	    diverge_check_array(t->c.lr, &at, "BN running statistics are", m->state,
				m->desc.state_count, loud))
		return -1;
	return 0;
}

/* This rank writes OUT/name. */
int trainer_save_here(struct trainer *t, const char *name)
{
	char dir[4096];
	struct trainer_error err = { "" };

	snprintf(dir, sizeof(dir), "%s/%s", t->c.out, name);
	if (checkpoint_save_run(dir, &t->s.model, &t->optim, &t->sched, &t->state, &t->settings,
				&err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Rank 0 writes OUT/name (call average_bn_state first on every rank). */
int trainer_save(struct trainer *t, const char *name)
{
	return t->c.out && t->rank == 0 ? trainer_save_here(t, name) : 0;
}
