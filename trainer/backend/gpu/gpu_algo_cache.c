/* gpu_algo_cache.c - the per-shape convolution algorithm table (see
 * gpu_algo_cache.h): FNV-1a over the key's fields, open addressing with
 * linear probing. Keys are compared field by field (never memcmp: no
 * padding bytes take part). What it does not do: evict.
 */
#include <string.h>

#include "backend/gpu/gpu_algo_cache.h"

void gpu_algo_cache_init(struct gpu_algo_cache *c)
{
	memset(c, 0, sizeof(*c));
}

static uint64_t mix(uint64_t h, int64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (uint64_t)(v >> (8 * i)) & 0xff;
		h *= 1099511628211ull;
	}
	return h;
}

uint64_t gpu_conv_key_hash(const struct gpu_conv_key *k)
{
	const int64_t fields[] = { k->dir, k->dtype, k->math, k->layout, k->any, k->n, k->c, k->h,
				   k->w, k->k, k->r, k->stride, k->pad, k->x_image_stride,
				   k->y_image_stride, k->budget };
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		h = mix(h, fields[i]);
	return h;
}

int gpu_conv_key_equal(const struct gpu_conv_key *a, const struct gpu_conv_key *b)
{
	return a->dir == b->dir && a->dtype == b->dtype && a->math == b->math &&
	       a->layout == b->layout && a->any == b->any && a->budget == b->budget &&
	       a->n == b->n && a->c == b->c &&
	       a->h == b->h && a->w == b->w && a->k == b->k && a->r == b->r &&
	       a->stride == b->stride && a->pad == b->pad &&
	       a->x_image_stride == b->x_image_stride && a->y_image_stride == b->y_image_stride;
}

/* The slot holding k, or the empty slot where it would go, or -1 (full). */
static int probe(const struct gpu_algo_cache *c, const struct gpu_conv_key *k)
{
	size_t start = gpu_conv_key_hash(k) % GPU_ALGO_CACHE_SLOTS;

	for (size_t i = 0; i < GPU_ALGO_CACHE_SLOTS; i++) {
		size_t s = (start + i) % GPU_ALGO_CACHE_SLOTS;
		if (!c->slot[s].used || gpu_conv_key_equal(&c->slot[s].key, k))
			return (int)s;
	}
	return -1;
}

const struct gpu_algo_choice *gpu_algo_cache_find(struct gpu_algo_cache *c,
						  const struct gpu_conv_key *k)
{
	int s = probe(c, k);

	if (s >= 0 && c->slot[s].used) {
		c->hits++;
		return &c->slot[s].choice;
	}
	c->misses++;
	return NULL;
}

int gpu_algo_cache_put(struct gpu_algo_cache *c, const struct gpu_conv_key *k,
		       const struct gpu_algo_choice *choice)
{
	int s = probe(c, k);

	if (s < 0)
		return -1;
	if (!c->slot[s].used) {
		c->slot[s].used = 1;
		c->slot[s].key = *k;
		c->count++;
	}
	c->slot[s].choice = *choice;
	return 0;
}
