/* coord.c - see coord.h. Every rank submits in the same order, so the
 * n-th submission of each rank must describe the same collective; a
 * position is ready when every rank has reached it. */
#include "plan/coord.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

int coord_init(struct coord *c, int size, uint64_t threshold_bytes)
{
	*c = (struct coord){ .size = size, .threshold_bytes = threshold_bytes,
			     .q = calloc((size_t)size, sizeof(*c->q)) };
	return c->q ? 0 : -1;
}

void coord_free(struct coord *c)
{
	for (int r = 0; c->q && r < c->size; r++) {
		free(c->q[r].items);
		free(c->q[r].meta);
	}
	free(c->q);
	memset(c, 0, sizeof(*c));
}

static size_t live(const struct coord *c, int r)
{
	return c->q[r].len - c->q[r].head;
}

static struct plan_tag tag_at(const struct coord *c, int r, size_t i)
{
	return c->q[r].meta[c->q[r].head + i].tag;
}

static const struct fusion_item *item_at(const struct coord *c, int r, size_t i)
{
	return &c->q[r].items[c->q[r].head + i];
}

static int queue_reserve(struct coord_queue *q)
{
	if (q->head > 0 && q->head * 2 >= q->len) { /* compact */
		size_t live = q->len - q->head;
		memmove(q->items, q->items + q->head, live * sizeof(*q->items));
		memmove(q->meta, q->meta + q->head, live * sizeof(*q->meta));
		q->len = live;
		q->head = 0;
	}
	if (q->len < q->cap)
		return 0;
	size_t cap = q->cap ? q->cap * 2 : 64;
	struct fusion_item *items = realloc(q->items, cap * sizeof(*items));
	if (!items)
		return -1;
	q->items = items;
	struct coord_meta *meta = realloc(q->meta, cap * sizeof(*meta));
	if (!meta)
		return -1;
	q->meta = meta;
	q->cap = cap;
	return 0;
}

int64_t coord_submit(struct coord *c, int rank, const struct fusion_item *it,
		     struct plan_tag tag, double now)
{
	struct coord_queue *q = &c->q[rank];
	if (queue_reserve(q))
		return -1;
	q->items[q->len] = *it;
	q->meta[q->len++] = (struct coord_meta){ now, tag };
	return (int64_t)(c->planned + (q->len - q->head) - 1);
}

int coord_idle(const struct coord *c)
{
	for (int r = 0; r < c->size; r++)
		if (live(c, r))
			return 0;
	return 1;
}

size_t coord_ready(const struct coord *c)
{
	size_t ready = (size_t)-1;
	for (int r = 0; r < c->size; r++)
		if (live(c, r) < ready)
			ready = live(c, r);
	return c->size ? ready : 0;
}

static void describe_mismatch(const struct coord *c, size_t first, size_t count,
			      char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "hvd: tensor mismatch: ");
	int listed = 0;
	for (size_t i = first; i < first + count && listed < 6; i++) {
		const struct fusion_item *ref = item_at(c, 0, i);
		for (int r = 1; r < c->size && listed < 6; r++) {
			const struct fusion_item *it = item_at(c, r, i);
			if (fusion_item_matches(ref, it))
				continue;
			char a[200], b[200];
			fusion_item_describe(ref, a, sizeof(a));
			fusion_item_describe(it, b, sizeof(b));
			if (used < errlen)
				used += (size_t)snprintf(err + used, errlen - used,
					"%s'%s' vs '%s': rank 0 submitted %s but rank %d submitted %s "
					"at position %llu", listed ? "; " : "", ref->name, it->name,
					a, r, b, (unsigned long long)(c->planned + i));
			listed++;
		}
	}
	if (used < errlen)
		snprintf(err + used, errlen - used,
			 "; every rank must submit the same tensors in the same order");
}

double coord_head_ready_time(const struct coord *c)
{
	if (!coord_ready(c))
		return -1;
	double t = 0;
	for (int r = 0; r < c->size; r++)
		t = fmax(t, c->q[r].meta[c->q[r].head].t_submit);
	return t;
}

/* Cache id when every rank tagged relative position i as the start of the
 * same cached bucket, else -1. */
static int64_t cached_start(const struct coord *c, size_t i, size_t ready)
{
	if (i >= ready || tag_at(c, 0, i).id < 0)
		return -1;
	for (int r = 0; r < c->size; r++)
		if (tag_at(c, r, i).id != tag_at(c, 0, i).id || tag_at(c, r, i).off != 0)
			return -1;
	return tag_at(c, 0, i).id;
}

enum run_state { RUN_COMPLETE, RUN_PENDING, RUN_BROKEN };

/* Cached bucket id at relative position i: complete on every rank, still
 * arriving, or broken (some rank submitted something else). */
static enum run_state cached_run(const struct coord *c, const struct plan_cache *pc, size_t i,
				 int64_t id)
{
	uint32_t n = plan_cache_entry(pc, id)->count;
	int pending = 0;
	for (int r = 0; r < c->size; r++)
		for (uint32_t k = 0; k < n; k++) {
			if (i + k >= live(c, r)) {
				pending = 1;
				break;
			}
			struct plan_tag t = tag_at(c, r, i + k);
			if (t.id != id || t.off != k)
				return RUN_BROKEN;
		}
	return pending ? RUN_PENDING : RUN_COMPLETE;
}

/* 1 when the bucket [s, e) could still take the next submission. */
static int may_grow(const struct coord *c, const struct fusion_bucket *b, size_t e)
{
	const struct fusion_item *first = item_at(c, 0, b->first);
	if (first->kind != FUSION_ALLREDUCE || !c->threshold_bytes || b->bytes >= c->threshold_bytes)
		return 0;
	int lead = 0;
	for (int r = 1; r < c->size; r++)
		if (live(c, r) > live(c, lead))
			lead = r;
	if (e >= live(c, lead))
		return 1; /* nobody submitted the next one yet */
	const struct fusion_item *next = item_at(c, lead, e);
	return fusion_fusable(first, next) &&
	       b->bytes + next->count * dtype_size(next->dtype) <= c->threshold_bytes;
}

/* Negotiates [i, end): buckets, signatures across ranks, learning. Holds
 * back a trailing bucket that may grow unless `hold` is 0. Returns the
 * positions consumed, or (size_t)-1 on a mismatch (err filled). */
static size_t negotiate(struct coord *c, struct plan_cache *pc, size_t i, size_t end, int hold,
			struct coord_exec *out, int *nout, char *err, size_t errlen)
{
	struct fusion_bucket *b = malloc((end - i) * sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "hvd: coordinator: out of memory");
		return (size_t)-1;
	}
	size_t nb = fusion_plan(item_at(c, 0, i), end - i, c->threshold_bytes, b), used = 0;
	for (size_t k = 0; k < nb; k++) {
		size_t first = i + b[k].first;
		if (k == nb - 1 && hold && may_grow(c, &(struct fusion_bucket){ first, b[k].count,
							b[k].bytes }, first + b[k].count))
			break;
		uint64_t sig = fusion_signature(item_at(c, 0, first), b[k].count);
		for (int r = 1; r < c->size; r++)
			if (fusion_signature(item_at(c, r, first), b[k].count) != sig) {
				describe_mismatch(c, first, b[k].count, err, errlen);
				free(b);
				return (size_t)-1;
			}
		struct coord_exec *x = &out[(*nout)++];
		*x = (struct coord_exec){ c->planned + first, (uint32_t)b[k].count, sig, -1, 0 };
		x->learn = pc && plan_cache_can_learn(pc, item_at(c, 0, first), b[k].count);
		if (x->learn && plan_cache_learn(pc, item_at(c, 0, first), (uint32_t)b[k].count) < 0) {
			snprintf(err, errlen, "hvd: plan cache: out of memory");
			free(b);
			return (size_t)-1;
		}
		used += b[k].count;
	}
	free(b);
	return used;
}

int coord_plan(struct coord *c, struct plan_cache *pc, int flush, struct coord_exec *out,
		   char *err, size_t errlen)
{
	size_t ready = coord_ready(c), i = 0;
	int n = 0;
	while (i < ready) {
		int64_t id = pc ? cached_start(c, i, ready) : -1;
		enum run_state st = id >= 0 ? cached_run(c, pc, i, id) : RUN_BROKEN;
		if (id >= 0 && st == RUN_COMPLETE) {
			const struct plan_entry *pe = plan_cache_entry(pc, id);
			out[n++] = (struct coord_exec){ c->planned + i, pe->count, pe->signature,
							(int32_t)id, 0 };
			i += pe->count;
			continue;
		}
		if (id >= 0 && st == RUN_PENDING && !flush)
			break; /* every rank is repeating it: wait for the rest */
		size_t end = i + 1;
		while (end < ready && !(pc && cached_start(c, end, ready) >= 0))
			end++;
		size_t used = negotiate(c, pc, i, end, !flush && end == ready, out, &n, err, errlen);
		if (used == (size_t)-1)
			return -1;
		i += used;
		if (i < end)
			break; /* a trailing bucket waits for more */
	}
	for (int r = 0; r < c->size; r++) /* the planned positions leave every queue */
		c->q[r].head += i;
	c->planned += i;
	return n;
}

double coord_oldest_wait(const struct coord *c, double now)
{
	size_t ready = coord_ready(c);
	double oldest = INFINITY; /* none waits */
	for (int r = 0; r < c->size; r++)
		if (live(c, r) > ready)
			oldest = fmin(oldest, c->q[r].meta[c->q[r].head + ready].t_submit);
	return oldest == INFINITY ? 0 : now - oldest;
}

int coord_describe_missing(const struct coord *c, char *out, size_t len, int *behind)
{
	int lead = 0;
	for (int r = 1; r < c->size; r++)
		if (live(c, r) > live(c, lead))
			lead = r;
	size_t lead_live = live(c, lead);
	size_t used = 0;
	int count = 0;
	if (len)
		out[0] = '\0';
	for (int r = 0; r < c->size; r++) {
		size_t have = live(c, r);
		if (behind)
			behind[r] = have < lead_live;
		if (have >= lead_live)
			continue;
		if (used < len)
			used += (size_t)snprintf(out + used, len - used, "%srank %d: [",
						 count ? "; " : "", r);
		for (size_t i = have; i < lead_live && i < have + 6 && used < len; i++)
			used += (size_t)snprintf(out + used, len - used, "%s%s", i > have ? ", " : "",
						 item_at(c, lead, i)->name);
		if (used < len)
			used += (size_t)snprintf(out + used, len - used, "%s]",
						 lead_live - have > 6 ? ", ..." : "");
		count++;
	}
	return count;
}
