/* vote/vote.c - the choice of the coordination plane (vote.h) and
 * its two transports that are another's: the data backend's own vote
 * ("messages") and a TCP ring of its own ("ring").
 * What it does not do: the shared-memory slots (vote_shm.c).
 */
#include <stdio.h>
#include <string.h>

#include "vote/vote.h"

static int data_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w)
{
	const struct comm *c = ctx;
	return c->ops->agree_start(c->ctx, vals, n, w);
}

static int data_test(void *ctx, int *done, const struct comm_wait *w)
{
	const struct comm *c = ctx;
	return c->ops->agree_test(c->ctx, done, w);
}

static void data_close(void *ctx, int clean) { }

static const struct vote_ops messages_ops = {
	.name = "messages", .start = data_start, .test = data_test, .close = data_close,
};

/* One rank: its vote is the MIN. */
static int alone_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w) { return 0; }

static int alone_test(void *ctx, int *done, const struct comm_wait *w)
{
	*done = 1;
	return 0;
}

static const struct vote_ops alone_ops = {
	.name = "one rank", .start = alone_start, .test = alone_test, .close = data_close,
};

static void ring_close(void *ctx, int clean)
{
	struct comm *c = ctx;
	c->ops->finalize(c->ctx, clean);
}

static const struct vote_ops ring_ops = {
	.name = "ring", .start = data_start, .test = data_test, .close = ring_close,
};

static int one_node(const struct vote_need *need)
{
	for (int r = 1; r < need->boot->size; r++)
		if (strcmp(need->hosts[r].host, need->hosts[0].host))
			return 0;
	return 1;
}

/* A TCP ring for votes alone (the data backend has none). */
static int open_ring(struct vote_plane *v, const struct vote_need *need, char *err, size_t errlen)
{
	if (!need->ip || !need->key) {
		snprintf(err, errlen, "hvd: HVD_VOTE: 'ring': no address or job secret for the ring");
		return HVD_ERR_COMM;
	}
	int rc = comm_tcp_open(&v->ring, need->boot, need->key, need->ip, need->deadline, err,
			       errlen);
	if (rc)
		return rc;
	v->ops = &ring_ops;
	v->ctx = &v->ring;
	return 0;
}

int vote_open(struct vote_plane *v, const struct vote_need *need, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	enum hvd_vote_choice c = need->choice;
	int has_own = need->data->ops->agree_start != NULL;
	if (need->boot->size == 1) {
		v->ops = c == HVD_VOTE_OFF ? NULL : &alone_ops;
		return 0;
	}
	int rc = 1;
	if ((c == HVD_VOTE_AUTO || c == HVD_VOTE_SHM) && one_node(need))
		rc = vote_shm_open(v, need->boot, err, errlen);
	if (rc < 0 || c == HVD_VOTE_OFF || v->ops)
		return rc < 0 ? rc : 0;
	if (c == HVD_VOTE_RING && !strcmp(need->data->ops->name, "tcp"))
		c = HVD_VOTE_MESSAGES; /* the data backend is a ring */
	if (c == HVD_VOTE_SHM)
		c = HVD_VOTE_AUTO; /* not one node, or some rank could not attach: the next best */
	if (c == HVD_VOTE_MESSAGES && !has_own) {
		snprintf(err, errlen, "hvd: HVD_VOTE: 'messages': the '%s' backend has no vote of its "
			 "own (use auto, shm or ring)", need->data->ops->name);
		return HVD_ERR_SETTINGS;
	}
	if (c == HVD_VOTE_RING || !has_own)
		return open_ring(v, need, err, errlen);
	v->ops = &messages_ops;
	v->ctx = need->data;
	return 0;
}

void vote_close(struct vote_plane *v, int clean)
{
	if (v->ops)
		v->ops->close(v->ctx, clean);
	memset(v, 0, sizeof(*v));
}
