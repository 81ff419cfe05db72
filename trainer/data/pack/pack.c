/* data/pack/pack.c - the packer: plans shards, decodes in worker threads that
 * pwrite records straight to their offsets, finishes each shard atomically,
 * writes the index; with skip_unreadable, logs refused images and plans
 * again without them. What it does not do: print (the caller's progress
 * callback does).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/whole_file.h"
#include "base/clock.h"
#include "base/crc32c.h"
#include "base/args.h"
#include "base/own_dir.h"
#include "data/pack/pack.h"
#include "data/sets/set.h"
#include "data/pack/shard.h"
#include "data/codec/image_decode.h"
#include "data/sets/view.h"

#define PACK_DEFAULT_RECORDS_PER_SHARD 8192

struct pack_job {
	const struct pack_config *cfg;
	const struct data_set *set;
	const struct data_entry *entries;  /* this shard's */
	struct shard_writer *w;
	atomic_size_t next, done, padded;
	atomic_int failed, finished, skipped;
	FILE *skip_log;             /* skip_unreadable: OUT/skipped.txt.tmp */
	pthread_mutex_t mu;
	pthread_cond_t finished_cv;
	char err[1024];
};

int data_pack_shard_count(size_t count, size_t train_count, int train_shards)
{
	if (count == 0)
		return 0;
	size_t n = train_shards > 0 && train_count
		? (count * (size_t)train_shards + train_count - 1) / train_count
		: (count + PACK_DEFAULT_RECORDS_PER_SHARD - 1) / PACK_DEFAULT_RECORDS_PER_SHARD;
	if (n < 1)
		n = 1;
	return (int)(n > count ? count : n);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void job_fail(struct pack_job *job, const char *msg)
{
	pthread_mutex_lock(&job->mu);
	if (!job->failed)
		snprintf(job->err, sizeof(job->err), "%s", msg);
	job->failed = 1;
	pthread_mutex_unlock(&job->mu);
}

/* skip_unreadable: e is left out; its error line is logged. */
static void skip_entry(struct pack_job *job, const struct data_entry *e, const char *err)
{
	pthread_mutex_lock(&job->mu);
	((struct data_entry *)e)->unreadable = 1;
	fprintf(job->skip_log, "%s\n", err);
	job->skipped++;
	pthread_mutex_unlock(&job->mu);
}

static void *pack_worker(void *arg)
{
	struct pack_job *job = arg;
	const int size = job->cfg->size;
	uint8_t *rec = malloc(shard_record_bytes(size));
	uint8_t *pixels = malloc((size_t)size * size);
	char path[4400], err[1024];
	if (!rec || !pixels)
		job_fail(job, "chexnet: pack: out of memory");
	while (!job->failed) {
		size_t i = atomic_fetch_add(&job->next, 1);
		if (i >= job->w->h.count)
			break;
		const struct data_entry *e = &job->entries[i];
		int padded = 0;
		if (data_set_image_path(job->set, e, path, sizeof(path), err, sizeof(err)) != 0 ||
		    image_load_square(path, size, IMAGE_ASPECT_PAD, pixels, &padded, err, sizeof(err)) != 0) {
			if (!job->cfg->skip_unreadable) {
				job_fail(job, err);
				break;
			}
			skip_entry(job, &job->entries[i], err);
			continue;
		}
		struct shard_record_info info = {
			.index = (uint32_t)(job->w->h.first_record + i),
			.patient = e->patient, .labels = e->labels, .view = e->view,
		};
		snprintf(info.name, sizeof(info.name), "%s", base_name(e->name));
		shard_record_encode(rec, size, &info, pixels);
		if (shard_writer_put(job->w, (uint32_t)i, rec, err, sizeof(err)) != 0) {
			job_fail(job, err);
			break;
		}
		atomic_fetch_add(&job->done, 1);
		if (padded)
			atomic_fetch_add(&job->padded, 1);
	}
	free(rec);
	free(pixels);
	pthread_mutex_lock(&job->mu);
	atomic_fetch_add(&job->finished, 1);
	pthread_cond_signal(&job->finished_cv);
	pthread_mutex_unlock(&job->mu);
	return NULL;
}

/* Decodes and writes one shard with cfg->threads workers. */
static int pack_shard(const struct pack_config *cfg, const struct data_set *set,
		      const struct data_entry *entries, struct shard_writer *w, FILE *skip_log,
		      size_t done_before, size_t total, double t0, size_t *padded, char *err,
		      size_t err_bytes)
{
	int threads = cfg->threads > 0 ? cfg->threads : data_allowed_cpus();
	pthread_t tid[256];
	int started = 0;
	struct pack_job job = { .cfg = cfg, .set = set, .entries = entries, .w = w, .skip_log = skip_log };
	pthread_mutex_init(&job.mu, NULL);
	pthread_cond_init(&job.finished_cv, NULL);
	if (threads > 256)
		threads = 256;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, pack_worker, &job) != 0)
			break;
	if (started == 0)
		job_fail(&job, "chexnet: pack: cannot start decode threads");
	pthread_mutex_lock(&job.mu);
	while (atomic_load(&job.finished) < started) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&job.finished_cv, &job.mu, &until);
		if (cfg->progress)
			cfg->progress(cfg->progress_ctx, done_before + atomic_load(&job.done), total,
				      now_seconds() - t0);
	}
	pthread_mutex_unlock(&job.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_cond_destroy(&job.finished_cv);
	pthread_mutex_destroy(&job.mu);
	if (job.failed) {
		snprintf(err, err_bytes, "%s", job.err);
		shard_writer_abort(w);
		return -1;
	}
	if (job.skipped) {   /* planned again without them */
		shard_writer_abort(w);
		return 1;
	}
	*padded += atomic_load(&job.padded);
	return shard_writer_finish(w, err, err_bytes);
}

static uint32_t plan_crc(const struct data_entry *e, uint32_t count, int size)
{
	uint32_t crc = crc32c(0, &size, sizeof(size));
	crc = crc32c(crc, "aspect pad", 10);  /* shards of squashing packs are not kept */
	for (uint32_t i = 0; i < count; i++) {
		crc = crc32c(crc, e[i].name, strlen(e[i].name) + 1);
		crc = crc32c(crc, &e[i].patient, sizeof(e[i].patient));
		crc = crc32c(crc, &e[i].labels, sizeof(e[i].labels));
		crc = crc32c(crc, &e[i].view, sizeof(e[i].view));
	}
	return crc;
}

/* Headers of every shard of every split, in index order. */
static struct shard_header *plan_shards(const struct pack_config *cfg, const struct data_set *set,
					int *count)
{
	int n[3], total = 0;
	for (int s = 0; s < 3; s++)
		total += n[s] = data_pack_shard_count(set->split[s].count, set->split[0].count, cfg->shards);
	struct shard_header *h = calloc((size_t)total + 1, sizeof(*h));
	if (!h)
		return NULL;
	int k = 0;
	for (int s = 0; s < 3; s++) {
		size_t first = 0, c = set->split[s].count;
		for (int i = 0; i < n[s]; i++, k++) {
			size_t end = c * (size_t)(i + 1) / (size_t)n[s];
			h[k] = (struct shard_header){
				.split = (uint32_t)s, .size = (uint32_t)cfg->size,
				.record_bytes = (uint32_t)shard_record_bytes(cfg->size),
				.first_record = first, .count = (uint32_t)(end - first),
				.shard = (uint32_t)i, .shards = (uint32_t)n[s],
			};
			h[k].plan_crc = plan_crc(&set->split[s].items[first], h[k].count, cfg->size);
			first = end;
		}
	}
	*count = total;
	return h;
}

/* 1 when path is missing or begins with the index's first line: an
 * index pack wrote (a plain comparison, no parse). */
static int index_of_pack(const char *path)
{
	static const char head[] = SHARD_INDEX_HEAD;
	char buf[sizeof(head)];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	ssize_t n = read(fd, buf, sizeof(head) - 1);
	close(fd);
	return n == (ssize_t)sizeof(head) - 1 && memcmp(buf, head, sizeof(head) - 1) == 0;
}

static int prepare_out_dir(const char *dir, char *err, size_t err_bytes)
{
	static const struct own_dir_marker marker = { "pack", "--out", PACK_MARKER, PACK_MARKER_TEXT };
	char index[4200];
	if (own_dir_claim(&marker, dir, err, err_bytes) != 0)
		return -1;
	/* from here on the directory is not a complete pack until the new index */
	snprintf(index, sizeof(index), "%s/%s", dir, SHARD_INDEX_NAME);
	if (!whole_file_ours(index)) {
		snprintf(err, err_bytes, "chexnet: pack: '%s': not a regular file of this user's "
			 "(a link, a folder or another user's): left alone; choose another --out", index);
		return -1;
	}
	if (!index_of_pack(index)) {
		snprintf(err, err_bytes, "chexnet: pack: '%s': not an index chexnet pack wrote (its "
			 "first line is not '%.*s'): left alone; choose another --out", index,
			 (int)strlen(SHARD_INDEX_HEAD) - 1, SHARD_INDEX_HEAD);
		return -1;
	}
	if (unlink(index) != 0 && errno != ENOENT) {
		snprintf(err, err_bytes, "chexnet: pack: '%s': %s", index, strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes every shard of plan that is not already complete. Returns 0, 1
 * when images were skipped (plan again without them), or -1. */
static int write_shards(const struct pack_config *cfg, struct data_set *set,
			const struct shard_header *plan, int count, int pass, FILE *skip_log,
			struct pack_result *res, double t0, char *err, size_t err_bytes)
{
	size_t total = set->split[0].count + set->split[1].count + set->split[2].count, done = 0;
	int skipped = 0;
	for (int k = 0; k < count; k++) {
		const struct shard_header *h = &plan[k];
		if (shard_is_complete(cfg->out_dir, h)) {
			res->kept += pass == 0;   /* later passes keep what this run wrote */
		} else {
			struct shard_writer w;
			int rc = shard_writer_open(&w, cfg->out_dir, h, err, err_bytes);
			if (rc == 0)
				rc = pack_shard(cfg, set, &set->split[h->split].items[h->first_record], &w,
						skip_log, done, total, t0, &res->padded, err, err_bytes);
			if (rc < 0)
				return -1;
			skipped |= rc;
		}
		done += h->count;
	}
	return skipped;
}

/* Removes the entries marked unreadable; returns how many. */
static size_t drop_unreadable(struct data_set *set)
{
	size_t dropped = 0;
	for (int s = 0; s < 3; s++) {
		struct data_list *l = &set->split[s];
		size_t out = 0;
		for (size_t i = 0; i < l->count; i++)
			if (!l->items[i].unreadable)
				l->items[out++] = l->items[i];
		dropped += l->count - out;
		l->count = out;
	}
	return dropped;
}

/* OUT/skipped.txt: written (fsync + rename) when images were skipped,
 * removed otherwise so that an old list never describes a new pack. */
static int finish_skip_log(const struct pack_config *cfg, FILE *log, const char *tmp,
			   size_t skipped, char *err, size_t err_bytes)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/skipped.txt", cfg->out_dir);
	int ours = whole_file_ours(path);
	skipped = log ? skipped : 0;
	if (log && !skipped) {
		fclose(log);
		whole_file_abandon(-1, tmp);
	}
	if (!ours || (skipped ? whole_file_stream_commit(log, tmp, path) :
		      unlink(path) != 0 && errno != ENOENT)) {
		if (!ours && log && skipped)
			fclose(log), whole_file_abandon(-1, tmp);
		snprintf(err, err_bytes, "chexnet: pack: '%s': %s", path, ours ? strerror(errno) :
			 "not a regular file of this user's: left alone; choose another --out");
		return -1;
	}
	return 0;
}

static void count_labels(const struct data_set *set, uint64_t counts[3][SHARD_COUNTS])
{
	memset(counts, 0, 3 * sizeof(counts[0]));
	for (int s = 0; s < 3; s++) {
		const struct data_list *l = &set->split[s];
		counts[s][0] = l->count;
		for (size_t i = 0; i < l->count; i++)
			for (int c = 0; c < 14; c++)
				counts[s][1 + c] += (l->items[i].labels >> c) & 1;
	}
}

/* Opens the set, filters views, opens OUT and its skip log. */
static int pack_begin(const struct pack_config *cfg, struct data_set *set, FILE **skip_log,
		      char *skip_tmp, size_t skip_tmp_len, char *err, size_t err_bytes)
{
	char path[4300];
	if (data_set_open(set, cfg->data_dir, cfg->val_fraction, err, err_bytes) != 0)
		return -1;
	if (cfg->views && data_set_keep_views(set, cfg->views) == 0) {
		snprintf(err, err_bytes, "chexnet: pack: views: no image of '%s' has one of them", cfg->data_dir);
		return -1;
	}
	if (prepare_out_dir(cfg->out_dir, err, err_bytes) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/skipped.txt", cfg->out_dir);
	if (cfg->skip_unreadable && !(*skip_log = whole_file_stream(path, skip_tmp, skip_tmp_len))) {
		snprintf(err, err_bytes, "chexnet: pack: '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int data_pack(const struct pack_config *cfg, struct pack_result *res, char *err, size_t err_bytes)
{
	struct data_set *set = calloc(1, sizeof(*set));
	struct shard_header *plan = NULL;
	FILE *skip_log = NULL;
	char skip_tmp[4400] = "";
	int count = 0, rc = -1, more = 1;
	double t0 = now_seconds();
	memset(res, 0, sizeof(*res));
	if (!set || cfg->size < 8 || cfg->size > 4096) {
		snprintf(err, err_bytes, "chexnet: pack: size '%d': expected 8..4096", cfg->size);
		goto out;
	}
	if (pack_begin(cfg, set, &skip_log, skip_tmp, sizeof(skip_tmp), err, err_bytes) != 0)
		goto out;
	for (int pass = 0; more; pass++) {   /* again while images were skipped */
		free(plan);
		if (!(plan = plan_shards(cfg, set, &count))) {
			snprintf(err, err_bytes, "chexnet: pack: out of memory");
			goto out;
		}
		if ((more = write_shards(cfg, set, plan, count, pass, skip_log, res, t0, err, err_bytes)) < 0)
			goto out;
		res->skipped += drop_unreadable(set);
	}
	uint64_t counts[3][SHARD_COUNTS];
	count_labels(set, counts);
	int log_rc = finish_skip_log(cfg, skip_log, skip_tmp, res->skipped, err, err_bytes);
	skip_log = NULL;
	if (log_rc != 0 || shard_index_write(cfg->out_dir, cfg->size, plan, count, counts,
					     set->patient_key, err, err_bytes) != 0)
		goto out;
	size_t total = set->split[0].count + set->split[1].count + set->split[2].count;
	for (int s = 0; s < 3; s++)
		res->records[s] = set->split[s].count;
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < set->split[s].count; i++)
			res->other_modality += set->split[s].items[i].other_modality;
	memcpy(res->other_example, set->dicom_other_example, sizeof(res->other_example));
	res->shards = count;
	res->seconds = now_seconds() - t0;
	if (cfg->progress)
		cfg->progress(cfg->progress_ctx, total, total, res->seconds);
	rc = 0;
out:
	if (skip_log) {
		fclose(skip_log);
		whole_file_abandon(-1, skip_tmp);
	}
	free(plan);
	if (set)
		data_set_free(set);
	free(set);
	return rc;
}
