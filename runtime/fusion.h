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

/* 64-bit FNV-1a over names, counts, dtypes, ops, kinds, roots. Allgather
 * counts are left out: they may differ between ranks. */
uint64_t fusion_signature(const struct fusion_item *items, size_t n);

/* Eight bytes of two names at the same place, x from the one whose end
 * decides (its NUL is in its array): 1 when they decide the compare
 * (*equal: whether the names are equal), 0 when both go on alike. The
 * lowest zero byte of x before the lowest differing byte means both
 * ended alike ((x - ones) & ~x & highs marks zero bytes; its lowest mark
 * is exact). */
static inline int fusion_name_word(uint64_t x, uint64_t y, int *equal)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t zero = (x - ones) & ~x & highs, diff = x ^ y;
	if (diff) {
		*equal = zero && __builtin_ctzll(zero) < __builtin_ctzll(diff);
		return 1;
	}
	*equal = 1;
	return zero != 0;
}

/* 1 when two NUL-terminated names in HVD_NAME_MAX-byte arrays are
 * equal, eight bytes at a time (fusion_name_word; both arrays are whole,
 * so no load leaves them; b is read only up to the word that holds a's
 * NUL). A call to strcmp was a fifth of a small tensor's submission. */
static inline int fusion_name_equal(const char *a, const char *b)
{
	for (size_t i = 0; i < HVD_NAME_MAX; i += 8) {
		uint64_t x, y;
		int equal;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (fusion_name_word(x, y, &equal))
			return equal;
	}
	return 1; /* not reached for terminated names */
}

/* 1 when two ranks' items describe the same collective. Inline, the
 * name last: every submission is compared with its cached item. */
static inline int fusion_item_matches(const struct fusion_item *a, const struct fusion_item *b)
{
	return a->dtype == b->dtype && a->op == b->op && a->kind == b->kind && a->root == b->root &&
	       (a->kind == FUSION_ALLGATHER || a->count == b->count) &&
	       fusion_name_equal(a->name, b->name);
}

/* "allreduce 'name' (float32 x10 sum)" into out. */
void fusion_item_describe(const struct fusion_item *it, char *out, size_t len);

const char *fusion_kind_name(enum fusion_kind k); /* "ALLREDUCE", ... */

#endif
