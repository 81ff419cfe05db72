/* pipeline.c - see pipeline.h. Positions are elements of the wire dtype
 * in the fusion buffer; tensor i occupies [off[i], off[i] + count). */
#include <stdlib.h>

#include "core/dtype.h"
#include "engine/pipeline.h"

/* Host copies run in slices of this many bytes between polls. */
#define PIPE_SLICE_BYTES (64u * 1024)

struct pipe {
	struct runtime *rt;
	const struct pipeline_bucket *b;
	const struct comm_wait *w;
	size_t *off;             /* n + 1 entries */
	size_t chunk;            /* elements per chunk */
	size_t chunks;
	size_t cursor[2];        /* tensor search start: copy-in, copy-out */
	int inflight, done;      /* the reduction being polled */
};

/* Copies [lo, hi) of the buffer from (in) or back to (!in) the tensors. */
static int copy_range(struct pipe *p, size_t lo, size_t hi, int in)
{
	const struct pipeline_bucket *b = p->b;
	const struct comm_ops *ops = p->rt->comm.ops;
	if (b->in_place)
		return 0;
	size_t i = p->cursor[in];
	while (i < b->n && p->off[i + 1] <= lo)
		i++;
	p->cursor[in] = i;
	size_t ws = dtype_size(b->wire), ts = dtype_size(b->t);
	int rc = 0;
	for (; !rc && i < b->n && p->off[i] < hi; i++) {
		size_t a = lo > p->off[i] ? lo : p->off[i], z = hi < p->off[i + 1] ? hi : p->off[i + 1];
		if (a >= z)
			continue;
		char *tensor = (char *)b->es[i]->data + (a - p->off[i]) * ts, *wire = b->buf + a * ws;
		if (b->wire != b->t && in)
			dtype_to_f32((float *)wire, tensor, z - a, b->t);
		else if (b->wire != b->t)
			dtype_from_f32(tensor, (const float *)wire, z - a, b->t);
		else /* the same dtype: the backend's copy, either way */
			rc = ops->copy(p->rt->comm.ctx, in ? wire : tensor, in ? tensor : wire, (z - a) * ts,
				       p->w->err, p->w->errlen);
	}
	return rc;
}

static int poll_reduction(struct pipe *p)
{
	if (!p->inflight || p->done)
		return 0;
	return p->rt->comm.ops->allreduce_test(p->rt->comm.ctx, &p->done, p->w);
}

static void chunk_bounds(const struct pipe *p, size_t k, size_t *lo, size_t *hi)
{
	*lo = k * p->chunk;
	*hi = *lo + p->chunk < p->b->total ? *lo + p->chunk : p->b->total;
}

/* Copies chunk k in or out, with HVD_COMPRESSION's rounding on the
 * buffer's side of the copy (after it in, before it out; the average is
 * the backend's, comm.h). On a host backend in slices, polling the
 * reduction in flight between them: a rank that works through a whole
 * chunk unpolled stalls its peers' next reduction. */
static int copy_chunk(struct pipe *p, size_t k, int in)
{
	const struct pipeline_bucket *b = p->b;
	size_t lo, hi;
	chunk_bounds(p, k, &lo, &hi);
	size_t slice = p->rt->comm.ops->device_memory ? hi - lo : PIPE_SLICE_BYTES / dtype_size(b->wire);
	int rc = 0;
	for (size_t s = lo; !rc && s < hi; s += slice) {
		size_t end = s + slice < hi ? s + slice : hi;
		rc = in ? copy_range(p, s, end, 1) : 0;
		if (b->squeeze != b->t)
			dtype_round_f32_through((float *)b->buf + s, end - s, b->squeeze);
		if (!rc && !in)
			rc = copy_range(p, s, end, 0);
		if (!rc)
			rc = poll_reduction(p);
	}
	return rc;
}

static size_t chunk_of(const struct pipe *p, size_t pos)
{
	size_t k = pos / p->chunk;
	return k < p->chunks ? k : p->chunks - 1;
}

/* Timeline: tensors whose first (first = 1) or last element lies in
 * chunk k end the span they are in (end) and begin `phase` (non-NULL). */
static void phases(struct pipe *p, size_t k, int first, int end, const char *phase)
{
	struct timeline *tl = p->rt->tl;
	for (size_t i = 0; tl && i < p->b->n; i++) {
		size_t cnt = p->off[i + 1] - p->off[i];
		size_t at = first || !cnt ? p->off[i] : p->off[i + 1] - 1;
		if (chunk_of(p, at) != k)
			continue;
		if (end)
			timeline_end(tl, p->b->es[i]->item.name, NULL);
		if (phase)
			timeline_begin(tl, p->b->es[i]->item.name, phase);
	}
}

/* Device backends: where the chunk's copies run (comm.h stage). */
static int stage(struct pipe *p, enum comm_stage s, size_t k)
{
	const struct comm_ops *ops = p->rt->comm.ops;
	return p->chunks > 1 && ops->stage ? ops->stage(p->rt->comm.ctx, s, k, p->w) : 0;
}

/* In place a tensor's row shows only the reduction: it begins with the
 * tensor's first chunk and ends with its last. */
static int copy_in(struct pipe *p, size_t k)
{
	const char *reduce = p->rt->comm.ops->allreduce_phase;
	phases(p, k, 1, 0, p->b->in_place ? reduce : "MEMCPY_IN_FUSION_BUFFER");
	int rc = copy_chunk(p, k, 1);
	if (!rc)
		rc = stage(p, COMM_STAGE_IN_DONE, k);
	if (!p->b->in_place)
		phases(p, k, 0, 1, reduce);
	return rc;
}

static int start(struct pipe *p, size_t k)
{
	size_t lo, hi;
	chunk_bounds(p, k, &lo, &hi);
	const struct pipeline_bucket *b = p->b;
	p->inflight = 1;
	p->done = 0;
	char *at = b->buf + lo * dtype_size(b->wire);
	return p->rt->comm.ops->allreduce_start(p->rt->comm.ctx, at, hi - lo, b->wire, b->op, p->w);
}

static int finish(struct pipe *p)
{
	int rc = 0;
	for (unsigned polls = 0; !rc && !p->done; polls++) {
		rc = poll_reduction(p);
		if (!rc && !p->done)
			comm_poll_pause(polls);
	}
	p->inflight = 0;
	return rc;
}

/* Chunk k's reduction is done: start k+1's, then copy k out meanwhile. */
static int copy_out(struct pipe *p, size_t k)
{
	phases(p, k, 0, 1, p->b->in_place ? NULL : "MEMCPY_OUT_FUSION_BUFFER");
	int rc = k + 1 < p->chunks ? start(p, k + 1) : 0;
	if (!rc)
		rc = stage(p, COMM_STAGE_OUT, k);
	if (!rc)
		rc = copy_chunk(p, k, 0);
	if (k + 1 < p->chunks && !p->b->in_place) /* the last chunk's end after the drain */
		phases(p, k, 0, 1, NULL);
	return rc;
}

static int run(struct pipe *p)
{
	const struct comm_ops *ops = p->rt->comm.ops;
	int rc = stage(p, COMM_STAGE_BEGIN, 0);
	if (!rc)
		rc = copy_in(p, 0);
	if (!rc)
		rc = start(p, 0);
	for (size_t k = 0; !rc && k < p->chunks; k++) {
		if (k + 1 < p->chunks)
			rc = copy_in(p, k + 1);
		if (!rc)
			rc = finish(p);
		if (!rc)
			rc = copy_out(p, k);
	}
	if (!rc && ops->drain) /* device copies are queued, not done */
		rc = ops->drain(p->rt->comm.ctx, p->w);
	if (!rc && !p->b->in_place)
		phases(p, p->chunks - 1, 0, 1, NULL);
	return rc;
}

int pipeline_allreduce(struct runtime *rt, const struct pipeline_bucket *b, size_t chunk_bytes,
		       const struct comm_wait *w)
{
	struct pipe p = { .rt = rt, .b = b, .w = w, .chunk = chunk_bytes / dtype_size(b->wire) };
	if (!p.chunk || p.chunk >= b->total)
		p.chunk = b->total ? b->total : 1;
	if (rt->comm.ops->max_count && p.chunk > rt->comm.ops->max_count)
		p.chunk = rt->comm.ops->max_count;
	p.chunks = b->total ? (b->total + p.chunk - 1) / p.chunk : 1;
	p.off = malloc((b->n + 1) * sizeof(*p.off));
	if (!p.off)
		return HVD_ERR_NOMEM;
	p.off[0] = 0;
	for (size_t i = 0; i < b->n; i++)
		p.off[i + 1] = p.off[i] + b->es[i]->item.count;
	int rc = run(&p);
	int end = stage(&p, COMM_STAGE_END, 0);
	rc = rc ? rc : end;
	if (rc && p.inflight)
		finish(&p); /* never leave a request on memory that is reused */
	free(p.off);
	return rc;
}
