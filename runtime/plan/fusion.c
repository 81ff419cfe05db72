/* fusion.c - see fusion.h: bucket planning and bucket signatures. */
#include "plan/fusion.h"

#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

int fusion_fusable(const struct fusion_item *a, const struct fusion_item *b)
{
	return a->kind == FUSION_ALLREDUCE && b->kind == FUSION_ALLREDUCE &&
	       a->dtype == b->dtype && a->op == b->op;
}

size_t fusion_plan(const struct fusion_item *items, size_t n,
		   uint64_t threshold_bytes, struct fusion_bucket *out)
{
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = items[i].count * dtype_size(items[i].dtype);
		struct fusion_bucket *last = nb ? &out[nb - 1] : NULL;
		int joins = last && threshold_bytes > 0 &&
			    fusion_fusable(&items[last->first], &items[i]) &&
			    last->bytes + bytes <= threshold_bytes;
		if (joins) {
			last->count++;
			last->bytes += bytes;
			continue;
		}
		out[nb++] = (struct fusion_bucket){ i, 1, bytes };
	}
	return nb;
}

uint64_t fusion_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t fusion_sign(uint64_t h, const struct fusion_item *it)
{
	h = fusion_hash(h, it->name, strlen(it->name) + 1);
	uint64_t count = it->kind == FUSION_ALLGATHER ? 0 : it->count;
	h = fusion_hash(h, &count, sizeof(count));
	unsigned char small[3] = { it->dtype, it->op, it->kind };
	h = fusion_hash(h, small, sizeof(small));
	return fusion_hash(h, &it->root, sizeof(it->root));
}

uint64_t fusion_signature(const struct fusion_item *items, size_t n)
{
	uint64_t h = FUSION_HASH_START;
	for (size_t i = 0; i < n; i++)
		h = fusion_sign(h, &items[i]);
	return h;
}

/* By fusion_kind: the timeline's phase, and the word in messages. */
static const char *const kind_names[][2] = { { "ALLREDUCE", "allreduce" },
	{ "BROADCAST", "broadcast" }, { "ALLGATHER", "allgather" }, { "BARRIER", "barrier" } };

const char *fusion_kind_name(enum fusion_kind k)
{
	return (unsigned)k < 4 ? kind_names[k][0] : "?";
}

void fusion_item_describe(const struct fusion_item *it, char *out, size_t len)
{
	const char *kind = it->kind < 4 ? kind_names[it->kind][1] : "?";
	const char *op = it->kind != FUSION_ALLREDUCE ? "" : it->op == HVD_AVERAGE ? " average" : " sum";
	if (it->kind == FUSION_BARRIER)
		snprintf(out, len, "barrier '%s'", it->name);
	else
		snprintf(out, len, "%s '%s' (%s x%llu%s)", kind, it->name, dtype_name(it->dtype),
			 (unsigned long long)it->count, op);
}
