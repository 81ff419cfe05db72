/* data/synth/synth.c - `chexnet synth` data set: labels, patients, the NIH
 * files (CSV + lists) and the PNGs, drawn in parallel, only into a folder
 * of synth's own (base/own_dir.h: made, found empty, or holding
 * SYNTH_MARKER): a real data set's folder given as --out is refused
 * before anything is written.
 * What it does not do: draw (data/synth/synth_draw.c) or parse options.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/whole_file.h"
#include "base/args.h"
#include "base/own_dir.h"
#include "data/sets/labels.h"
#include "data/sets/split.h"
#include "data/sets/split_key.h"
#include "data/synth/synth.h"
#include "data/codec/image_encode.h"

const unsigned data_synth_real_counts[CHEXNET_CLASSES] = {
	11559, 2776, 13317, 19894, 5782, 6331, 1431, 5302, 4667, 2303, 2516, 1686, 3385, 227,
};

uint16_t data_synth_labels(uint64_t seed, size_t i, double floor)
{
	uint16_t m = 0;
	uint64_t h = data_hash64(seed ^ 0x1ABE1ull) ^ data_hash64(i);
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		h = data_hash64(h + (uint64_t)c);
		double p = (double)data_synth_real_counts[c] / DATA_SYNTH_REAL_ROWS;
		if (p < floor)
			p = floor;
		if ((double)(h >> 11) * (1.0 / 9007199254740992.0) < p)
			m |= (uint16_t)(1u << c);
	}
	return m;
}

struct synth_image { uint32_t patient, follow_up; int test; uint16_t labels; };

/* Patients of 1-4 consecutive images; about one patient in five is test. */
static void synth_plan(const struct synth_config *cfg, struct synth_image *im)
{
	uint32_t patient = 0, left = 0, follow = 0;
	int test = 0;
	for (size_t i = 0; i < cfg->count; i++) {
		if (left == 0) {
			patient++;
			left = 1 + (uint32_t)(data_hash64(cfg->seed ^ ((uint64_t)patient << 1)) % 4);
			test = data_hash64(cfg->seed ^ 0x7E57ull ^ ((uint64_t)patient << 20)) % 5 == 0;
			follow = 0;
		}
		im[i] = (struct synth_image){ patient, follow++, test,
					      data_synth_labels(cfg->seed, i, cfg->floor) };
		left--;
	}
	/* both splits non-empty whenever there are two patients */
	int any_test = 0, any_train = 0;
	for (size_t i = 0; i < cfg->count; i++)
		im[i].test ? (any_test = 1) : (any_train = 1);
	if ((!any_test || !any_train) && patient >= 2)
		for (size_t i = 0; i < cfg->count; i++)
			im[i].test = (im[i].patient == patient) != !any_train;
}

static void image_name(char *out, size_t bytes, const struct synth_image *im)
{
	snprintf(out, bytes, "%08u_%03u.png", im->patient, im->follow_up);
}

struct synth_job {
	const struct synth_config *cfg;
	const struct synth_image *im;
	atomic_size_t next;
	atomic_int failed;
	pthread_mutex_t mu;
	char err[1024];
};

static void *synth_worker(void *arg)
{
	struct synth_job *job = arg;
	const int size = job->cfg->size;
	uint8_t *pixels = malloc((size_t)size * size);
	char name[64], path[4200], err[1024];
	if (!pixels) {
		job->failed = 1;
		return NULL;
	}
	while (!job->failed) {
		size_t i = atomic_fetch_add(&job->next, 1);
		if (i >= job->cfg->count)
			break;
		data_synth_image(job->cfg->seed, i, job->im[i].labels, size, pixels);
		image_name(name, sizeof(name), &job->im[i]);
		snprintf(path, sizeof(path), "%s/images/%s", job->cfg->out_dir, name);
		if (image_write_png_gray(path, pixels, size, size, err, sizeof(err)) != 0) {
			pthread_mutex_lock(&job->mu);
			if (!job->failed)
				snprintf(job->err, sizeof(job->err), "%s", err);
			job->failed = 1;
			pthread_mutex_unlock(&job->mu);
		}
	}
	free(pixels);
	return NULL;
}

static int synth_images(const struct synth_config *cfg, const struct synth_image *im,
			char *err, size_t err_bytes)
{
	int threads = cfg->threads > 0 ? cfg->threads : data_allowed_cpus(), started = 0;
	pthread_t tid[256];
	struct synth_job job = { .cfg = cfg, .im = im };
	pthread_mutex_init(&job.mu, NULL);
	for (; started < threads && started < 256; started++)
		if (pthread_create(&tid[started], NULL, synth_worker, &job) != 0)
			break;
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&job.mu);
	if (job.failed || started == 0) {
		snprintf(err, err_bytes, "%s", job.err[0] ? job.err : "chexnet: synth: cannot start threads or out of memory");
		return -1;
	}
	return 0;
}

/* Appends to a growing text buffer; -1 when out of memory. */
struct text { char *p; size_t len, cap; };
static int text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->cap + n + 1) * 2;
		char *p = realloc(t->p, cap);
		if (!p)
			return -1;
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n + 1);
	t->len += n;
	return 0;
}

static void labels_text(uint16_t m, char *out, size_t bytes)
{
	out[0] = 0;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		if (m & (1u << c)) {
			size_t len = strlen(out);
			snprintf(out + len, bytes - len, "%s%s", len ? "|" : "", data_class_names[c]);
		}
	if (!out[0])
		snprintf(out, bytes, "No Finding");
}

/* The set's key (data/sets/split_key.h), from the seed: a generated set,
 * its val split included, is the same every time. */
static int synth_key(const struct synth_config *cfg, char *err, size_t err_bytes)
{
	char path[4200];
	uint64_t k[2];
	k[0] = data_hash64(cfg->seed ^ 0x6B6579ull);
	k[1] = data_hash64(k[0]);
	snprintf(path, sizeof(path), "%s/%s", cfg->out_dir, DATA_KEY_FILE);
	if (!whole_file_ours(path)) {
		snprintf(err, err_bytes, "chexnet: synth: '%s': not a regular file of this user's: "
			 "left alone; choose another --out", path);
		return -1;
	}
	unlink(path);   /* a new set replaces the old one's key */
	return data_split_key_write(cfg->out_dir, (const uint8_t *)k, err, err_bytes);
}

static int synth_tables(const struct synth_config *cfg, const struct synth_image *im,
			char *err, size_t err_bytes)
{
	struct text csv = { 0 }, train = { 0 }, test = { 0 };
	char line[512], name[64], labels[256], path[4200];
	int bad = text_add(&csv, "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,"
			   "Patient Gender,View Position,OriginalImage[Width,Height],"
			   "OriginalImagePixelSpacing[x,y]\n");
	for (size_t i = 0; i < cfg->count && !bad; i++) {
		uint64_t h = data_hash64(cfg->seed ^ ((uint64_t)im[i].patient << 8));
		image_name(name, sizeof(name), &im[i]);
		labels_text(im[i].labels, labels, sizeof(labels));
		snprintf(line, sizeof(line), "%s,%s,%u,%u,%u,%c,PA,%d,%d,0.143,0.143\n", name, labels,
			 im[i].follow_up, im[i].patient, 20 + (unsigned)(h % 60), h & 64 ? 'M' : 'F',
			 cfg->size, cfg->size);
		bad |= text_add(&csv, line);
		snprintf(line, sizeof(line), "%s\n", name);
		bad |= text_add(im[i].test ? &test : &train, line);
	}
	bad |= text_add(&train, "") | text_add(&test, "");
	int rc = -1;
	if (bad) {
		snprintf(err, err_bytes, "chexnet: synth: out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/Data_Entry_2017_v2020.csv", cfg->out_dir);
	if (image_write_file_atomic(path, csv.p, csv.len, err, err_bytes) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/train_val_list.txt", cfg->out_dir);
	if (image_write_file_atomic(path, train.p, train.len, err, err_bytes) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/test_list.txt", cfg->out_dir);
	rc = image_write_file_atomic(path, test.p, test.len, err, err_bytes);
	if (rc == 0)
		rc = synth_key(cfg, err, err_bytes);
out:
	free(csv.p);
	free(train.p);
	free(test.p);
	return rc;
}

int data_synth(const struct synth_config *cfg, char *err, size_t err_bytes)
{
	char images[4200];
	if (cfg->count < 1 || cfg->size < 16 || cfg->size > 4096 || cfg->floor < 0 || cfg->floor > 1) {
		snprintf(err, err_bytes, "chexnet: synth: count %zu, size %d, floor %g: out of range",
			 cfg->count, cfg->size, cfg->floor);
		return -1;
	}
	static const struct own_dir_marker marker = { "synth", "--out", SYNTH_MARKER,
						      SYNTH_MARKER_TEXT };
	snprintf(images, sizeof(images), "%s/images", cfg->out_dir);
	if (own_dir_claim(&marker, cfg->out_dir, err, err_bytes) != 0 ||
	    data_make_dir("synth:", images, err, err_bytes) != 0)
		return -1;
	struct synth_image *im = calloc(cfg->count, sizeof(*im));
	if (!im) {
		snprintf(err, err_bytes, "chexnet: synth: out of memory for %zu images", cfg->count);
		return -1;
	}
	synth_plan(cfg, im);
	/* images first, label files last: a data dir with lists is complete */
	int rc = synth_images(cfg, im, err, err_bytes);
	if (rc == 0)
		rc = synth_tables(cfg, im, err, err_bytes);
	free(im);
	return rc;
}
