/* dnnl_md.h - the cpu backend's memory descriptor md_t, the same plain
 * value under oneDNN 2.x and 3.x: copied, compared byte for byte, its
 * dims, strides and blocks read in oneDNN 2.x's blocked form.
 *
 * Under 2.x md_t is oneDNN's own struct. Under 3.x oneDNN's descriptor is
 * an opaque handle: md_t holds that handle's fields read out, and
 * md_native() finds the handle again (every md_t is made by this file's
 * constructors or read from a primitive here, and each distinct one keeps
 * its handle for the life of the process). Nothing edits an md_t's
 * fields: a layout is made by a constructor. What this does not do: make
 * primitives (dnnl_op.h) or know any tensor.
 */
#ifndef HVD_TRAINER_CPU_DNNL_MD_H
#define HVD_TRAINER_CPU_DNNL_MD_H

#include <stddef.h>
#include <stdint.h>
#include <oneapi/dnnl/dnnl.h>

#if DNNL_VERSION_MAJOR >= 3
/* Field names as in 2.x's struct; laid out without padding bytes, so
 * equal descriptors are equal bytes. */
typedef struct {
	dnnl_dims_t strides, inner_blks, inner_idxs;
	dnnl_dim_t inner_nblks;
} md_blocking_t;

typedef struct {
	int ndims;
	dnnl_data_type_t data_type;
	dnnl_format_kind_t format_kind;
	int zero;                       /* always 0 */
	dnnl_dims_t dims, padded_dims, padded_offsets;
	dnnl_dim_t offset0;
	struct { md_blocking_t blocking; } format_desc;
} md_t;

typedef const_dnnl_memory_desc_t md_native_t;
#else
typedef dnnl_memory_desc_t md_t;
typedef dnnl_blocking_desc_t md_blocking_t;
typedef const dnnl_memory_desc_t *md_native_t;
#endif

/* Constructors; each returns 0, or -1 with md zeroed (ndims 0). */
int md_tag(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	   dnnl_format_tag_t tag);
int md_strides(md_t *md, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
	       const dnnl_dims_t strides);
int md_submemory(md_t *md, const md_t *parent, const dnnl_dims_t dims,
		 const dnnl_dims_t offsets);
/* out's logical axis perm[i] is in's axis i (oneDNN's permute_axes). */
int md_permute(md_t *out, const md_t *in, const int *perm);
/* Read a descriptor a primitive reports (NULL or empty: ndims 0). */
int md_from_native(md_t *md, md_native_t native);

/* oneDNN's descriptor for md: NULL for ndims 0 or one not made here. */
md_native_t md_native(const md_t *md);
/* Dimensions of a descriptor a primitive reports (0: none). */
int md_native_ndims(md_native_t native);

int md_equal(const md_t *a, const md_t *b);
size_t md_bytes(const md_t *md);

/* FNV-1a of n bytes: the lookup hash of this file's table and of the
 * primitive cache's keys (not a checksum, not keyed). */
uint64_t key_hash(const void *bytes, size_t n);

#endif
