/* loop/session.c - model/backend set-up and batch sources for the commands.
 * Synthetic images are seeded by (seed, epoch, image), so a run is
 * reproducible. What it does not do: training or evaluation loops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train/dist.h"
#include "backend/gpu/gpu_train.h"
#include "model/loss.h"
#include "loop/algo_share.h"
#include "loop/session.h"
#include "train/span.h"
#include "train/stop_signal.h"

static void print_count(const struct session *s, const struct session_config *c)
{
	const struct model *m = &s->model;
	char digits[32], grouped[48];
	int len = snprintf(digits, sizeof(digits), "%zu", m->desc.param_count), j = 0;

	for (int i = 0; i < len; i++) {
		grouped[j++] = digits[i];
		if ((len - i - 1) % 3 == 0 && i != len - 1)
			grouped[j++] = ',';
	}
	grouped[j] = '\0';
	fprintf(stderr, "chexnet: %s: %s parameters (backend %s, %s, %s%sbatch %ld, %ld px), "
		"chexnet " HVD_VERSION "\n",
		m->desc.name, grouped, c->backend, precision_name(c->precision), s->backend_what,
		s->backend_what[0] ? ", " : "", c->batch, c->size);
}

/* NCCL reduces device memory: only the gpu backend can use it, and its
 * host collectives go through the GPU; gpu: the training phases as NVTX
 * ranges too. */
static int install_gpu_hooks(struct session *s)
{
	struct trainer_error err = { "" };
	int gpu = strcmp(s->ops->name, "gpu") == 0;

	if (!gpu && dist_device_buffers()) {
		fprintf(stderr, "chexnet: runtime backend 'nccl': reduces device memory and needs "
			"--backend gpu (this run: '%s'); hint: HVD_BACKEND=mpi reduces host buffers\n",
			s->ops->name);
		session_close(s);
		return -1;
	}
	if (!gpu)
		return 0;
	span_set_ranges(gpu_train_nvtx_ranges());
	if (!dist_device_buffers())
		return 0;
	if (!(s->staging = gpu_staging_open(s->backend, &err))) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		session_close(s);
		return -1;
	}
	dist_set_staging(gpu_staging_hooks(s->staging));
	return 0;
}

int session_open(struct session *s, const struct session_config *c)
{
	struct trainer_error err = { "" };
	struct model_desc d;

	struct backend_options opt = {
		.max_batch = (int)c->batch, .precision = c->precision,
		.threads = (int)c->threads, .memory_efficient = c->memory_efficient,
		.conv_algorithms = c->conv_algorithms, .gpu_layout = c->gpu_layout,
		.cuda_graph = c->cuda_graph,
		.algo_cache_dir = algo_cache_dir(),
		.share = algo_share(),
	};

	memset(s, 0, sizeof(*s));
	s->ops = backend_find(c->backend, &err);
	if (!s->ops ||
	    (s->ops->probe && s->ops->probe(&opt, s->backend_what, sizeof(s->backend_what), &err)) ||
	    model_by_name(&d, c->model, (int)c->size, CHEXNET_CLASSES, &err) ||
	    model_create(&s->model, &d, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	if (!c->params_given)
		model_init_params(&s->model, c->seed);
	if (dist_rank() == 0 && c->chosen.reason[0])
		fprintf(stderr, "chexnet: backend %s (%s)\n", c->backend, c->chosen.reason);
	if (dist_rank() == 0 && c->precision_auto)
		fprintf(stderr, "chexnet: precision %s (%s)\n", precision_name(c->precision),
			c->chosen.precision_why);
	if (dist_rank() == 0 && c->chosen.warning[0])
		fprintf(stderr, "chexnet: %s\n", c->chosen.warning);
	if (dist_rank() == 0)
		print_count(s, c);
	s->backend = s->ops->create(&s->model, &opt, &err);
	if (!s->backend) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		model_destroy(&s->model);
		return -1;
	}
	return install_gpu_hooks(s);
}

void session_close(struct session *s)
{
	if (s->ops && strcmp(s->ops->name, "gpu") == 0)
		span_set_ranges(NULL);
	if (s->staging) {
		dist_set_staging(NULL);
		gpu_staging_close(s->staging);
	}
	if (s->backend)
		s->ops->destroy(s->backend);
	model_destroy(&s->model);
	s->staging = NULL;
	s->backend = NULL;
}

static int synthetic_batch_alloc(struct batch *b, const struct session_config *s)
{
	b->capacity = (int)s->batch;
	b->size = (int)s->size;
	b->pixels = malloc((size_t)s->batch * s->size * s->size);
	b->labels = malloc((size_t)s->batch * CHEXNET_CLASSES * sizeof(float));
	b->index = malloc((size_t)s->batch * sizeof(uint32_t));
	if (b->pixels && b->labels && b->index)
		return 0;
	fprintf(stderr, "chexnet: synthetic data: out of memory\n");
	return -1;
}

static int synthetic_open(struct source *src, const struct session_config *s,
			  const struct data_config *d, enum data_split split,
			  const struct source_layout *l)
{
	src->seed = s->seed * 1000003 + (uint64_t)split + 7919 * (uint64_t)l->rank;
	if (split == DATA_TRAIN) {
		src->epoch = l->start_epoch;
		src->next_image = l->start_step * l->accumulate * s->batch;
	}
	src->images = split == DATA_TRAIN ? d->synthetic_images : 2 * s->batch;
	if (split == DATA_TRAIN)  /* whole optimizer steps, as the loader cuts its epochs */
		src->images -= src->images % (s->batch * l->accumulate);
	if (src->images == 0) {
		fprintf(stderr, "chexnet: --synthetic-images: '%ld': fewer than one step (batch %ld x "
			"accumulate %d)\n", d->synthetic_images, s->batch, l->accumulate);
		return -1;
	}
	src->eval = split != DATA_TRAIN;
	return synthetic_batch_alloc(&src->synthetic[0], s) ||
	       synthetic_batch_alloc(&src->synthetic[1], s) ? -1 : 0;
}

int source_open(struct source *src, const struct session_config *s, const struct data_config *d,
		enum data_split split, const struct source_layout *layout)
{
	static const struct source_layout one = { .world = 1, .accumulate = 1 };
	const struct source_layout *l = layout ? layout : &one;
	struct data_loader_config cfg;
	char err[1024];

	memset(src, 0, sizeof(*src));
	src->batch = (int)s->batch;
	src->world = l->world;
	if (!d->dir)
		return synthetic_open(src, s, d, split, l);
	data_loader_config_init(&cfg);
	cfg.dir = d->dir;
	cfg.split = split;
	cfg.rank = l->rank;
	cfg.world_size = l->world;
	cfg.batch = (int)s->batch;
	cfg.accumulation = split == DATA_TRAIN ? l->accumulate : 1;
	cfg.start_epoch = split == DATA_TRAIN ? l->start_epoch : 0;
	cfg.start_step = split == DATA_TRAIN ? l->start_step : 0;
	cfg.size = (int)s->size;
	cfg.stored_size = (int)d->stored_size;
	cfg.aspect = d->aspect;
	cfg.crop = split == DATA_TRAIN ? DATA_CROP_RANDOM : DATA_CROP_CENTER;
	cfg.flip = split == DATA_TRAIN;
	cfg.seed = s->seed;
	cfg.threads = (int)d->loader_threads;
	cfg.interrupted = stop_signal_received;
	src->loader = data_loader_open(&cfg, err, sizeof(err));
	if (!src->loader) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

/* Image i of epoch e: a smooth random pattern; labels at the positive
 * rate, with class 0 also brightening the image (something to learn).
 * Validation and test images are the same in every pass (epoch 0), so a
 * resumed run validates on what an uninterrupted one does. */
static void synthetic_fill(struct source *src, struct batch *b, int slot, long image)
{
	struct rng r;
	size_t plane = (size_t)b->size * b->size;

	uint64_t epoch = src->eval ? 0 : (uint64_t)src->epoch;
	rng_seed(&r, src->seed ^ (epoch << 40) ^ (uint64_t)image * 0x9e3779b97f4a7c15ULL);
	float *labels = b->labels + (size_t)slot * CHEXNET_CLASSES;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		labels[c] = rng_uniform(&r) < SYNTHETIC_POSITIVE_RATE ? 1.0f : 0.0f;
	uint8_t *px = b->pixels + (size_t)slot * plane;
	int base = labels[0] > 0.5f ? 150 : 90;
	for (size_t i = 0; i < plane; i++)
		px[i] = (uint8_t)(base + (int)(rng_next(&r) % 64));
	b->index[slot] = (uint32_t)image;
}

int source_next(struct source *src, struct batch **b, double *wait_s)
{
	double t0 = now_seconds();

	if (src->loader) {
		int rc = data_loader_next(src->loader, b);
		*wait_s = now_seconds() - t0;
		if (rc < 0)
			fprintf(stderr, "%s\n", data_loader_error(src->loader));
		return rc;
	}
	struct batch *next = &src->synthetic[src->turn];
	long left = src->images - src->next_image;
	int n = (int)(left < next->capacity ? left : next->capacity);
	if (n <= 0 || (!src->eval && n < next->capacity)) {
		src->next_image = 0;
		src->epoch++;
		*b = NULL;
		*wait_s = 0;
		return 0;
	}
	for (int i = 0; i < n; i++)
		synthetic_fill(src, next, i, src->next_image + i);
	src->next_image += n;
	next->count = n;
	src->turn ^= 1;
	*b = next;
	*wait_s = now_seconds() - t0;
	return 1;
}

void source_release(struct source *src, struct batch *b)
{
	if (src->loader && b)
		data_loader_release(src->loader, b);
}

size_t source_images(const struct source *src)
{
	return src->loader ? data_loader_records(src->loader) : (size_t)(src->images * src->world);
}

long source_batches_per_epoch(const struct source *src)
{
	if (src->loader)
		return data_loader_batches_per_epoch(src->loader);
	long cap = src->synthetic[0].capacity;
	return src->eval ? (src->images + cap - 1) / cap : src->images / cap;
}

void source_close(struct source *src)
{
	if (src->loader)
		data_loader_close(src->loader);
	for (int i = 0; i < 2; i++) {
		free(src->synthetic[i].pixels);
		free(src->synthetic[i].labels);
		free(src->synthetic[i].index);
	}
	memset(src, 0, sizeof(*src));
}

int class_weights(const struct data_config *d, float *w_pos, float *w_neg)
{
	size_t positives[CHEXNET_CLASSES] = { 0 }, total = 0;
	char err[1024];

	if (!d->dir) {
		for (int c = 0; c < CHEXNET_CLASSES; c++) {
			w_pos[c] = (float)(1.0 - SYNTHETIC_POSITIVE_RATE);
			w_neg[c] = (float)SYNTHETIC_POSITIVE_RATE;
		}
		return 0;
	}
	if (data_split_label_counts(d->dir, DATA_TRAIN, -1, positives, &total, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	int degenerate = loss_class_weights(positives, total, CHEXNET_CLASSES, w_pos, w_neg);
	if (degenerate && dist_rank() == 0)
		fprintf(stderr, "chexnet: --loss weighted: %d classes have no positives or no negatives "
			"in the training set; they get weight 1\n", degenerate);
	return 0;
}
