/* vote/vote_mpi.c - votes as MPI messages (vote.h), for the MPI data
 * backend: an MPI_Iallreduce (MIN) on a communicator of their own (a
 * duplicate of MPI_COMM_WORLD, which comm_mpi.c started), so a vote's
 * messages never meet a reduction's. Every rank opens it at start-up
 * (the duplicate is collective); like every MPI call here it runs on the
 * engine thread or a waiter lent to it, never beside a reduction
 * (MPI_THREAD_SERIALIZED).
 * What it does not do: start or end MPI (comm_mpi.c), or wait.
 */
#include <stdlib.h>

#include <mpi.h>

#include "core/fail.h"
#include "vote/vote.h"

struct mpi_vote {
	MPI_Comm comm;
	MPI_Request req;
};

static int mpi_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w)
{
	struct mpi_vote *m = ctx;
	int rc = MPI_Iallreduce(MPI_IN_PLACE, vals, n, MPI_INT64_T, MPI_MIN, m->comm, &m->req);
	return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(w, "MPI_Iallreduce", rc);
}

/* One look; agree.c polls against its deadline and abort flag. */
static int mpi_test(void *ctx, int *done, const struct comm_wait *w)
{
	struct mpi_vote *m = ctx;
	int rc = MPI_Test(&m->req, done, MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(w, "MPI_Iallreduce", rc);
}

static void mpi_close(void *ctx, int clean)
{
	struct mpi_vote *m = ctx;
	if (clean)
		MPI_Comm_free(&m->comm);
	free(m);
}

static const struct vote_ops mpi_ops = {
	.name = "messages", .start = mpi_start, .test = mpi_test, .close = mpi_close,
};

int vote_mpi_open(struct vote_plane *v, char *err, size_t errlen)
{
	struct mpi_vote *m = calloc(1, sizeof(*m));
	if (!m)
		return HVD_ERR_NOMEM;
	m->req = MPI_REQUEST_NULL;
	if (MPI_Comm_dup(MPI_COMM_WORLD, &m->comm) != MPI_SUCCESS) {
		free(m);
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: MPI_Comm_dup: 'votes': failed");
	}
	MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
	v->ops = &mpi_ops;
	v->ctx = m;
	return 0;
}
