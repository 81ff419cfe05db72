/* coord.h - the coordinator's bookkeeping (rank 0): what each rank has
 * submitted, which positions every rank has reached, the bucket plan for
 * them, the cross-rank signature check, and the stall inspector's view
 * (who is missing which tensors). Pure: no sockets, no clocks (times are
 * passed in), unit-tested directly.
 * What it does not do: send anything (control.c carries its decisions).
 */
#ifndef HVD_COORD_H
#define HVD_COORD_H

#include <stddef.h>
#include <stdint.h>

#include "plan/fusion.h"
#include "plan/plan_cache.h"

/* A submission's when and where, beside its item. */
struct coord_meta {
	double t_submit;
	struct plan_tag tag;       /* where it stands in the plan cache */
};

struct coord_queue {
	struct fusion_item *items; /* contiguous: fusion_plan and signatures read them */
	struct coord_meta *meta;
	size_t head, len, cap; /* live items are [head, len) */
};

struct coord {
	int size;
	uint64_t planned;          /* positions already handed out */
	uint64_t threshold_bytes;
	struct coord_queue *q;     /* one per rank */
};

struct coord_exec {
	uint64_t first;            /* position of the bucket's first tensor */
	uint32_t count;            /* tensors in the bucket */
	uint64_t signature;        /* fusion_signature of the bucket */
	int32_t cached;            /* plan cache id when every rank repeated it, else -1 */
	uint8_t learn;             /* negotiated and learnt by the plan cache (EXEC flag) */
};

int coord_init(struct coord *c, int size, uint64_t threshold_bytes);
void coord_free(struct coord *c);
/* Records rank's next submission, with where it stands in the rank's
 * plan cache (tag.id -1: not there). Returns its position, or -1 (memory). */
int64_t coord_submit(struct coord *c, int rank, const struct fusion_item *it,
		     struct plan_tag tag, double now);
/* 1 when no rank has an unplanned submission. */
int coord_idle(const struct coord *c);
/* Positions every rank has submitted but not yet planned. */
size_t coord_ready(const struct coord *c);
/* Plans what may start now into out (room for coord_ready() entries),
 * event-driven, with the plan cache pc (NULL: none, every bucket
 * negotiated):
 * - a cached bucket starts once every rank has submitted all of it with
 *   the same cache tags: no per-tensor comparison, out.cached = its id;
 * - tensors not repeated by every rank are negotiated: the same tensors
 *   in the same order on every rank, else a message naming the differing
 *   tensors and ranks in err; they are learnt into pc (out.learn) when they are
 *   allreduces; a trailing bucket that could still grow, and a cached one
 *   not yet complete, wait for more unless `flush` (the caller's
 *   HVD_CYCLE_TIME_MS has passed since coord_head_ready_time()).
 * Returns the bucket count (0 = wait), or -1. */
int coord_plan(struct coord *c, struct plan_cache *pc, int flush, struct coord_exec *out,
		   char *err, size_t errlen);
/* When the oldest unplanned position became ready (its last rank
 * submitted it), -1 when none is ready. */
double coord_head_ready_time(const struct coord *c);
/* Seconds the oldest not-yet-ready tensor has waited for some rank
 * (0 when nothing waits). */
double coord_oldest_wait(const struct coord *c, double now);
/* "rank 1: [a, b, ...]; rank 3: [...]" for ranks behind the furthest
 * rank, at most 6 names each. Returns how many ranks are behind;
 * `behind` (size entries, may be NULL) gets 1 for each. */
int coord_describe_missing(const struct coord *c, char *out, size_t len, int *behind);

#endif
