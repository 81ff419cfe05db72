/* data/load/loader.h - the training/evaluation input pipeline: records in, uint8
 * batches out, prepared by worker threads ahead of the trainer (P1).
 *
 * Sources: a directory written by `chexnet pack` (fixed-size records in
 * shards, recognised by its index file) or, in direct mode, an NIH
 * ChestX-ray14 folder (Data_Entry CSV + lists + images), decoded and resized
 * to the stored size in the workers. Both give the same records in the same
 * order, so a packed and a direct run see identical batches.
 *
 * Order (the whole contract the end-to-end tests rely on):
 *  - Training: epoch e is a permutation of all N training records seeded by
 *    (seed, e), cut into blocks of B positions dealt to ranks in turn. The
 *    epoch is cut to U = floor(N / (R*B*K)) * R*B*K positions (the rest is
 *    dropped), so every rank runs U/(R*B) micro-batches. Rank r's
 *    micro-batch j holds positions (j*R + r)*B + t, t = 0..B-1 (the same
 *    images as micro-batch j*R + r of one rank: batch norm sees the same
 *    batches whatever R); the union over ranks of micro-batch j is
 *    positions [j*R*B, (j+1)*R*B), and optimizer step s covers positions
 *    [s*R*B*K, (s+1)*R*B*K): the same records for every R and K with the
 *    same R*K*B. Augmentation (crop offset, flip) is seeded by (seed, e, p),
 *    never by rank or thread, so batches are identical whatever the thread
 *    count.
 *  - Evaluation (val, test): identity order, no cut: every record is read
 *    exactly once across ranks; every rank runs ceil(N / (R*B)) batches;
 *    the valid images are a prefix of the batch (batch.count), the rest is
 *    zero padding to be masked out of the metrics.
 *  - data_loader_next() returns 0 at the end of an epoch (or of the
 *    evaluation pass); the next call starts the following epoch (evaluation:
 *    the same pass again). Workers are already preparing it: the pipeline is
 *    never drained between epochs (P5).
 *  - Resume: start_epoch/start_step put the loader exactly where a run that
 *    stopped there would have continued.
 *
 * Batches are uint8 (normalisation is the backend's first step, P3), owned
 * by the loader and reused (pinned when the backend passes an allocator,
 * P4); hand each one back with data_loader_release().
 * What this is not: the shard format (data/pack/shard.h), image decoding
 * (image_decode.h), or the trainer's use of batches.
 */
#ifndef HVD_TRAINER_DATA_LOADER_H
#define HVD_TRAINER_DATA_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "base/batch.h"
#include "data/image/image_resize.h"

enum data_split { DATA_TRAIN = 0, DATA_VAL = 1, DATA_TEST = 2 };

enum data_crop {
	DATA_CROP_RANDOM = 0,   /* random size x size window of the stored image */
	DATA_CROP_CENTER,       /* centred window (evaluation) */
	DATA_CROP_RESIZE,       /* area-resize the whole stored image to size */
};

struct data_loader_config {
	const char *dir;        /* shard dir (has index) or NIH dir (direct mode) */
	enum data_split split;
	int rank, world_size;   /* R = world_size, 0 <= rank < R */
	int batch;              /* B: images per rank per micro-batch */
	int accumulation;       /* K: micro-batches per optimizer step (>= 1) */
	int size;               /* output image side (e.g. 224) */
	enum data_crop crop;
	int flip;               /* random horizontal flip (training) */
	uint64_t seed;
	int threads;            /* workers; 0 = data_loader_default_threads() */
	int prefetch;           /* batches prepared ahead; 0 = max(2, 2 * threads) */
	/* the view (a checkpoint's, cmd/checkpoint_defaults.h) */
	int stored_size;        /* side images are resized to before the crop;
				 * 0 = a pack's own, a folder's image_stored_side(size),
				 * 256 for 224; a pack at another side is resized to it */
	enum image_aspect aspect;  /* folder: non-square images padded (default) or squashed */
	/* direct mode only (a pack fixes it in its index) */
	double val_fraction;    /* share of train_val patients for val; < 0 = 0.1 */
	/* pixel buffers (P4): a GPU backend passes a pinned-memory allocator
	 * (e.g. cudaMallocHost/cudaFreeHost); NULL = malloc/free */
	void *(*alloc_pixels)(size_t bytes, void *ctx);
	void (*free_pixels)(void *p, void *ctx);
	void *alloc_ctx;
	/* a stop request (SIGTERM): polled every 0.5 s while waiting for a
	 * batch; nonzero ends the wait with -1 ("interrupted"); NULL = never */
	int (*interrupted)(void);
	/* resume */
	int start_epoch;        /* epoch of the first batch */
	long start_step;        /* optimizer step within start_epoch (K micro-batches each) */
};

struct data_loader;

/* Defaults for everything but dir, split, rank, world_size, batch, size. */
void data_loader_config_init(struct data_loader_config *cfg);

/* max(1, allowed CPUs / 4): the `--loader-threads` default (P6). */
int data_loader_default_threads(void);

/* Opens the source, checks the configuration and starts the workers.
 * Returns NULL with a one-line message in err (`chexnet: ...`). */
struct data_loader *data_loader_open(const struct data_loader_config *cfg,
				     char *err, size_t err_bytes);

/* Records in the split (N), and micro-batches per rank per epoch. */
size_t data_loader_records(const struct data_loader *dl);
long data_loader_batches_per_epoch(const struct data_loader *dl);

/* The next batch of this rank: 1 and *out set; 0 at the end of the epoch
 * (*out NULL, the next call starts the next one); -1 on error (a decode or
 * CRC failure in a worker), message in data_loader_error(). The trainer may
 * hold up to prefetch batches at once (the ring has prefetch + 1 slots). */
int data_loader_next(struct data_loader *dl, struct batch **out);
void data_loader_release(struct data_loader *dl, struct batch *b);
const char *data_loader_error(const struct data_loader *dl);

/* Seconds the last data_loader_next() waited for its batch, and the total
 * since open: the trainer's "data wait %" (O1). */
double data_loader_last_wait(const struct data_loader *dl);
double data_loader_total_wait(const struct data_loader *dl);

/* Position of the next batch data_loader_next() returns: epoch, optimizer
 * step within it, micro-batch within it. Save (epoch, step) in checkpoints
 * at step boundaries; start_epoch/start_step replay from there. */
void data_loader_position(const struct data_loader *dl, int *epoch,
			  long *step, long *micro);

/* Stops the workers and frees everything (batches still held included). */
void data_loader_close(struct data_loader *dl);

/* Records and positives per class of one split of dir (a pack: from its
 * index, without reading shards; a folder: from its label files), e.g. for
 * class weights. val_fraction as in the config (direct mode; < 0 = 0.1). */
int data_split_label_counts(const char *dir, int split, double val_fraction,
			    size_t positives[CHEXNET_CLASSES], size_t *records,
			    char *err, size_t err_bytes);

#endif
