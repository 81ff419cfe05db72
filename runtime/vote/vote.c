/* vote/vote.c - the choice of the coordination plane (vote.h), and a
 * world of one rank, which votes alone.
 * What it does not do: carry votes (vote_shm.c, vote_mpi.c,
 * vote_ring.c).
 */
#include <string.h>

#include "core/fail.h"
#include "vote/vote.h"

/* One rank: its vote is the MIN. */
static int alone_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w)
{
	return 0;
}

static const struct vote_ops alone_ops = {
	.name = "one rank", .start = alone_start, .test = comm_done_test,
};

int vote_open(struct vote_plane *v, const struct vote_need *need, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	enum hvd_vote_choice c = need->choice;
	const char *data = need->data->ops->name;
	int mpi = !strcmp(data, "mpi"), tcp = !strcmp(data, "tcp");
	if (need->boot->size == 1) {
		v->ops = c == HVD_VOTE_OFF ? NULL : &alone_ops;
		return 0;
	}
	int rc = 1, one_node = 1; /* rc 1: no shared memory (yet) */
	for (int r = 1; r < need->boot->size; r++)
		one_node &= !strcmp(need->hosts[r].host, need->hosts[0].host);
	if ((c == HVD_VOTE_AUTO || c == HVD_VOTE_SHM) && one_node)
		rc = vote_shm_open(v, need->boot, err, errlen);
	if (rc < 0 || c == HVD_VOTE_OFF || v->ops)
		return rc < 0 ? rc : 0;
	if (c == HVD_VOTE_MESSAGES && !mpi && !tcp)
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_VOTE: 'messages': the "
				"'%s' backend has no vote of its own (use auto, shm or ring)",
				data);
#ifdef HAVE_MPI
	if (mpi && c != HVD_VOTE_RING) /* auto, messages, or shm that some rank could not attach */
		return vote_mpi_open(v, err, errlen);
#endif
	return vote_ring_open(v, need, err, errlen); /* on TCP over its links: its vote is a ring */
}

void vote_close(struct vote_plane *v, int clean)
{
	if (v->ops && v->ops->close)
		v->ops->close(v->ctx, clean);
	memset(v, 0, sizeof(*v));
}
