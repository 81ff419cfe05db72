/* fusion.h - tensor fusion (Horovod's idea, practice C1/C5): which submitted
 * tensors share one collective, and the signature that every rank checks
 * for each bucket. Pure functions over plain arrays, unit-tested directly.
 * What it does not do: copy data or talk to other ranks (engine.c, coord.c).
 */
#ifndef HVD_FUSION_H
#define HVD_FUSION_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hvd.h"

enum fusion_kind { FUSION_ALLREDUCE = 0, FUSION_BROADCAST, FUSION_ALLGATHER, FUSION_BARRIER };

/* The name last: a submission compares the fixed fields first, and with
 * them the start of a short name is on the same cache line. */
struct fusion_item {
	uint64_t count;      /* elements */
	uint8_t dtype;       /* enum hvd_dtype */
	uint8_t op;          /* enum hvd_op */
	uint8_t kind;        /* enum fusion_kind */
	int32_t root;        /* broadcast root, else 0 */
	char name[HVD_NAME_MAX];
};

struct fusion_bucket {
	size_t first;        /* index of the first item */
	size_t count;        /* number of items */
	uint64_t bytes;      /* payload bytes (items' own dtype) */
};

/* Splits items[0..n) into consecutive buckets: allreduces of the same dtype
 * and op share a bucket while its bytes stay <= threshold_bytes; a tensor
 * larger than the threshold, a threshold of 0, or any non-allreduce gets a
 * bucket of its own. `out` must have room for n buckets. Returns the count. */
size_t fusion_plan(const struct fusion_item *items, size_t n,
		   uint64_t threshold_bytes, struct fusion_bucket *out);
/* 1 when b may share a's bucket: both allreduces of one dtype and op. */
int fusion_fusable(const struct fusion_item *a, const struct fusion_item *b);

/* 64-bit FNV-1a over names, counts, dtypes, ops, kinds, roots. Allgather
 * counts are left out: they may differ between ranks. */
uint64_t fusion_signature(const struct fusion_item *items, size_t n);
/* The signature's hash h carried over one more item (h starts at
 * FUSION_HASH_START): items held apart sign without a copy. */
uint64_t fusion_sign(uint64_t h, const struct fusion_item *it);
/* FNV-1a of len bytes, continuing from h (FUSION_HASH_START to begin):
 * the signature's hash, and the plan cache's for names. */
#define FUSION_HASH_START 0xcbf29ce484222325ull
uint64_t fusion_hash(uint64_t h, const void *data, size_t len);

/* 1 when two ranks' items describe the same collective. Inline, the
 * name last: every submission is compared with its cached item. */
static inline int fusion_item_matches(const struct fusion_item *a, const struct fusion_item *b)
{
	return a->dtype == b->dtype && a->op == b->op && a->kind == b->kind && a->root == b->root &&
	       (a->kind == FUSION_ALLGATHER || a->count == b->count) &&
	       strcmp(a->name, b->name) == 0;
}

/* "allreduce 'name' (float32 x10 sum)" into out. */
void fusion_item_describe(const struct fusion_item *it, char *out, size_t len);

const char *fusion_kind_name(enum fusion_kind k); /* "ALLREDUCE", ... */

#endif
