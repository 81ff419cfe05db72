/* data/load/loader.c - worker threads fill a ring of reusable batch slots in
 * sequence order; the trainer takes them in the same order (P1, P2's
 * parallel map-and-batch + prefetch, P5: the sequence runs across epochs).
 *
 * Batch number s of this rank (counted from the start position) is filled
 * by whichever worker claims it, into slot s mod slots, once the trainer
 * has released what that slot held; its content depends only on (seed, s),
 * so thread count and timing change nothing. What it does not do: read
 * files (data/load/source.c) or decide the order (data/load/order.c).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "data/sets/labels.h"
#include "data/load/loader.h"
#include "data/load/order.h"
#include "data/load/source.h"
#include "data/image/image_resize.h"

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_HELD };

struct slot {
	struct batch b;
	enum slot_state state;
	long seq;
	int failed;
	char err[512];
};

struct data_loader {
	struct data_loader_config cfg;
	struct data_source src;
	struct data_plan plan;
	long start_abs;             /* absolute micro-batch of sequence 0 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot *slots;
	int slot_count;
	pthread_t *threads;
	int thread_count;
	long next_claim, next_take;
	int stop;
	int end_reported;           /* the last next() returned 0 */
	double last_wait, total_wait;
	char err[512];
};

void data_loader_config_init(struct data_loader_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->accumulation = 1;
	cfg->world_size = 1;
	cfg->size = 224;
	cfg->val_fraction = -1;
}

int data_loader_default_threads(void)
{
	cpu_set_t set;
	int cpus = 1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = CPU_COUNT(&set);
	return cpus / 4 > 1 ? cpus / 4 : 1;
}

/* Per-worker buffers. */
struct scratch {
	uint8_t *source;            /* data_source scratch */
	uint8_t *stored;            /* (S, S) */
	uint8_t *resized;           /* (size, size) */
};

/* One image of the batch: stored S x S -> size x size, cropped or resized,
 * maybe flipped, using the position's augmentation bits. */
static void transform(const struct data_loader *dl, struct scratch *sc, uint64_t bits, uint8_t *dst)
{
	const int S = dl->src.size, side = dl->cfg.size;
	int flip = dl->cfg.flip && (bits >> 63);
	switch (dl->cfg.crop) {
	case DATA_CROP_RANDOM: {
		int span = S - side + 1;
		int x = (int)((bits & 0xFFFFF) % (uint64_t)span);
		int y = (int)(((bits >> 20) & 0xFFFFF) % (uint64_t)span);
		image_crop(sc->stored, S, x, y, side, flip, dst);
		break;
	}
	case DATA_CROP_CENTER:
		image_crop_centre(sc->stored, S, side, flip, dst);
		break;
	case DATA_CROP_RESIZE:
		image_resize_area(sc->stored, S, S, sc->resized, side, side);
		image_crop(sc->resized, side, 0, 0, side, flip, dst);
		break;
	}
}

static int fill_batch(struct data_loader *dl, struct scratch *sc, struct slot *sl)
{
	const struct data_plan *p = &dl->plan;
	long abs = dl->start_abs + sl->seq;
	int epoch = (int)(abs / p->micro_per_epoch);
	long micro = abs % p->micro_per_epoch;
	const size_t pixels = (size_t)dl->cfg.size * dl->cfg.size;
	struct batch *b = &sl->b;
	b->count = 0;
	for (int t = 0; t < b->capacity; t++) {
		uint64_t pos = data_plan_position(p, dl->cfg.rank, micro, t);
		int64_t rec = data_plan_record(p, dl->cfg.seed, epoch, pos);
		uint8_t *dst = b->pixels + (size_t)t * pixels;
		if (rec < 0) {  /* eval padding: valid images are a prefix */
			memset(dst, 0, pixels);
			memset(b->labels + t * CHEXNET_CLASSES, 0, CHEXNET_CLASSES * sizeof(float));
			b->index[t] = UINT32_MAX;
			b->patient[t] = UINT32_MAX;
			continue;
		}
		uint16_t labels = 0;
		if (data_source_read(&dl->src, (size_t)rec, sc->stored, &labels, &b->patient[t],
				     sc->source, sl->err, sizeof(sl->err)) != 0)
			return -1;
		transform(dl, sc, data_order_aug_bits(dl->cfg.seed, epoch, pos), dst);
		data_labels_to_floats(labels, b->labels + t * CHEXNET_CLASSES);
		b->index[t] = (uint32_t)rec;
		b->count++;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct data_loader *dl = arg;
	struct scratch sc = {
		.source = malloc(data_source_scratch_bytes(&dl->src)),
		.stored = malloc((size_t)dl->src.size * dl->src.size),
		.resized = malloc((size_t)dl->cfg.size * dl->cfg.size),
	};
	pthread_mutex_lock(&dl->mu);
	while (!dl->stop) {
		struct slot *sl = &dl->slots[dl->next_claim % dl->slot_count];
		if (sl->state != SLOT_FREE) {
			pthread_cond_wait(&dl->cv, &dl->mu);
			continue;
		}
		sl->seq = dl->next_claim++;
		sl->state = SLOT_FILLING;
		pthread_mutex_unlock(&dl->mu);
		int failed = (!sc.source || !sc.stored || !sc.resized);
		if (failed)
			snprintf(sl->err, sizeof(sl->err), "chexnet: loader: out of memory");
		else
			failed = fill_batch(dl, &sc, sl) != 0;
		pthread_mutex_lock(&dl->mu);
		sl->failed = failed;
		sl->state = SLOT_READY;
		pthread_cond_broadcast(&dl->cv);
	}
	pthread_mutex_unlock(&dl->mu);
	free(sc.source);
	free(sc.stored);
	free(sc.resized);
	return NULL;
}

static int check_config(const struct data_loader_config *c, char *err, size_t err_bytes)
{
	const char *bad = NULL;
	if (!c->dir)
		bad = "no data dir";
	else if (c->split < DATA_TRAIN || c->split > DATA_TEST)
		bad = "split must be train, val or test";
	else if (c->world_size < 1 || c->rank < 0 || c->rank >= c->world_size)
		bad = "rank must be in 0..world size-1";
	else if (c->batch < 1 || c->accumulation < 1)
		bad = "batch and accumulation must be >= 1";
	else if (c->size < 1 || c->size > 4096)
		bad = "image size must be in 1..4096";
	else if (c->threads < 0 || c->threads > 256 || c->prefetch < 0 || c->prefetch > 1024)
		bad = "threads must be in 0..256 and prefetch in 0..1024";
	else if (c->stored_size < 0 || c->stored_size > 4096)
		bad = "stored size must be in 0..4096";
	else if (c->start_epoch < 0 || c->start_step < 0)
		bad = "start epoch and step must be >= 0";
	if (bad)
		snprintf(err, err_bytes, "chexnet: loader: '%s': %s", c->dir ? c->dir : "", bad);
	return bad ? -1 : 0;
}

static int alloc_slots(struct data_loader *dl)
{
	dl->slots = calloc((size_t)dl->slot_count, sizeof(*dl->slots));
	if (!dl->slots)
		return -1;
	for (int i = 0; i < dl->slot_count; i++) {
		struct batch *b = &dl->slots[i].b;
		b->capacity = dl->cfg.batch;
		b->size = dl->cfg.size;
		size_t bytes = (size_t)b->capacity * b->size * b->size;
		b->pixels = dl->cfg.alloc_pixels ? dl->cfg.alloc_pixels(bytes, dl->cfg.alloc_ctx) : malloc(bytes);
		b->labels = malloc((size_t)b->capacity * CHEXNET_CLASSES * sizeof(float));
		b->index = malloc((size_t)b->capacity * sizeof(uint32_t));
		b->patient = malloc((size_t)b->capacity * sizeof(uint32_t));
		if (!b->pixels || !b->labels || !b->index || !b->patient)
			return -1;
	}
	return 0;
}

/* Checks the plan and the resume position; sets start_abs. */
static int plan_start(struct data_loader *dl, char *err, size_t err_bytes)
{
	const struct data_loader_config *c = &dl->cfg;
	const char *why = NULL;
	if (data_plan_init(&dl->plan, dl->src.count, c->world_size, c->batch, c->accumulation,
			   c->split == DATA_TRAIN, &why) != 0) {
		snprintf(err, err_bytes, "chexnet: loader: '%s' %s split (%zu records): %s%s", c->dir,
			 c->split == DATA_TRAIN ? "train" : c->split == DATA_VAL ? "val" : "test",
			 dl->src.count, why, c->split == DATA_VAL && !dl->src.count ? " (val holds the "
			 "patients whose keyed hash is below the val fraction: with few patients it can "
			 "be empty; raise --val-fraction when packing, or give a val list)" : "");
		return -1;
	}
	/* compared before multiplying: a huge start step must not wrap around */
	long steps = (dl->plan.micro_per_epoch + c->accumulation - 1) / c->accumulation;
	if (c->start_step >= steps) {
		snprintf(err, err_bytes, "chexnet: loader: start step '%ld': beyond the %ld steps of an epoch",
			 c->start_step, steps);
		return -1;
	}
	long micro = c->start_step * c->accumulation;
	dl->start_abs = (long)c->start_epoch * dl->plan.micro_per_epoch + micro;
	if (c->size > dl->src.size && c->crop != DATA_CROP_RESIZE) {
		snprintf(err, err_bytes, "chexnet: loader: crop size '%d': larger than the stored %d",
			 c->size, dl->src.size);
		return -1;
	}
	return 0;
}

struct data_loader *data_loader_open(const struct data_loader_config *cfg,
				     char *err, size_t err_bytes)
{
	if (check_config(cfg, err, err_bytes) != 0)
		return NULL;
	if (!cfg->alloc_pixels != !cfg->free_pixels) {
		snprintf(err, err_bytes, "chexnet: loader: alloc_pixels and free_pixels go together");
		return NULL;
	}
	struct data_loader *dl = calloc(1, sizeof(*dl));
	if (!dl) {
		snprintf(err, err_bytes, "chexnet: loader: out of memory");
		return NULL;
	}
	dl->cfg = *cfg;
	if (!dl->cfg.threads)
		dl->cfg.threads = data_loader_default_threads();
	if (!dl->cfg.prefetch)
		dl->cfg.prefetch = dl->cfg.threads * 2 > 2 ? dl->cfg.threads * 2 : 2;
	if (!dl->cfg.stored_size && !shard_dir_is_pack(cfg->dir)) /* image_load_view's default */
		dl->cfg.stored_size = image_stored_side(dl->cfg.size);
	if (dl->cfg.val_fraction < 0)
		dl->cfg.val_fraction = 0.1;
	pthread_mutex_init(&dl->mu, NULL);
	pthread_cond_init(&dl->cv, NULL);
	if (data_source_open(&dl->src, cfg->dir, cfg->split, dl->cfg.stored_size, dl->cfg.aspect,
			     dl->cfg.val_fraction, err, err_bytes) != 0 ||
	    plan_start(dl, err, err_bytes) != 0)
		goto fail;
	dl->slot_count = dl->cfg.prefetch + 1;
	dl->threads = calloc((size_t)dl->cfg.threads, sizeof(*dl->threads));
	if (!dl->threads || alloc_slots(dl) != 0) {
		snprintf(err, err_bytes, "chexnet: loader: out of memory for %d batches", dl->slot_count);
		goto fail;
	}
	for (int i = 0; i < dl->cfg.threads; i++) {
		if (pthread_create(&dl->threads[i], NULL, worker_main, dl) != 0) {
			snprintf(err, err_bytes, "chexnet: loader: cannot start worker thread %d", i);
			goto fail;
		}
		dl->thread_count++;
	}
	return dl;
fail:
	data_loader_close(dl);
	return NULL;
}

size_t data_loader_records(const struct data_loader *dl) { return dl->src.count; }
long data_loader_batches_per_epoch(const struct data_loader *dl) { return dl->plan.micro_per_epoch; }
const char *data_loader_error(const struct data_loader *dl) { return dl->err; }
double data_loader_last_wait(const struct data_loader *dl) { return dl->last_wait; }
double data_loader_total_wait(const struct data_loader *dl) { return dl->total_wait; }

void data_loader_position(const struct data_loader *dl, int *epoch, long *step, long *micro)
{
	long abs = dl->start_abs + dl->next_take;
	long m = abs % dl->plan.micro_per_epoch;
	if (epoch)
		*epoch = (int)(abs / dl->plan.micro_per_epoch);
	if (micro)
		*micro = m;
	if (step)
		*step = m / dl->cfg.accumulation;
}

/* Up to 0.5 s on the condition variable (mutex held), so a stop request
 * is seen while the workers are slow or stuck. */
static void wait_a_while(struct data_loader *dl)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 500000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&dl->cv, &dl->mu, &until);
}

int data_loader_next(struct data_loader *dl, struct batch **out)
{
	*out = NULL;
	if (dl->err[0])
		return -1;
	long abs = dl->start_abs + dl->next_take;
	if (abs % dl->plan.micro_per_epoch == 0 && dl->next_take > 0 && !dl->end_reported) {
		dl->end_reported = 1;
		dl->last_wait = 0;
		return 0;
	}
	dl->end_reported = 0;
	pthread_mutex_lock(&dl->mu);
	struct slot *sl = &dl->slots[dl->next_take % dl->slot_count];
	if (sl->state == SLOT_HELD) {
		pthread_mutex_unlock(&dl->mu);
		snprintf(dl->err, sizeof(dl->err), "chexnet: loader: more than %d batches held without release",
			 dl->cfg.prefetch);
		return -1;
	}
	double t0 = now_seconds();
	while (!(sl->state == SLOT_READY && sl->seq == dl->next_take)) {
		if (dl->cfg.interrupted && dl->cfg.interrupted()) {
			pthread_mutex_unlock(&dl->mu);
			snprintf(dl->err, sizeof(dl->err), "chexnet: loader: interrupted (stop requested) "
				 "after waiting %.1f s for a batch", now_seconds() - t0);
			return -1;
		}
		wait_a_while(dl);
	}
	dl->last_wait = now_seconds() - t0;
	dl->total_wait += dl->last_wait;
	sl->state = SLOT_HELD;
	dl->next_take++;
	pthread_mutex_unlock(&dl->mu);
	if (sl->failed) {
		snprintf(dl->err, sizeof(dl->err), "%s", sl->err);
		return -1;
	}
	*out = &sl->b;
	return 1;
}

void data_loader_release(struct data_loader *dl, struct batch *b)
{
	struct slot *sl = (struct slot *)((char *)b - offsetof(struct slot, b));
	pthread_mutex_lock(&dl->mu);
	sl->state = SLOT_FREE;
	pthread_cond_broadcast(&dl->cv);
	pthread_mutex_unlock(&dl->mu);
}

void data_loader_close(struct data_loader *dl)
{
	if (!dl)
		return;
	pthread_mutex_lock(&dl->mu);
	dl->stop = 1;
	pthread_cond_broadcast(&dl->cv);
	pthread_mutex_unlock(&dl->mu);
	/* A worker stuck in a read that never returns (a hung NFS server)
	 * must not hang the exit: after 2 s it is left running, and what it
	 * may still touch is left allocated. */
	struct timespec until;
	int stuck = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	for (int i = 0; i < dl->thread_count; i++)
		if (pthread_timedjoin_np(dl->threads[i], NULL, &until) != 0) {
			pthread_detach(dl->threads[i]);
			stuck++;
		}
	if (stuck) {
		fprintf(stderr, "chexnet: loader: %d worker thread%s still blocked in a read; "
			"left running\n", stuck, stuck == 1 ? "" : "s");
		return;
	}
	for (int i = 0; dl->slots && i < dl->slot_count; i++) {
		if (dl->cfg.free_pixels && dl->slots[i].b.pixels)
			dl->cfg.free_pixels(dl->slots[i].b.pixels, dl->cfg.alloc_ctx);
		else
			free(dl->slots[i].b.pixels);
		free(dl->slots[i].b.labels);
		free(dl->slots[i].b.index);
		free(dl->slots[i].b.patient);
	}
	free(dl->slots);
	free(dl->threads);
	data_source_close(&dl->src);
	pthread_mutex_destroy(&dl->mu);
	pthread_cond_destroy(&dl->cv);
	free(dl);
}
