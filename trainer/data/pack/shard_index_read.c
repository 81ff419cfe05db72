/* data/pack/shard_index_read.c - the strict reader of index.txt (see
 * data/pack/shard_index_read.h): tokens split at single spaces, numbers through
 * one parser (digits only, range), the sequence and totals cross-checked.
 * What it does not do: open or check shard files.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/csv.h"
#include "data/pack/shard_index_read.h"

#define INDEX_MAX_TOKENS (2 + SHARD_COUNTS)

struct index_parse {
	const struct csv_reader *r;
	char *tok[INDEX_MAX_TOKENS + 1];
	int count;
	uint64_t records[3];    /* sum of the shard counts seen per split */
	uint32_t shards[3];     /* shard lines seen per split */
	int has_labels[3];
	int has_pixels, has_key, has_aspect;
	char *err;
	size_t err_bytes;
};

static int parse_error(struct index_parse *p, const char *field, const char *value, const char *why)
{
	snprintf(p->err, p->err_bytes, "chexnet: index '%s' line %ld: %s '%.80s': %s",
		 p->r->path, p->r->line, field, value, why);
	return -1;
}

/* Splits line at single spaces; an empty token is an error. */
static int split_tokens(struct index_parse *p, char *line)
{
	p->count = 0;
	for (char *s = line;; s++) {
		if (p->count == INDEX_MAX_TOKENS + 1)
			return parse_error(p, "line", line, "too many fields");
		p->tok[p->count++] = s;
		s += strcspn(s, " ");
		if (s == p->tok[p->count - 1])
			return parse_error(p, "line", p->r->buf, "empty field (two spaces, or a space at an end)");
		if (!*s)
			return 0;
		*s = 0;
	}
}

/* Token i as an unsigned decimal in min..max. */
static int parse_number(struct index_parse *p, int i, const char *field, uint64_t min, uint64_t max,
			uint64_t *out)
{
	const char *s = p->tok[i];
	uint64_t v = 0;
	char why[96];
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return parse_error(p, field, s, "not an unsigned decimal number");
	for (; *s; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return parse_error(p, field, p->tok[i], "out of range");
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < min || v > max) {
		snprintf(why, sizeof(why), "out of range %llu..%llu", (unsigned long long)min,
			 (unsigned long long)max);
		return parse_error(p, field, p->tok[i], why);
	}
	*out = v;
	return 0;
}

static int parse_split(struct index_parse *p, int i, int *split)
{
	for (int s = 0; s < 3; s++)
		if (strcmp(p->tok[i], shard_split_name(s)) == 0) {
			*split = s;
			return 0;
		}
	return parse_error(p, "split", p->tok[i], "expected train, val or test");
}

/* `shard SPLIT NUMBER FILE FIRST COUNT`, in sequence within its split. */
static int parse_shard(struct index_parse *p, struct shard_index *ix)
{
	struct shard_index_entry e = { 0 };
	uint64_t number, first, count;
	char want[SHARD_NAME_BYTES];
	if (p->count != 6)
		return parse_error(p, "shard line", p->r->buf, "expected 'shard SPLIT NUMBER FILE FIRST COUNT'");
	if (parse_split(p, 1, &e.split) != 0 ||
	    parse_number(p, 2, "shard number", 0, UINT32_MAX, &number) != 0 ||
	    parse_number(p, 4, "first record", 0, UINT32_MAX, &first) != 0 ||
	    parse_number(p, 5, "record count", 1, UINT32_MAX, &count) != 0)
		return -1;
	if (number != p->shards[e.split])
		return parse_error(p, "shard number", p->tok[2], "out of sequence");
	shard_file_name(want, sizeof(want), e.split, (uint32_t)number);
	if (strcmp(p->tok[3], want) != 0)
		return parse_error(p, "shard file", p->tok[3], "not the name of that shard");
	if (first != p->records[e.split])
		return parse_error(p, "first record", p->tok[4], "not where the previous shard ended");
	if (first + count > UINT32_MAX)
		return parse_error(p, "record count", p->tok[5], "more than 2^32-1 records in the split");
	struct shard_index_entry *more = realloc(ix->entries, (size_t)(ix->entry_count + 1) * sizeof(*more));
	if (!more)
		return parse_error(p, "shard line", p->tok[3], "out of memory");
	e.number = (uint32_t)number;
	e.first = first;
	e.count = (uint32_t)count;
	memcpy(e.file, want, sizeof(want));
	ix->entries = more;
	ix->entries[ix->entry_count++] = e;
	p->shards[e.split]++;
	p->records[e.split] += count;
	return 0;
}

/* `labels SPLIT RECORDS P0 ... P13`, once per split, positives <= RECORDS. */
static int parse_labels(struct index_parse *p, struct shard_index *ix)
{
	int split;
	uint64_t v[SHARD_COUNTS];
	if (p->count != 2 + SHARD_COUNTS)
		return parse_error(p, "labels line", p->r->buf, "expected 'labels SPLIT RECORDS P0 ... P13'");
	if (parse_split(p, 1, &split) != 0)
		return -1;
	if (p->has_labels[split])
		return parse_error(p, "labels split", p->tok[1], "given twice");
	if (parse_number(p, 2, "labels records", 0, UINT32_MAX, &v[0]) != 0)
		return -1;
	for (int c = 1; c < SHARD_COUNTS; c++)
		if (parse_number(p, 2 + c, "labels positives", 0, v[0], &v[c]) != 0)
			return -1;
	memcpy(ix->labels[split], v, sizeof(v));
	p->has_labels[split] = 1;
	return 0;
}

/* `pixels RULE`, at most once: how images became 8 bits (printable, no
 * spaces; absent in packs written before the rule was recorded). */
static int parse_pixels(struct index_parse *p, struct shard_index *ix)
{
	if (p->count != 2)
		return parse_error(p, "pixels line", p->r->buf, "expected 'pixels RULE'");
	if (p->has_pixels)
		return parse_error(p, "pixels line", p->tok[1], "given twice");
	const char *t = p->tok[1];
	if (strlen(t) >= sizeof(ix->pixels))
		return parse_error(p, "pixels rule", t, "too long");
	for (const char *c = t; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return parse_error(p, "pixels rule", t, "not printable ASCII");
	memcpy(ix->pixels, t, strlen(t) + 1);
	p->has_pixels = 1;
	return 0;
}

/* `aspect pad|squash`, at most once (absent: squash, the older packs). */
static int parse_aspect(struct index_parse *p, struct shard_index *ix)
{
	const char *t = p->count == 2 ? p->tok[1] : "";
	if (p->count != 2 || image_aspect_parse(t, &ix->aspect) != 0)
		return parse_error(p, "aspect line", t, "expected 'aspect pad' or 'aspect squash'");
	if (p->has_aspect)
		return parse_error(p, "aspect line", t, "given twice");
	p->has_aspect = 1;
	return 0;
}

/* `patient-key HEX`, at most once: 32 lowercase hex digits. */
static int parse_patient_key(struct index_parse *p, struct shard_index *ix)
{
	const char *t = p->count == 2 ? p->tok[1] : "";
	if (p->count != 2 || strlen(t) != 32 || strspn(t, "0123456789abcdef") != 32)
		return parse_error(p, "patient-key line", t, "expected 'patient-key' and 32 hex digits");
	if (p->has_key)
		return parse_error(p, "patient-key line", t, "given twice");
	for (int i = 0; i < 16; i++) {
		char byte[3] = { t[2 * i], t[2 * i + 1], 0 };
		ix->patient_key[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	ix->has_patient_key = p->has_key = 1;
	return 0;
}

static int parse_head(struct index_parse *p, struct csv_reader *r, struct shard_index *ix)
{
	uint64_t size;
	if (csv_next_raw(r, p->err, p->err_bytes) != 1 || strcmp(r->buf, "hvd-pack 1") != 0)
		return parse_error(p, "first line", r->buf, "expected 'hvd-pack 1'");
	if (csv_next_raw(r, p->err, p->err_bytes) != 1)
		return parse_error(p, "second line", r->buf, "expected 'size S'");
	if (split_tokens(p, r->buf) != 0)
		return -1;
	if (p->count != 2 || strcmp(p->tok[0], "size") != 0)
		return parse_error(p, "second line", r->buf, "expected 'size S'");
	if (parse_number(p, 1, "size", 1, 4096, &size) != 0)
		return -1;
	ix->size = (int)size;
	return 0;
}

/* Every split has its labels line, and it counts that split's records. */
static int check_totals(struct index_parse *p, const struct shard_index *ix)
{
	char value[32];
	for (int s = 0; s < 3; s++) {
		if (!p->has_labels[s]) {
			snprintf(p->err, p->err_bytes, "chexnet: index '%s': labels %s: missing",
				 p->r->path, shard_split_name(s));
			return -1;
		}
		if (ix->labels[s][0] != p->records[s]) {
			snprintf(value, sizeof(value), "%llu", (unsigned long long)ix->labels[s][0]);
			snprintf(p->err, p->err_bytes, "chexnet: index '%s': labels %s records '%s': "
				 "the shards of %s hold %llu", p->r->path, shard_split_name(s), value,
				 shard_split_name(s), (unsigned long long)p->records[s]);
			return -1;
		}
	}
	return 0;
}

int shard_index_read(const char *dir, struct shard_index *ix, char *err, size_t err_bytes)
{
	char path[4200];
	int got = -1;
	struct index_parse p = { .err = err, .err_bytes = err_bytes };
	memset(ix, 0, sizeof(*ix));
	ix->aspect = IMAGE_ASPECT_SQUASH;
	snprintf(path, sizeof(path), "%s/%s", dir, SHARD_INDEX_NAME);
	struct csv_reader *r = csv_open_new(path, err, err_bytes);
	if (!r)
		return -1;
	p.r = r;
	if (parse_head(&p, r, ix) != 0)
		goto out;
	while ((got = csv_next_raw(r, err, err_bytes)) == 1) {
		int rc;
		if (split_tokens(&p, r->buf) != 0)
			break;
		if (strcmp(p.tok[0], "shard") == 0)
			rc = parse_shard(&p, ix);
		else if (strcmp(p.tok[0], "labels") == 0)
			rc = parse_labels(&p, ix);
		else if (strcmp(p.tok[0], "pixels") == 0)
			rc = parse_pixels(&p, ix);
		else if (strcmp(p.tok[0], "patient-key") == 0)
			rc = parse_patient_key(&p, ix);
		else if (strcmp(p.tok[0], "aspect") == 0)
			rc = parse_aspect(&p, ix);
		else
			rc = parse_error(&p, "line", p.tok[0], "expected 'shard', 'labels', 'pixels', "
					 "'aspect' or 'patient-key'");
		if (rc != 0)
			break;
	}
	if (got == 0)
		got = check_totals(&p, ix);
out:
	csv_free(r);
	if (got != 0)
		shard_index_free(ix);
	return got == 0 ? 0 : -1;
}

void shard_index_free(struct shard_index *ix)
{
	free(ix->entries);
	memset(ix, 0, sizeof(*ix));
}
