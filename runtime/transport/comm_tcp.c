/* comm_tcp.c - the host backend of a launch without PMIx ("tcp"): ring
 * collectives over the authenticated neighbour connections of
 * comm_tcp_link.c. Why not MPI: OpenMPI needs a launcher here (srun's
 * PMIx server or mpirun's); MPI_Comm_connect/accept between processes
 * started apart needs a shared PMIx server (ompi-server/prte) as well, so
 * it is a launcher under another name and its connections would not use
 * the job secret. A ring needs only TCP, the rendezvous the control plane
 * already has, and is bandwidth-optimal for the large fused buckets:
 *   allreduce   reduce-scatter then allgather, 2(n-1) steps, each rank
 *               sends 2(n-1)/n of the buffer; reduced in 1 MiB segments
 *               as they arrive. Each chunk is summed in one fixed order
 *               (left to right along the ring) and then copied, so every
 *               rank gets the same bits; with two ranks a + b == b + a,
 *               bit-identical to MPI and to one rank accumulating two.
 *               HVD_AVERAGE (f32): the last addition into the chunk a
 *               rank owns also scales it by 1/size.
 *   broadcast   pipelined along the ring from the root, 1 MiB segments
 *   allgatherv  sizes by a ring allgather, then the blocks
 * Every wait is poll()ed in 100 ms slices against the deadline and the
 * control plane's abort flag; a neighbour that closes is named. The plan
 * cache's votes may travel over the same links (vote/vote_ring.c).
 * What it does not do: f16/bf16 sums (the engine widens them to f32, as
 * for MPI), device memory, or exit.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/dtype.h"
#include "transport/comm_tcp.h"

#define TCP_SEGMENT_BYTES ((size_t)1 << 20)

struct tcp_ctx {
	struct tcp_links links;
	int rank, size;
	char *tmp; /* TCP_SEGMENT_BYTES: a received segment before it is added */
};

/* Sends slen bytes to the right while receiving rlen from the left. */
static int ring_step(struct tcp_ctx *x, const void *send_buf, size_t slen, void *recv_buf,
		     size_t rlen, const char *call, const struct comm_wait *w)
{
	size_t sent = 0, got = 0;
	int rc = 0;
	while (!rc && (sent < slen || got < rlen)) {
		struct pollfd p[2];
		int n = 0;
		if (sent < slen)
			p[n++] = (struct pollfd){ x->links.right_fd, POLLOUT, 0 };
		if (got < rlen)
			p[n++] = (struct pollfd){ x->links.left_fd, POLLIN, 0 };
		if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR)
			return tcp_links_closed(&x->links, x->links.left, call, w, errno);
		rc = tcp_links_move(&x->links, send_buf, slen, &sent, recv_buf, rlen, &got, call, w);
		if (!rc)
			rc = comm_wait_check(w, call);
	}
	return rc;
}

/* dst += src for the integer dtypes, wrapping around as MPI_SUM on
 * int32 does in practice (f32 sums go through dtype_add_scale_f32). */
static void add_ints(void *dst, const void *src, size_t n, enum hvd_dtype t)
{
	if (t == HVD_I32)
		for (size_t i = 0; i < n; i++)
			((uint32_t *)dst)[i] += ((const uint32_t *)src)[i];
	else
		for (size_t i = 0; i < n; i++)
			((uint64_t *)dst)[i] += ((const uint64_t *)src)[i];
}

static int reduce_scatter(struct tcp_ctx *x, char *buf, size_t count, enum hvd_dtype t,
			  enum hvd_op op, const struct comm_wait *w)
{
	size_t es = dtype_size(t), seg = TCP_SEGMENT_BYTES / es;
	for (int s = 0; s < x->size - 1; s++) {
		size_t sf, sn, rf, rn;
		comm_block(count, x->size, (x->rank - s + 2 * x->size) % x->size, &sf, &sn);
		comm_block(count, x->size, (x->rank - s - 1 + 2 * x->size) % x->size, &rf, &rn);
		for (size_t o = 0; o < sn || o < rn; o += seg) {
			size_t a = o < sn ? (sn - o < seg ? sn - o : seg) : 0;
			size_t b = o < rn ? (rn - o < seg ? rn - o : seg) : 0;
			int rc = ring_step(x, buf + (sf + o) * es, a * es, x->tmp, b * es, "tcp allreduce", w);
			if (rc)
				return rc;
			float scale = op == HVD_AVERAGE && s == x->size - 2 ? 1.0f / (float)x->size : 1.0f;
			if (t == HVD_F32) /* an average's last addition scales it: (x + y) * 1 is x + y */
				dtype_add_scale_f32((float *)buf + rf + o, (float *)buf + rf + o,
						    (const float *)x->tmp, b, scale);
			else
				add_ints(buf + (rf + o) * es, x->tmp, b, t);
		}
	}
	return 0;
}

/* The whole reduction: its test is done at once. */
static int tcp_allreduce(void *ctx, void *buf, size_t count, enum hvd_dtype t,
			 enum hvd_op op, const struct comm_wait *w)
{
	struct tcp_ctx *x = ctx;
	int rc = reduce_scatter(x, buf, count, t, op, w); /* one rank: no step */
	size_t es = dtype_size(t);
	for (int s = 0; !rc && s < x->size - 1; s++) {
		size_t sf, sn, rf, rn;
		comm_block(count, x->size, (x->rank + 1 - s + 2 * x->size) % x->size, &sf, &sn);
		comm_block(count, x->size, (x->rank - s + 2 * x->size) % x->size, &rf, &rn);
		rc = ring_step(x, (char *)buf + sf * es, sn * es, (char *)buf + rf * es, rn * es,
			       "tcp allreduce", w);
	}
	return rc;
}

static int tcp_broadcast(void *ctx, void *buf, size_t bytes, int root, const struct comm_wait *w)
{
	struct tcp_ctx *x = ctx;
	int forward = x->links.right != root, rc = 0;
	for (size_t o = 0; !rc && x->size > 1 && o < bytes; o += TCP_SEGMENT_BYTES) {
		size_t n = bytes - o < TCP_SEGMENT_BYTES ? bytes - o : TCP_SEGMENT_BYTES;
		char *p = (char *)buf + o;
		rc = x->rank == root ? 0 : ring_step(x, NULL, 0, p, n, "tcp broadcast", w);
		if (!rc && forward)
			rc = ring_step(x, p, n, NULL, 0, "tcp broadcast", w);
	}
	return rc;
}

/* Ring allgather of blocks: block r (bytes[r] at off[r] of out) starts at rank r. */
static int ring_gather(struct tcp_ctx *x, char *out, const size_t *off, const size_t *bytes,
		       const char *call, const struct comm_wait *w)
{
	int rc = 0;
	for (int s = 0; !rc && s < x->size - 1; s++) {
		int sb = (x->rank - s + 2 * x->size) % x->size, rb = (x->rank - s - 1 + 2 * x->size) % x->size;
		rc = ring_step(x, out + off[sb], bytes[sb], out + off[rb], bytes[rb], call, w);
	}
	return rc;
}

static int tcp_allgatherv(void *ctx, const void *send, size_t send_bytes, void *recv,
			  size_t cap, size_t *bytes_per_rank, const struct comm_wait *w)
{
	struct tcp_ctx *x = ctx;
	size_t n = (size_t)x->size, total = 0;
	size_t *off = calloc(2 * n, sizeof(*off)); /* and the lengths after them */
	if (!off)
		return HVD_ERR_NOMEM;
	size_t *len = off + n;
	for (size_t r = 0; r < n; r++) { /* first the sizes: one size_t each */
		off[r] = r * sizeof(size_t);
		len[r] = sizeof(size_t);
	}
	bytes_per_rank[x->rank] = send_bytes; /* gathered in place (64-bit, as comm_mpi.c asserts) */
	int rc = ring_gather(x, (char *)bytes_per_rank, off, len, "tcp allgatherv", w);
	for (size_t r = 0; !rc && r < n; r++) { /* then the blocks, as long as each rank says */
		off[r] = total;
		total += bytes_per_rank[r];
	}
	if (!rc && total > cap)
		rc = HVD_ERR_USAGE; /* engine.c says so */
	if (!rc && send_bytes) /* a rank with nothing to give passes send NULL */
		memmove((char *)recv + off[x->rank], send, send_bytes);
	if (!rc)
		rc = ring_gather(x, recv, off, bytes_per_rank, "tcp allgatherv", w);
	free(off);
	return rc;
}

static void tcp_finalize(void *ctx, int clean)
{
	struct tcp_ctx *x = ctx;
	tcp_links_close(&x->links);
	free(x->tmp);
	free(x);
}

static const struct comm_ops tcp_ops = {
	.name = "tcp",
	.allreduce_phase = "TCP_ALLREDUCE",
	.broadcast_phase = "TCP_BCAST",
	.allgather_phase = "TCP_ALLGATHER",
	.widens_halves = 1,
	.alloc = comm_host_alloc,
	.release = comm_host_release,
	.copy = comm_host_copy,
	.allreduce_start = tcp_allreduce,
	.allreduce_test = comm_done_test,
	.broadcast = tcp_broadcast,
	.allgatherv = tcp_allgatherv,
	.finalize = tcp_finalize,
};

struct tcp_links *comm_tcp_links(const struct comm *c)
{
	struct tcp_ctx *x = c->ctx;
	return c->ops == &tcp_ops ? &x->links : NULL;
}

int comm_tcp_open(struct comm *c, struct bootstrap *b, const struct auth_key *key,
		  const char *ip, double deadline, char *err, size_t errlen)
{
	struct tcp_ctx *x = calloc(1, sizeof(*x));
	if (!x || !(x->tmp = malloc(TCP_SEGMENT_BYTES))) {
		free(x);
		return HVD_ERR_NOMEM;
	}
	x->rank = b->rank;
	x->size = b->size;
	int rc = tcp_links_open(&x->links, b, key, ip, deadline, err, errlen);
	if (rc) {
		tcp_finalize(x, 0); /* the links are closed already */
		return rc;
	}
	c->ops = &tcp_ops;
	c->ctx = x;
	return 0;
}
