/* coord.c - see coord.h. Every rank submits in the same order, so the
 * n-th submission of each rank must describe the same collective; a
 * position is ready when every rank has reached it. */
#include "coord.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int coord_init(struct coord *c, int size, uint64_t threshold_bytes)
{
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->threshold_bytes = threshold_bytes;
	c->q = calloc((size_t)size, sizeof(*c->q));
	return c->q ? 0 : -1;
}

void coord_free(struct coord *c)
{
	for (int r = 0; c->q && r < c->size; r++) {
		free(c->q[r].items);
		free(c->q[r].t_submit);
	}
	free(c->q);
	memset(c, 0, sizeof(*c));
}

static int queue_reserve(struct coord_queue *q)
{
	if (q->head > 0 && q->head * 2 >= q->len) { /* compact */
		size_t live = q->len - q->head;
		memmove(q->items, q->items + q->head, live * sizeof(*q->items));
		memmove(q->t_submit, q->t_submit + q->head, live * sizeof(*q->t_submit));
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
	double *t = realloc(q->t_submit, cap * sizeof(*t));
	if (!t)
		return -1;
	q->t_submit = t;
	q->cap = cap;
	return 0;
}

int64_t coord_submit(struct coord *c, int rank, const struct fusion_item *it, double now)
{
	struct coord_queue *q = &c->q[rank];
	if (queue_reserve(q))
		return -1;
	q->items[q->len] = *it;
	q->t_submit[q->len] = now;
	q->len++;
	return (int64_t)(c->planned + (q->len - q->head) - 1);
}

size_t coord_ready(const struct coord *c)
{
	size_t ready = (size_t)-1;
	for (int r = 0; r < c->size; r++) {
		size_t live = c->q[r].len - c->q[r].head;
		if (live < ready)
			ready = live;
	}
	return c->size ? ready : 0;
}

const struct fusion_item *coord_item(const struct coord *c, int rank, uint64_t position)
{
	const struct coord_queue *q = &c->q[rank];
	if (position < c->planned || position - c->planned >= q->len - q->head)
		return NULL;
	return &q->items[q->head + (position - c->planned)];
}

static void describe_mismatch(const struct coord *c, size_t first, size_t count,
			      char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "hvd: tensor mismatch: ");
	int listed = 0;
	for (size_t i = first; i < first + count && listed < 6; i++) {
		const struct fusion_item *ref = &c->q[0].items[c->q[0].head + i];
		for (int r = 1; r < c->size && listed < 6; r++) {
			const struct fusion_item *it = &c->q[r].items[c->q[r].head + i];
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

static void pop_ready(struct coord *c, size_t n)
{
	for (int r = 0; r < c->size; r++)
		c->q[r].head += n;
	c->planned += n;
}

int coord_plan(struct coord *c, struct coord_exec *out, char *err, size_t errlen)
{
	size_t ready = coord_ready(c);
	if (!ready)
		return 0;
	struct fusion_bucket *b = malloc(ready * sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "hvd: coordinator: out of memory");
		return -1;
	}
	const struct fusion_item *ref = &c->q[0].items[c->q[0].head];
	size_t nb = fusion_plan(ref, ready, c->threshold_bytes, b);
	for (size_t i = 0; i < nb; i++) {
		uint64_t sig = fusion_signature(ref + b[i].first, b[i].count);
		for (int r = 1; r < c->size; r++) {
			const struct fusion_item *its = &c->q[r].items[c->q[r].head + b[i].first];
			if (fusion_signature(its, b[i].count) != sig) {
				describe_mismatch(c, b[i].first, b[i].count, err, errlen);
				free(b);
				return -1;
			}
		}
		out[i].first = c->planned + b[i].first;
		out[i].count = (uint32_t)b[i].count;
		out[i].signature = sig;
	}
	free(b);
	pop_ready(c, ready);
	return (int)nb;
}

double coord_oldest_wait(const struct coord *c, double now)
{
	size_t ready = coord_ready(c);
	double oldest = -1;
	for (int r = 0; r < c->size; r++) {
		const struct coord_queue *q = &c->q[r];
		if (q->len - q->head > ready) {
			double t = q->t_submit[q->head + ready];
			if (oldest < 0 || t < oldest)
				oldest = t;
		}
	}
	return oldest < 0 ? 0 : now - oldest;
}

int coord_describe_missing(const struct coord *c, char *out, size_t len, int *behind)
{
	int lead = 0;
	for (int r = 1; r < c->size; r++)
		if (c->q[r].len - c->q[r].head > c->q[lead].len - c->q[lead].head)
			lead = r;
	size_t lead_live = c->q[lead].len - c->q[lead].head;
	size_t used = 0;
	int count = 0;
	if (len)
		out[0] = '\0';
	for (int r = 0; r < c->size; r++) {
		size_t live = c->q[r].len - c->q[r].head;
		if (behind)
			behind[r] = live < lead_live;
		if (live >= lead_live)
			continue;
		if (used < len)
			used += (size_t)snprintf(out + used, len - used, "%srank %d: [",
						 count ? "; " : "", r);
		for (size_t i = live; i < lead_live && i < live + 6 && used < len; i++)
			used += (size_t)snprintf(out + used, len - used, "%s%s", i > live ? ", " : "",
						 c->q[lead].items[c->q[lead].head + i].name);
		if (used < len)
			used += (size_t)snprintf(out + used, len - used, "%s]",
						 lead_live - live > 6 ? ", ..." : "");
		count++;
	}
	return count;
}
