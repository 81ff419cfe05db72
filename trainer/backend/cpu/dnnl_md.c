/* dnnl_md.c - md_t (dnnl_md.h) over oneDNN 2.x's value descriptors or
 * 3.x's handles. Under 3.x a process-wide table keeps one handle per
 * distinct descriptor (a few hundred for a model; never freed), found by
 * the descriptor's bytes. What it does not do: make primitives.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/dnnl_md.h"

uint64_t key_hash(const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

#if DNNL_VERSION_MAJOR >= 3

struct kept {
	uint64_t hash;
	md_t md;
	dnnl_memory_desc_t handle;
};

static struct {
	pthread_mutex_t lock;
	struct kept *items;
	size_t count, cap;
} table = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static uint64_t hash_md(const md_t *md)
{
	return key_hash(md, sizeof(*md));
}

static struct kept *find(const md_t *md, uint64_t h)
{
	for (size_t i = 0; i < table.count; i++)
		if (table.items[i].hash == h && !memcmp(&table.items[i].md, md, sizeof(*md)))
			return &table.items[i];
	return NULL;
}

static void copy_dims(dnnl_dims_t to, const_dnnl_memory_desc_t h, dnnl_query_t what, int n)
{
	const dnnl_dims_t *d = NULL;
	if (dnnl_memory_desc_query(h, what, &d) == dnnl_success && d)
		memcpy(to, *d, sizeof(dnnl_dim_t) * n);
}

/* The handle's fields in md (zeroed first). */
static void read_out(md_t *md, const_dnnl_memory_desc_t h)
{
	int n = 0, nblks = 0;
	memset(md, 0, sizeof(*md));
	if (!h || dnnl_memory_desc_query(h, dnnl_query_ndims_s32, &n) != dnnl_success ||
	    n <= 0 || n > DNNL_MAX_NDIMS)
		return;
	md->ndims = n;
	dnnl_memory_desc_query(h, dnnl_query_data_type, &md->data_type);
	dnnl_memory_desc_query(h, dnnl_query_format_kind, &md->format_kind);
	dnnl_memory_desc_query(h, dnnl_query_submemory_offset_s64, &md->offset0);
	copy_dims(md->dims, h, dnnl_query_dims, n);
	copy_dims(md->padded_dims, h, dnnl_query_padded_dims, n);
	copy_dims(md->padded_offsets, h, dnnl_query_padded_offsets, n);
	if (md->format_kind != dnnl_blocked)
		return;
	md_blocking_t *b = &md->format_desc.blocking;
	copy_dims(b->strides, h, dnnl_query_strides, n);
	if (dnnl_memory_desc_query(h, dnnl_query_inner_nblks_s32, &nblks) == dnnl_success &&
	    nblks > 0 && nblks <= DNNL_MAX_NDIMS) {
		b->inner_nblks = nblks;
		copy_dims(b->inner_blks, h, dnnl_query_inner_blks, nblks);
		copy_dims(b->inner_idxs, h, dnnl_query_inner_idxs, nblks);
	}
}

/* md := h's fields; the table keeps h (ours: made by a constructor) or a
 * clone of it (a primitive's). */
static int keep(md_t *md, const_dnnl_memory_desc_t h, int ours)
{
	read_out(md, h);
	if (md->ndims == 0) {
		if (ours)
			dnnl_memory_desc_destroy((dnnl_memory_desc_t)h);
		return h ? -1 : 0;
	}
	uint64_t hash = hash_md(md);
	int rc = 0;
	pthread_mutex_lock(&table.lock);
	if (find(md, hash)) {
		if (ours)
			dnnl_memory_desc_destroy((dnnl_memory_desc_t)h);
		goto out;
	}
	dnnl_memory_desc_t mine = (dnnl_memory_desc_t)h;
	if (!ours && dnnl_memory_desc_clone(&mine, h) != dnnl_success) {
		rc = -1;
		goto out;
	}
	if (table.count == table.cap) {
		size_t cap = table.cap ? 2 * table.cap : 256;
		struct kept *items = realloc(table.items, cap * sizeof(*items));
		if (!items) {
			dnnl_memory_desc_destroy(mine);
			rc = -1;
			goto out;
		}
		table.items = items;
		table.cap = cap;
	}
	table.items[table.count++] = (struct kept){ hash, *md, mine };
out:
	pthread_mutex_unlock(&table.lock);
	if (rc)
		memset(md, 0, sizeof(*md));
	return rc;
}

/* h: the handle a constructor made (status st). */
static int made(md_t *md, dnnl_status_t st, dnnl_memory_desc_t h)
{
	if (st != dnnl_success) {
		memset(md, 0, sizeof(*md));
		return -1;
	}
	return keep(md, h, 1);
}

int md_tag(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	   dnnl_format_tag_t tag)
{
	dnnl_memory_desc_t h = NULL;
	dnnl_status_t st = dnnl_memory_desc_create_with_tag(&h, ndims, dims, dt, tag);
	return made(md, st, h);
}

int md_strides(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	       const dnnl_dims_t strides)
{
	dnnl_memory_desc_t h = NULL;
	dnnl_status_t st = dnnl_memory_desc_create_with_strides(&h, ndims, dims, dt, strides);
	return made(md, st, h);
}

int md_submemory(md_t *md, const md_t *parent, const dnnl_dims_t dims,
		 const dnnl_dims_t offsets)
{
	dnnl_memory_desc_t h = NULL;
	md_native_t p = md_native(parent);
	dnnl_status_t st = p ? dnnl_memory_desc_create_submemory(&h, p, dims, offsets)
			     : dnnl_invalid_arguments;
	return made(md, st, h);
}

int md_permute(md_t *out, const md_t *in, const int *perm)
{
	dnnl_memory_desc_t h = NULL;
	md_native_t p = md_native(in);
	dnnl_status_t st = p ? dnnl_memory_desc_permute_axes(&h, p, perm) : dnnl_invalid_arguments;
	return made(out, st, h);
}

int md_from_native(md_t *md, md_native_t native)
{
	return keep(md, native, 0);
}

md_native_t md_native(const md_t *md)
{
	if (!md || md->ndims == 0)
		return NULL;
	uint64_t hash = hash_md(md);
	pthread_mutex_lock(&table.lock);
	struct kept *k = find(md, hash);
	md_native_t h = k ? k->handle : NULL;
	pthread_mutex_unlock(&table.lock);
	return h;
}

int md_native_ndims(md_native_t native)
{
	int n = 0;
	if (!native || dnnl_memory_desc_query(native, dnnl_query_ndims_s32, &n) != dnnl_success)
		return 0;
	return n;
}

int md_equal(const md_t *a, const md_t *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

size_t md_bytes(const md_t *md)
{
	md_native_t h = md_native(md);
	return h ? dnnl_memory_desc_get_size(h) : 0;
}

#else /* oneDNN 2.x: md_t is oneDNN's own struct */

static int made(md_t *md, dnnl_status_t st)
{
	if (st == dnnl_success)
		return 0;
	memset(md, 0, sizeof(*md));
	return -1;
}

int md_tag(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	   dnnl_format_tag_t tag)
{
	memset(md, 0, sizeof(*md));
	return made(md, dnnl_memory_desc_init_by_tag(md, ndims, dims, dt, tag));
}

int md_strides(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	       const dnnl_dims_t strides)
{
	memset(md, 0, sizeof(*md));
	return made(md, dnnl_memory_desc_init_by_strides(md, ndims, dims, dt, strides));
}

int md_submemory(md_t *md, const md_t *parent, const dnnl_dims_t dims,
		 const dnnl_dims_t offsets)
{
	md_t p = *parent;
	memset(md, 0, sizeof(*md));
	return made(md, dnnl_memory_desc_init_submemory(md, &p, dims, offsets));
}

int md_permute(md_t *out, const md_t *in, const int *perm)
{
	md_t p = *in;
	memset(out, 0, sizeof(*out));
	return made(out, dnnl_memory_desc_permute_axes(out, &p, perm));
}

int md_from_native(md_t *md, md_native_t native)
{
	if (native)
		*md = *native;
	else
		memset(md, 0, sizeof(*md));
	return 0;
}

md_native_t md_native(const md_t *md)
{
	return md && md->ndims ? md : NULL;
}

int md_native_ndims(md_native_t native)
{
	return native ? native->ndims : 0;
}

int md_equal(const md_t *a, const md_t *b)
{
	return dnnl_memory_desc_equal(a, b);
}

size_t md_bytes(const md_t *md)
{
	return md ? dnnl_memory_desc_get_size(md) : 0;
}

#endif
