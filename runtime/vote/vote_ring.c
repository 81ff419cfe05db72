/* vote/vote_ring.c - votes around a TCP ring (vote.h): a ring allgather
 * of every rank's few int64s over the authenticated links of
 * comm_tcp_link.c, folded by MIN as they pass, moved without blocking so
 * that agree.c can tell rank 0 when a rank does not vote. On the TCP data
 * backend the links are its own ("messages": a vote never runs beside a
 * reduction); else the vote opens a ring of its own ("ring": NCCL across
 * nodes, HVD_VOTE=ring), which needs this rank's address and the job
 * secret.
 * What it does not do: wait, or carry tensors.
 */
#include <stdlib.h>
#include <string.h>

#include "core/fail.h"
#include "transport/comm_tcp.h"
#include "vote/vote.h"

/* Step `step` of size - 1 sends out[] to the right and receives in[]
 * from the left (the vote of the rank step + 1 to the left), which is
 * folded into vals and sent on at the next step. */
struct ring_vote {
	struct tcp_links own, *links; /* &own, or the TCP data backend's */
	int size;
	int64_t *vals;
	int n, step;
	size_t sent, got;
	int64_t out[VOTE_MAX_VALUES], in[VOTE_MAX_VALUES];
};

static int ring_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w)
{
	struct ring_vote *v = ctx;
	v->vals = vals;
	v->n = n;
	v->step = 0;
	v->sent = v->got = 0;
	memcpy(v->out, vals, (size_t)n * sizeof(*vals));
	return 0;
}

/* Moves what the sockets take now; never waits. */
static int ring_test(void *ctx, int *done, const struct comm_wait *w)
{
	struct ring_vote *v = ctx;
	size_t len = (size_t)v->n * sizeof(*v->vals);
	*done = 0;
	while (v->step < v->size - 1) {
		int rc = tcp_links_move(v->links, v->out, len, &v->sent, v->in, len, &v->got,
					"plan agreement", w);
		if (rc || v->sent < len || v->got < len)
			return rc;
		for (int i = 0; i < v->n; i++)
			v->vals[i] = v->in[i] < v->vals[i] ? v->in[i] : v->vals[i];
		memcpy(v->out, v->in, len);
		v->step++;
		v->sent = v->got = 0;
	}
	*done = 1;
	return 0;
}

static void ring_close(void *ctx, int clean)
{
	struct ring_vote *v = ctx;
	if (v->links == &v->own)
		tcp_links_close(&v->own);
	free(v);
}

static const struct vote_ops ring_ops = {
	.name = "ring", .start = ring_start, .test = ring_test, .close = ring_close,
};
static const struct vote_ops data_ring_ops = {
	.name = "messages", .start = ring_start, .test = ring_test, .close = ring_close,
};

int vote_ring_open(struct vote_plane *p, const struct vote_need *need, char *err, size_t errlen)
{
	struct tcp_links *data = comm_tcp_links(need->data); /* NULL: not the TCP backend */
	if (!data && (!need->ip || !need->key))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: HVD_VOTE: 'ring': no address or job "
				"secret for the ring");
	struct ring_vote *v = calloc(1, sizeof(*v));
	if (!v)
		return HVD_ERR_NOMEM;
	v->size = need->boot->size;
	v->links = data ? data : &v->own;
	int rc = data ? 0 : tcp_links_open(&v->own, need->boot, need->key, need->ip, need->deadline,
					   err, errlen);
	if (rc) {
		free(v);
		return rc;
	}
	p->ops = data ? &data_ring_ops : &ring_ops;
	p->ctx = v;
	return 0;
}
