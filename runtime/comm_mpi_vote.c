/* comm_mpi_vote.c - see comm_mpi_vote.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_mpi_vote.h"

#define VOTE_TAG 0x4857 /* comm_mpi_rd.c's is 0x4856, on the same communicator */

_Static_assert((VOTE_VALUES_MAX + 2) * 8 < RD_PIECE_BYTES, "a header fits the first piece");
_Static_assert(1 + (RD_PIECED_MAX + RD_PIECE_BYTES - 1) / RD_PIECE_BYTES <= VOTE_PIECES_MAX,
	       "pieces fit req[]");
_Static_assert(VOTE_DATA_MAX <= INT32_MAX, "piece lengths are ints");

static size_t header_bytes(const struct vote_op *op)
{
	return (size_t)(op->n + 2) * sizeof(int64_t);
}

/* The message is the header and the vector after it, `total` bytes, cut
 * into equal pieces under the eager limit (vader takes two of 2 KiB
 * faster than 4000 and 100 bytes), or, for a vector above RD_PIECED_MAX,
 * a first piece and the rest whole. *per: the length of every piece but
 * the last (every piece but the first, for the rest whole). */
static int pieces_of(size_t header, size_t bytes, size_t *per)
{
	size_t total = header + bytes;
	if (total <= RD_PIECE_BYTES) {
		*per = total;
		return 1;
	}
	if (bytes > RD_PIECED_MAX) {
		*per = RD_PIECE_BYTES;
		return 2;
	}
	int pieces = (int)((total + RD_PIECE_BYTES - 1) / RD_PIECE_BYTES);
	*per = (total + (size_t)pieces - 1) / (size_t)pieces;
	return pieces;
}

/* The pieces of a message of `bytes` after the header, and the first
 * piece's vector bytes. */
static int vote_pieces(size_t header, size_t bytes, size_t *first_bytes)
{
	size_t per;
	int pieces = pieces_of(header, bytes, &per);
	*first_bytes = per - header;
	return pieces;
}

/* Piece p >= 1: its offset in the vector and its length. */
static size_t rest_piece(size_t header, size_t bytes, int p, int *len)
{
	size_t per, total = header + bytes;
	int pieces = pieces_of(header, bytes, &per);
	size_t at = pieces == 2 && bytes > RD_PIECED_MAX ? per : (size_t)p * per;
	size_t end = p + 1 == pieces ? total : at + per;
	*len = (int)(end - at);
	return at - header;
}

/* The first piece's receive, then this rank's pieces. */
static int post_round(struct vote_op *op)
{
	int partner = op->rank ^ op->dist, len, rc;
	size_t h = header_bytes(op), first;
	int pieces = vote_pieces(h, op->bytes, &first);
	int64_t *hdr = (int64_t *)op->tx;
	memcpy(hdr, op->vals, (size_t)op->n * sizeof(int64_t));
	hdr[op->n] = op->uniform;
	hdr[op->n + 1] = (int64_t)op->bytes;
	if (first)
		memcpy(op->tx + h, op->data, first);
	for (int r = 0; r < 2 * VOTE_PIECES_MAX; r++) /* a failed post leaves no stale request */
		op->req[r] = MPI_REQUEST_NULL;
	op->head_in = 0;
	op->nreq = 1 + pieces;
	rc = MPI_Irecv(op->rx, (int)RD_PIECE_BYTES, MPI_BYTE, partner, VOTE_TAG, op->comm, &op->req[0]);
	if (rc == MPI_SUCCESS)
		rc = MPI_Isend(op->tx, (int)(h + first), MPI_BYTE, partner, VOTE_TAG, op->comm,
			       &op->req[1]);
	for (int p = 1; rc == MPI_SUCCESS && p < pieces; p++) {
		size_t at = rest_piece(h, op->bytes, p, &len);
		rc = MPI_Isend(op->data + at, len, MPI_BYTE, partner, VOTE_TAG, op->comm,
			       &op->req[1 + p]);
	}
	return rc;
}

/* The partner's first piece is in: checks its header and receives the
 * rest of its vector, however long (a partner that disagrees may send
 * another length; every message it sent is received). */
static int take_head(struct vote_op *op, const MPI_Status *st)
{
	size_t h = header_bytes(op), first;
	int got = 0, partner = op->rank ^ op->dist, len;
	MPI_Get_count(st, MPI_BYTE, &got);
	const int64_t *peer = (const int64_t *)op->rx;
	if ((size_t)got < h || peer[op->n + 1] < 0 || (size_t)peer[op->n + 1] > VOTE_DATA_MAX)
		return MPI_ERR_TRUNCATE;
	op->peer_bytes = (size_t)peer[op->n + 1];
	int pieces = vote_pieces(h, op->peer_bytes, &first);
	if ((size_t)got != h + first)
		return MPI_ERR_TRUNCATE;
	if (rd_grow(&op->rx, &op->rx_cap, h + op->peer_bytes) != MPI_SUCCESS)
		return MPI_ERR_NO_MEM;
	int rc = MPI_SUCCESS;
	for (int p = 1; rc == MPI_SUCCESS && p < pieces; p++) {
		size_t at = rest_piece(h, op->peer_bytes, p, &len);
		rc = MPI_Irecv(op->rx + h + at, len, MPI_BYTE, partner, VOTE_TAG, op->comm,
			       &op->req[op->nreq++]);
	}
	op->head_in = 1;
	return rc;
}

/* The round's result: the MIN of the votes; the sum of the vectors while
 * the round is uniform. */
static void combine(struct vote_op *op)
{
	const int64_t *peer = (const int64_t *)op->rx;
	int alike = !memcmp(op->vals, peer, (size_t)op->nsame * sizeof(int64_t));
	int uniform = op->uniform && peer[op->n] == 1 && alike && op->bytes == op->peer_bytes;
	if (uniform && op->bytes)
		rd_combine(op->kind, op->data, op->rx + header_bytes(op),
			   (int)(op->bytes / rd_esize(op->kind)));
	rd_combine(RD_MIN_I64, op->vals, peer, op->n);
	op->uniform = uniform;
	if (!uniform)
		op->bytes = 0; /* the later rounds carry the vote alone */
}

int vote_start(struct vote_op *op, int64_t *vals, int n, int nsame, void *data, size_t bytes,
	       enum rd_kind kind)
{
	if (n < 1 || n > VOTE_VALUES_MAX || nsame < 0 || nsame > n || bytes > VOTE_DATA_MAX ||
	    (bytes && !data) || bytes % rd_esize(kind))
		return MPI_ERR_ARG;
	if (!op->tx && !(op->tx = malloc(RD_PIECE_BYTES)))
		return MPI_ERR_NO_MEM;
	if (rd_grow(&op->rx, &op->rx_cap, RD_PIECE_BYTES) != MPI_SUCCESS)
		return MPI_ERR_NO_MEM;
	op->vals = vals;
	op->n = n;
	op->nsame = nsame;
	op->data = data;
	op->out = NULL;
	op->bytes = data ? bytes : 0;
	if (op->bytes && op->size > 2) { /* more than one round: sum a copy */
		if (rd_grow(&op->acc, &op->acc_cap, op->bytes) != MPI_SUCCESS)
			return MPI_ERR_NO_MEM;
		memcpy(op->acc, data, op->bytes);
		op->out = data;
		op->data = op->acc;
	}
	op->kind = kind;
	op->uniform = 1;
	op->dist = op->size > 1 ? 1 : 0;
	return op->dist ? post_round(op) : MPI_SUCCESS;
}

int vote_test(struct vote_op *op, int *done)
{
	*done = 0;
	if (!op->dist) {
		*done = 1;
		return MPI_SUCCESS;
	}
	int flag = 0, rc;
	if (!op->head_in) {
		MPI_Status st;
		rc = MPI_Test(&op->req[0], &flag, &st);
		if (rc != MPI_SUCCESS || !flag)
			return rc;
		if ((rc = take_head(op, &st)) != MPI_SUCCESS)
			return rc;
	}
	rc = MPI_Testall(op->nreq, op->req, &flag, MPI_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS || !flag)
		return rc;
	combine(op);
	op->dist <<= 1;
	if (op->dist >= op->size) {
		op->dist = 0;
		if (op->uniform && op->out)
			memcpy(op->out, op->data, op->bytes);
		*done = 1;
		return MPI_SUCCESS;
	}
	return post_round(op);
}

void vote_free(struct vote_op *op)
{
	free(op->tx);
	free(op->rx);
	free(op->acc);
	op->tx = op->rx = op->acc = NULL;
	op->rx_cap = op->acc_cap = 0;
}
