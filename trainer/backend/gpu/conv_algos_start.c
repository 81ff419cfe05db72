/* backend/gpu/conv_algos_start.c - the timed algorithms at create
 * (conv_algos.c chooses): before the layers are planned, rank 0 reads the
 * per-user cache for this device (a file it refuses is ignored in one
 * line and written anew); after, rank 0's choices at the largest batch
 * go to every rank (backend_share: the others planned with heuristics and
 * take rank 0's, checked), and rank 0 writes what it timed back to the
 * cache (a failure is one line, the run goes on). Under --conv-algorithms
 * heuristic nothing is read, timed or written, but the choices are still
 * sent: every rank makes the same collective calls, and a rank whose site
 * default differs still runs rank 0's algorithms.
 * What it does not do: choose, or read the file's text (gpu_algo_file.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_algo_file.h"
#include "backend/gpu/gpu_check.h"
#include "backend/gpu/gpu_internal.h"

/* The device as the cache file names it: GPU name, compute capability,
 * driver, cuDNN and CUDA runtime versions (printable ASCII only). */
static int device_identity(struct backend *b, char *out, size_t len, struct trainer_error *err)
{
	struct cudaDeviceProp p;
	int driver = 0, runtime = 0;

	GPU_CUDA(cudaGetDeviceProperties(&p, b->device));
	GPU_CUDA(cudaDriverGetVersion(&driver));
	GPU_CUDA(cudaRuntimeGetVersion(&runtime));
	p.name[sizeof(p.name) - 1] = '\0';
	for (char *c = p.name; *c; c++)
		if (*c < 0x20 || *c > 0x7e || *c == '|')
			*c = '?';
	snprintf(out, len, "%s|sm %d%d|driver %d|cuDNN %zu|CUDA runtime %d", p.name, p.major, p.minor,
		 driver, cudnnGetVersion(), runtime);
	return 0;
}

static int timing_here(const struct backend *b)
{
	return b->opt.conv_algorithms != CONV_ALGOS_HEURISTIC && b->opt.share.rank == 0;
}

int gpu_conv_algos_begin(struct backend *b, struct trainer_error *err)
{
	char why[512];

	b->budget = b->workspace_limit;
	b->timing = timing_here(b);
	if (!b->timing || !b->opt.algo_cache_dir)
		return 0;
	if (!(b->algo_file = malloc(sizeof(*b->algo_file))))
		return trainer_error_set(err, "gpu: out of host memory");
	if (device_identity(b, b->device_id, sizeof(b->device_id), err))
		return -1;
	gpu_algo_file_path(b->opt.algo_cache_dir, b->device_id, b->algo_path, sizeof(b->algo_path));
	if (gpu_algo_file_read(b->algo_path, b->device_id, b->algo_file, why, sizeof(why)) < 0) {
		fprintf(stderr, "chexnet: conv algorithm cache '%s': %s: ignored (timed again)\n",
			b->algo_path, why);
		gpu_algo_cache_init(b->algo_file);
		b->algo_file_dirty = 1;   /* replaced by what this run times */
	}
	return 0;
}

/* Rank 0's three choices per conv layer, as (algo, math, bytes) triples. */
#define TRIPLE 3

static void pack(const struct backend *b, int64_t *v)
{
	for (int i = 0, j = 0; i < b->m->desc.layer_count; i++) {
		const struct gpu_conv_state *c = b->layers[i].conv;
		const struct gpu_algo_choice *d[3] = { c ? &c->fwd : NULL, c ? &c->bwd_data : NULL,
						       c ? &c->bwd_filter : NULL };
		for (int k = 0; c && k < 3; k++, j += TRIPLE) {
			v[j] = d[k]->algo;
			v[j + 1] = d[k]->math_type;
			v[j + 2] = (int64_t)d[k]->workspace_bytes;
		}
	}
}

static int take(struct backend *b, struct gpu_algo_choice *d, const int64_t *v, int count,
		const char *layer, struct trainer_error *err)
{
	if (v[0] < 0 || v[0] >= count || v[1] < 0 || v[1] > 3 || v[2] < 0 ||
	    (uint64_t)v[2] > b->workspace_limit)
		return trainer_error_set(err, "gpu: conv '%s': rank 0's algorithm (%lld, math %lld, "
					 "%lld bytes) is not one this rank can run", layer,
					 (long long)v[0], (long long)v[1], (long long)v[2]);
	*d = (struct gpu_algo_choice){ .algo = (int)v[0], .math_type = (int)v[1],
				       .workspace_bytes = (size_t)v[2] };
	return 0;
}

/* Every rank but 0: rank 0's choices replace the heuristics' (and are
 * what later setups at this batch find in b->algos). */
static int unpack(struct backend *b, const int64_t *v, struct trainer_error *err)
{
	static const int counts[3] = { CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
		CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT };

	for (int i = 0, j = 0; i < b->m->desc.layer_count; i++) {
		struct gpu_layer *l = &b->layers[i];
		struct gpu_algo_choice *d[3];
		if (!l->conv)
			continue;
		d[0] = &l->conv->fwd, d[1] = &l->conv->bwd_data, d[2] = &l->conv->bwd_filter;
		for (int k = 0; k < 3; k++, j += TRIPLE) {
			if (take(b, d[k], v + j, counts[k], l->ml->name, err))
				return -1;
			gpu_conv_remember(b, l, (enum gpu_conv_dir)k, b->opt.max_batch, d[k]);
		}
	}
	return 0;
}

static int share(struct backend *b, struct trainer_error *err)
{
	size_t convs = 0;

	for (int i = 0; i < b->m->desc.layer_count; i++)
		convs += b->layers[i].conv != NULL;
	size_t bytes = convs * 3 * TRIPLE * sizeof(int64_t);
	int64_t *v = calloc(convs * 3 * TRIPLE + 1, sizeof(int64_t));
	if (!v)
		return trainer_error_set(err, "gpu: out of host memory");
	if (b->opt.share.rank == 0)
		pack(b, v);
	int rc = b->opt.share.broadcast(b->opt.share.ctx, b, v, bytes);
	if (rc)
		trainer_error_set(err, "gpu: conv algorithms: rank 0's choices did not arrive");
	else if (b->opt.share.rank != 0)
		rc = unpack(b, v, err);
	free(v);
	return rc;
}

int gpu_conv_algos_end(struct backend *b, struct trainer_error *err)
{
	char why[512];

	b->timing = 0;   /* later batch sizes: heuristics */
	if (b->opt.share.broadcast && share(b, err))   /* every mode: rank 0's decides */
		return -1;
	if (b->algo_file && b->algo_file_dirty &&
	    gpu_algo_file_write(b->opt.algo_cache_dir, b->algo_path, b->algo_file, b->device_id, why,
				sizeof(why)))
		fprintf(stderr, "chexnet: conv algorithm cache: %s: not kept (timed again next run)\n",
			why);
	return 0;
}
