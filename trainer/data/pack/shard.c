/* data/pack/shard.c - shard header/record codecs, the crash-safe writer, the
 * checking reader and index.txt. What it does not do: decode images or
 * decide what goes in which shard (data/pack/pack.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/whole_file.h"
#include "base/crc32c.h"
#include "data/pack/shard.h"

static const uint8_t shard_magic[8] = { 'H', 'V', 'D', 'S', 'H', 'R', 'D', 0 };

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

const char *shard_split_name(int split)
{
	static const char *const names[] = { "train", "val", "test" };
	return split >= 0 && split < 3 ? names[split] : "?";
}

size_t shard_record_bytes(int size)
{
	return SHARD_RECORD_HEADER_BYTES + (size_t)size * (size_t)size;
}

void shard_file_name(char *out, size_t bytes, int split, uint32_t shard)
{
	snprintf(out, bytes, "%s-%05u.shard", shard_split_name(split), shard);
}

void shard_header_encode(const struct shard_header *h, uint8_t out[SHARD_HEADER_BYTES])
{
	memset(out, 0, SHARD_HEADER_BYTES);
	memcpy(out, shard_magic, 8);
	put32(out + 8, SHARD_VERSION);
	put32(out + 12, h->split);
	put32(out + 16, h->size);
	put32(out + 20, h->record_bytes);
	put64(out + 24, h->first_record);
	put32(out + 32, h->count);
	put32(out + 36, h->shard);
	put32(out + 40, h->shards);
	put32(out + 44, h->plan_crc);
	put32(out + 60, crc32c(0, out, 60));
}

int shard_header_decode(const uint8_t in[SHARD_HEADER_BYTES], struct shard_header *h,
			const char **why)
{
	if (memcmp(in, shard_magic, 8) != 0)
		return *why = "bad magic (not a shard)", -1;
	if (get32(in + 60) != crc32c(0, in, 60))
		return *why = "header CRC32C mismatch", -1;
	h->version = get32(in + 8);
	if (h->version != 1 && h->version != SHARD_VERSION)
		return *why = "unsupported version", -1;
	h->split = get32(in + 12);
	h->size = get32(in + 16);
	h->record_bytes = get32(in + 20);
	h->first_record = get64(in + 24);
	h->count = get32(in + 32);
	h->shard = get32(in + 36);
	h->shards = get32(in + 40);
	h->plan_crc = get32(in + 44);
	if (h->split > 2 || h->size == 0 || h->size > 4096 ||
	    h->record_bytes != shard_record_bytes((int)h->size) || h->shard >= h->shards)
		return *why = "inconsistent header fields", -1;
	return 0;
}

void shard_record_encode(uint8_t *rec, int size, const struct shard_record_info *info,
			 const uint8_t *pixels)
{
	size_t bytes = shard_record_bytes(size);
	memset(rec, 0, SHARD_RECORD_HEADER_BYTES);
	put32(rec + 4, info->index);
	put32(rec + 8, info->patient);
	rec[12] = (uint8_t)info->labels;
	rec[13] = (uint8_t)(info->labels >> 8);
	rec[14] = info->view;
	memcpy(rec + 16, info->name, strnlen(info->name, SHARD_NAME_BYTES - 1));
	memcpy(rec + SHARD_RECORD_HEADER_BYTES, pixels, (size_t)size * size);
	put32(rec, crc32c(0, rec + 4, bytes - 4));
}

int shard_record_decode(const uint8_t *rec, int size, struct shard_record_info *info,
			const char **why)
{
	size_t bytes = shard_record_bytes(size);
	if (get32(rec) != crc32c(0, rec + 4, bytes - 4))
		return *why = "record CRC32C mismatch", -1;
	info->index = get32(rec + 4);
	info->patient = get32(rec + 8);
	info->labels = (uint16_t)(rec[12] | rec[13] << 8);
	info->view = rec[14];
	memcpy(info->name, rec + 16, SHARD_NAME_BYTES);
	info->name[SHARD_NAME_BYTES - 1] = 0;
	if (info->labels >> 14)
		return *why = "label mask has bits beyond the 14 classes", -1;
	if (info->view >= 6)   /* DATA_VIEW_CODES */
		return *why = "view code out of range", -1;
	return 0;
}

int shard_writer_open(struct shard_writer *w, const char *dir, const struct shard_header *h,
		      char *err, size_t err_bytes)
{
	char name[64];
	memset(w, 0, sizeof(*w));
	w->h = *h;
	shard_file_name(name, sizeof(name), (int)h->split, h->shard);
	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	w->fd = whole_file_open(w->path, w->tmp_path, sizeof(w->tmp_path), 0644);
	if (w->fd < 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': %s", w->path, strerror(errno));
		return -1;
	}
	return 0;
}

static int pwrite_all(int fd, const uint8_t *p, size_t bytes, off_t at)
{
	while (bytes) {
		ssize_t n = pwrite(fd, p, bytes, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;   /* no progress and no reason given */
			return -1;
		}
		p += n;
		bytes -= (size_t)n;
		at += n;
	}
	return 0;
}

int shard_writer_put(struct shard_writer *w, uint32_t local, const uint8_t *rec,
		     char *err, size_t err_bytes)
{
	off_t at = SHARD_HEADER_BYTES + (off_t)local * w->h.record_bytes;
	if (local >= w->h.count || pwrite_all(w->fd, rec, w->h.record_bytes, at) != 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': write at offset %lld: %s", w->tmp_path,
			 (long long)at, local >= w->h.count ? "record beyond count" : strerror(errno));
		return -1;
	}
	return 0;
}

void shard_fsync_dir_of(const char *path)
{
	char copy[4200];
	snprintf(copy, sizeof(copy), "%s", path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int shard_writer_finish(struct shard_writer *w, char *err, size_t err_bytes)
{
	uint8_t head[SHARD_HEADER_BYTES];
	shard_header_encode(&w->h, head);
	int bad = pwrite_all(w->fd, head, sizeof(head), 0) != 0 || fsync(w->fd) != 0;
	int saved = errno;
	/* the fd is gone after close() whatever it returns: never close it twice
	 * (other threads may already own that number again) */
	if (close(w->fd) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	w->fd = -1;
	if (bad) {
		snprintf(err, err_bytes, "chexnet: shard '%s': %s", w->tmp_path,
			 strerror(saved ? saved : EIO));
		shard_writer_abort(w);
		return -1;
	}
	int ours = whole_file_ours(w->path);
	if (!ours)
		errno = EEXIST;
	if (!ours || rename(w->tmp_path, w->path) != 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': %s", w->path, whole_file_why(errno));
		unlink(w->tmp_path);
		return -1;
	}
	shard_fsync_dir_of(w->path);
	return 0;
}

void shard_writer_abort(struct shard_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	unlink(w->tmp_path);
}

/* Opens path and checks its header and size; fills h. */
int shard_open_checked(const char *path, struct shard_header *h, int *fd_out,
			      char *err, size_t err_bytes)
{
	uint8_t head[SHARD_HEADER_BYTES];
	const char *why = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': %s", path, strerror(errno));
		return -1;
	}
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n != (ssize_t)sizeof(head)) {
		snprintf(err, err_bytes, "chexnet: shard '%s': offset 0: header truncated (%zd bytes)", path, n);
		goto fail;
	}
	if (shard_header_decode(head, h, &why) != 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': offset 0: %s", path, why);
		goto fail;
	}
	uint64_t want = SHARD_HEADER_BYTES + (uint64_t)h->count * h->record_bytes;
	if (fstat(fd, &st) != 0) {
		snprintf(err, err_bytes, "chexnet: shard '%s': %s", path, strerror(errno));
		goto fail;
	}
	if ((uint64_t)st.st_size != want) {
		snprintf(err, err_bytes, "chexnet: shard '%s': offset %lld: %s (%u records need %llu bytes)",
			 path, (long long)st.st_size, (uint64_t)st.st_size < want ? "truncated tail" : "trailing bytes",
			 h->count, (unsigned long long)want);
		goto fail;
	}
	*fd_out = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

int shard_is_complete(const char *dir, const struct shard_header *h)
{
	char name[64], path[4200], err[256];
	struct shard_header got;
	int fd;
	shard_file_name(name, sizeof(name), (int)h->split, h->shard);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (shard_open_checked(path, &got, &fd, err, sizeof(err)) != 0)
		return 0;
	close(fd);
	/* an older version's shard lacks fields: repacked, never kept */
	return got.version == SHARD_VERSION && got.split == h->split && got.size == h->size &&
	       got.record_bytes == h->record_bytes && got.first_record == h->first_record && got.count == h->count &&
	       got.shard == h->shard && got.shards == h->shards && got.plan_crc == h->plan_crc;
}

int shard_dir_is_pack(const char *dir)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, SHARD_INDEX_NAME);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
