/* data/pack/shard_index.c - index.txt (the list of a pack's shards, written
 * last and atomically) and the reader of one split's shard set.
 * What it does not do: write shards (data/pack/shard.c) or order records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/pack/shard.h"
#include "data/pack/shard_index_read.h"
#include "base/whole_file.h"
#include "data/sets/csv.h"
#include "data/codec/image_decode.h"

int shard_index_write(const char *dir, int size, const struct shard_header *shards,
		      int shard_count, const uint64_t label_counts[3][SHARD_COUNTS],
		      const uint8_t *patient_key, char *err, size_t err_bytes)
{
	char tmp[4400], path[4200], name[64];
	snprintf(path, sizeof(path), "%s/%s", dir, SHARD_INDEX_NAME);
	FILE *f = whole_file_stream(path, tmp, sizeof(tmp));
	if (!f) {
		snprintf(err, err_bytes, "chexnet: index '%s': %s", path, strerror(errno));
		return -1;
	}
	/* the index format is still 1 (new lines are optional); shards are SHARD_VERSION */
	fprintf(f, SHARD_INDEX_HEAD "size %d\npixels %s\naspect %s\n", size, IMAGE_PIXEL_RULE,
		image_aspect_name(IMAGE_ASPECT_PAD));
	if (patient_key) {
		fputs("patient-key ", f);
		for (int i = 0; i < 16; i++)
			fprintf(f, "%02x", patient_key[i]);
		fputc('\n', f);
	}
	for (int i = 0; i < shard_count; i++) {
		const struct shard_header *h = &shards[i];
		shard_file_name(name, sizeof(name), (int)h->split, h->shard);
		fprintf(f, "shard %s %u %s %llu %u\n", shard_split_name((int)h->split), h->shard, name,
			(unsigned long long)h->first_record, h->count);
	}
	for (int s = 0; s < 3; s++) {
		fprintf(f, "labels %s", shard_split_name(s));
		for (int c = 0; c < SHARD_COUNTS; c++)
			fprintf(f, " %llu", (unsigned long long)label_counts[s][c]);
		fputc('\n', f);
	}
	if (whole_file_stream_commit(f, tmp, path) != 0) {
		snprintf(err, err_bytes, "chexnet: index '%s': %s", path, whole_file_why(errno));
		return -1;
	}
	shard_fsync_dir_of(path);   /* the index is what makes the pack complete */
	return 0;
}

static int shard_set_add(struct shard_set *s, const char *dir, const char *file,
			 unsigned number, unsigned long long first, unsigned count,
			 char *err, size_t err_bytes)
{
	struct shard_file *files = realloc(s->files, (size_t)(s->file_count + 1) * sizeof(*files));
	if (!files) {
		snprintf(err, err_bytes, "chexnet: shards '%s': out of memory", dir);
		return -1;
	}
	s->files = files;
	struct shard_file *f = &files[s->file_count];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, file);
	f->first = first;
	f->count = count;
	s->file_count++;
	if (number != (unsigned)s->file_count - 1 || first != s->count) {
		snprintf(err, err_bytes, "chexnet: index '%s/%s': shard '%s': number %u or first record %llu out of sequence",
			 dir, SHARD_INDEX_NAME, file, number, first);
		return -1;
	}
	s->count += count;
	return 0;
}

static int shard_set_check_files(struct shard_set *s, char *err, size_t err_bytes)
{
	for (int i = 0; i < s->file_count; i++) {
		struct shard_file *f = &s->files[i];
		struct shard_header h;
		if (shard_open_checked(f->path, &h, &f->fd, err, err_bytes) != 0)
			return -1;
		if ((int)h.split != s->split || (int)h.size != s->size || h.first_record != f->first ||
		    h.count != f->count || (int)h.shard != i || (int)h.shards != s->file_count) {
			snprintf(err, err_bytes, "chexnet: shard '%s': offset 0: header does not match the index",
				 f->path);
			return -1;
		}
	}
	s->record_bytes = shard_record_bytes(s->size);
	return 0;
}

int shard_set_open(struct shard_set *s, const char *dir, int split, char *err, size_t err_bytes)
{
	struct shard_index ix;
	int rc = -1;
	memset(s, 0, sizeof(*s));
	s->split = split;
	if (shard_index_read(dir, &ix, err, err_bytes) != 0)
		return -1;
	s->size = ix.size;
	for (int i = 0; i < ix.entry_count; i++) {
		const struct shard_index_entry *e = &ix.entries[i];
		if (e->split == split &&
		    shard_set_add(s, dir, e->file, e->number, e->first, e->count, err, err_bytes) != 0)
			goto out;
	}
	if (shard_set_check_files(s, err, err_bytes) != 0)
		goto out;
	rc = 0;
out:
	shard_index_free(&ix);
	if (rc != 0)
		shard_set_close(s);
	return rc;
}

int shard_set_read(const struct shard_set *s, size_t i, uint8_t *rec,
		   struct shard_record_info *info, char *err, size_t err_bytes)
{
	int lo = 0, hi = s->file_count - 1;
	const char *why = NULL;
	if (i >= s->count) {
		snprintf(err, err_bytes, "chexnet: shards: record %zu: beyond the %zu records", i, s->count);
		return -1;
	}
	while (lo < hi) {  /* last file whose first <= i */
		int mid = (lo + hi + 1) / 2;
		if (s->files[mid].first <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	const struct shard_file *f = &s->files[lo];
	off_t at = SHARD_HEADER_BYTES + (off_t)(i - f->first) * (off_t)s->record_bytes;
	size_t done = 0;
	while (done < s->record_bytes) {
		ssize_t n = pread(f->fd, rec + done, s->record_bytes - done, at + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, err_bytes, "chexnet: shard '%s': offset %lld: %s", f->path,
				 (long long)(at + (off_t)done), n < 0 ? strerror(errno) : "truncated");
			return -1;
		}
		done += (size_t)n;
	}
	if (shard_record_decode(rec, s->size, info, &why) != 0 ||
	    (info->index != i && (why = "record index does not match its position"))) {
		snprintf(err, err_bytes, "chexnet: shard '%s': offset %lld: record %zu: %s",
			 f->path, (long long)at, i, why);
		return -1;
	}
	return 0;
}

int shard_index_label_counts(const char *dir, int split, uint64_t counts[SHARD_COUNTS],
			     char *err, size_t err_bytes)
{
	struct shard_index ix;
	if (shard_index_read(dir, &ix, err, err_bytes) != 0)
		return -1;
	memcpy(counts, ix.labels[split], sizeof(ix.labels[split]));
	shard_index_free(&ix);
	return 0;
}

void shard_set_close(struct shard_set *s)
{
	for (int i = 0; i < s->file_count; i++)
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
	free(s->files);
	memset(s, 0, sizeof(*s));
}
