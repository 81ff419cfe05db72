/* pipeline.h - one fused allreduce bucket through the fusion buffer,
 * reduced in chunks of HVD_FUSION_CHUNK bytes: while chunk k is reduced,
 * chunk k+1 is copied in and chunk k-1 copied out (host backends: the
 * copies run in slices between polls of the reduction, which also
 * progress it; device backends: copies queued on a copy stream beside the
 * reductions' stream, ordered by events, the host never waiting in between).
 * Every tensor is copied once each way, as in one piece; every step is
 * elementwise, so the sums equal a one-piece run bit for bit wherever the
 * backend adds the ranks' values in the same order for both message sizes
 * (always with 2 ranks). The timeline shows each tensor's
 * MEMCPY_IN_FUSION_BUFFER, reduction and MEMCPY_OUT_FUSION_BUFFER.
 * What it does not do: plan buckets, check signatures, complete handles
 * (engine.c).
 */
#ifndef HVD_PIPELINE_H
#define HVD_PIPELINE_H

#include <stddef.h>

#include "engine/runtime.h"

struct pipeline_bucket {
	struct entry **es;       /* the bucket's tensors, in order */
	size_t n;
	enum hvd_dtype t;        /* the tensors' dtype */
	enum hvd_dtype wire;     /* in the buffer: t, or f32 where the backend cannot sum t */
	enum hvd_dtype squeeze;  /* HVD_COMPRESSION: f32 rounded through it around the sum; t = off */
	enum hvd_op op;          /* what the backend is asked for */
	char *buf;               /* the fusion buffer: total elements of wire */
	size_t total;
	int in_place;            /* buf is the tensors' own span: nothing to copy */
};

/* chunk_bytes 0 (or a bucket that fits one chunk): one piece; no piece
 * holds more than the backend's max_count elements. Returns 0 or an
 * hvd_status with w->err. */
int pipeline_allreduce(struct runtime *rt, const struct pipeline_bucket *b, size_t chunk_bytes,
		       const struct comm_wait *w);

#endif
