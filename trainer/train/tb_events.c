/* train/tb_events.c - TensorBoard event records encoded and decoded by
 * hand (tb_events.h): the few protobuf fields needed, varints, fixed
 * 32/64-bit values and length-delimited fields.
 * What it does not do: any other protobuf message.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/regular_file.h"
#include "train/tb_events.h"

#define PREFIX "events.out.tfevents."
#define RECORD_MAX (1u << 24)

static uint32_t masked_crc(const void *p, size_t n)
{
	uint32_t c = crc32c(0, p, n);

	return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put_varint(struct buf *o, uint64_t v)
{
	do {
		o->b[o->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void put_fixed(struct buf *o, const void *v, size_t bytes)  /* little-endian host */
{
	memcpy(o->b + o->n, v, bytes);
	o->n += bytes;
}

static void put_bytes(struct buf *o, int field, const void *p, size_t len)
{
	put_varint(o, (uint64_t)field << 3 | 2);
	put_varint(o, len);
	put_fixed(o, p, len);
}

static void encode(const struct tb_event *e, struct buf *o)
{
	struct buf summary = { .n = 0 }, value;

	put_varint(o, 1 << 3 | 1);
	put_fixed(o, &e->wall_time, 8);
	put_varint(o, 2 << 3 | 0);
	put_varint(o, (uint64_t)e->step);
	if (e->file_version)
		put_bytes(o, 3, "brain.Event:2", 13);
	for (int i = 0; i < e->count; i++) {
		value.n = 0;
		put_bytes(&value, 1, e->values[i].tag, strlen(e->values[i].tag));
		put_varint(&value, 2 << 3 | 5);
		put_fixed(&value, &e->values[i].value, 4);
		put_bytes(&summary, 1, value.b, value.n);
	}
	if (e->count)
		put_bytes(o, 5, summary.b, summary.n);
	if (e->session_start) {
		const uint8_t start[2] = { 1 << 3 | 0, 1 };
		put_bytes(o, 7, start, 2);
	}
}

int tb_events_write(FILE *f, const struct tb_event *e, struct trainer_error *err)
{
	static struct buf o;
	uint8_t head[12];
	uint64_t len;

	o.n = 0;
	encode(e, &o);
	len = o.n;
	memcpy(head, &len, 8);
	uint32_t hc = masked_crc(head, 8), dc = masked_crc(o.b, o.n);
	memcpy(head + 8, &hc, 4);
	if (fwrite(head, 1, 12, f) != 12 || fwrite(o.b, 1, o.n, f) != o.n ||
	    fwrite(&dc, 1, 4, f) != 4 || fflush(f) != 0)
		return trainer_error_set(err, "tensorboard: event file: write: %s", strerror(errno));
	return 0;
}

/* The largest SECONDS among dir's event files (0 when none). */
static long newest(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	long best = 0;

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) == 0) {
			long s = strtol(de->d_name + strlen(PREFIX), NULL, 10);
			best = s > best ? s : best;
		}
	}
	if (d)
		closedir(d);
	return best;
}

FILE *tb_events_create(const char *dir, const char *host, char *path, size_t path_len,
		       struct trainer_error *err)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		trainer_error_set(err, "tensorboard: '%s': %s", dir, strerror(errno));
		return NULL;
	}
	long now = (long)time(NULL), last = newest(dir);
	snprintf(path, path_len, "%s/" PREFIX "%010ld.%s.%ld", dir, now > last ? now : last + 1,
		 host, (long)getpid());
	FILE *f = fopen(path, "wbx");
	struct tb_event first = { .wall_time = (double)now, .file_version = 1 };
	if (!f || tb_events_write(f, &first, err)) {
		if (!f)
			trainer_error_set(err, "tensorboard: '%s': %s", path, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	return f;
}

/* Decoding: a cursor over [p, end). */
struct cur {
	const uint8_t *p, *end;
};

static int get_varint(struct cur *c, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end)
			return -1;
		uint8_t b = *c->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* The next field: number, wire type, and for type 2 its [*sub, +len). */
static int get_field(struct cur *c, int *field, int *type, struct cur *sub)
{
	uint64_t key, len;

	if (get_varint(c, &key))
		return -1;
	*field = (int)(key >> 3);
	*type = (int)(key & 7);
	sub->p = c->p;
	switch (*type) {
	case 0:
		return get_varint(c, &len);
	case 1:
	case 5:
		len = *type == 1 ? 8 : 4;
		break;
	case 2:
		if (get_varint(c, &len))
			return -1;
		sub->p = c->p;
		break;
	default:
		return -1;
	}
	if (len > (uint64_t)(c->end - c->p))
		return -1;
	c->p += len;
	sub->end = c->p;
	return 0;
}

static const char *decode_value(struct cur v, struct tb_event *e)
{
	struct cur sub;
	int field, type, have = 0;
	struct tb_value *out = &e->values[e->count];

	if (e->count == TB_VALUES_MAX)
		return "more summary values than expected";
	memset(out, 0, sizeof(*out));
	while (v.p < v.end) {
		if (get_field(&v, &field, &type, &sub))
			return "malformed summary value";
		if (field == 1 && type == 2) {
			size_t n = (size_t)(sub.end - sub.p);
			if (n >= TB_TAG_MAX || memchr(sub.p, '\0', n))
				return "tag too long or not text";
			memcpy(out->tag, sub.p, n);
			out->tag[n] = '\0';
		} else if (field == 2 && type == 5) {
			memcpy(&out->value, sub.p, 4);
			have = 1;
		}
	}
	if (have)
		e->count++;
	return NULL;
}

static const char *decode_fields(struct cur c, struct tb_event *e)
{
	struct cur sub, inner;
	int field, type, f2, t2;
	uint64_t v;

	while (c.p < c.end) {
		if (get_field(&c, &field, &type, &sub))
			return "malformed field";
		if (field == 1 && type == 1)
			memcpy(&e->wall_time, sub.p, 8);
		else if (field == 2 && type == 0 && (inner = sub, get_varint(&inner, &v) == 0))
			e->step = (int64_t)v;
		else if (field == 3 && type == 2)
			e->file_version = 1;
		else if (field == 5 && type == 2) {
			while (sub.p < sub.end) {
				if (get_field(&sub, &f2, &t2, &inner))
					return "malformed summary";
				const char *why = f2 == 1 && t2 == 2 ? decode_value(inner, e) : NULL;
				if (why)
					return why;
			}
		} else if (field == 7 && type == 2) {
			while (sub.p < sub.end) {
				if (get_field(&sub, &f2, &t2, &inner))
					return "malformed session log";
				if (f2 == 1 && t2 == 0 && get_varint(&inner, &v) == 0 && v == 1)
					e->session_start = 1;
			}
		}
	}
	return NULL;
}

int tb_event_decode(const uint8_t *p, size_t len, struct tb_event *e, const char **why)
{
	struct cur c = { p, p + len };

	memset(e, 0, sizeof(*e));
	*why = decode_fields(c, e);
	return *why ? -1 : 0;
}

/* One record at *off of the file image; 1 done, 0 at the end, -1 why,
 * -2 why when the record is only cut short (the file ends inside it). */
static int next_record(const uint8_t *img, size_t size, size_t *off, struct tb_event *e,
		       const char **why)
{
	uint64_t len;
	uint32_t crc;

	if (*off == size)
		return 0;
	if (size - *off < 12)
		return *why = "truncated record header", -2;
	memcpy(&len, img + *off, 8);
	memcpy(&crc, img + *off + 8, 4);
	if (crc != masked_crc(img + *off, 8))
		return *why = "length CRC mismatch", -1;
	if (len > RECORD_MAX)
		return *why = "oversized record", -1;
	if (len + 4 > size - *off - 12)
		return *why = "truncated record", -2;
	const uint8_t *data = img + *off + 12;
	memcpy(&crc, data + len, 4);
	if (crc != masked_crc(data, len))
		return *why = "data CRC mismatch", -1;
	*off += 12 + len + 4;
	return tb_event_decode(data, len, e, why) ? -1 : 1;
}

static uint8_t *slurp(const char *path, size_t *size, struct trainer_error *err)
{
	char why[128];
	FILE *f = regular_fopen(path, 0, why, sizeof(why));
	struct stat sb;
	uint8_t *img = NULL;

	if (!f || fstat(fileno(f), &sb) != 0) {
		trainer_error_set(err, "tensorboard: '%s': %s", path, f ? strerror(errno) : why);
		if (f)
			fclose(f);
		return NULL;
	}
	*size = (size_t)sb.st_size;
	img = malloc(*size + 1);
	if (!img || fread(img, 1, *size, f) != *size) {
		trainer_error_set(err, "tensorboard: '%s': %s", path, img ? "read error" : "out of memory");
		free(img);
		img = NULL;
	}
	fclose(f);
	return img;
}

int tb_events_read(const char *path, int (*each)(const struct tb_event *e, void *user),
		   void *user, struct trainer_error *err)
{
	return tb_events_read_torn(path, each, user, NULL, err);
}

int tb_events_read_torn(const char *path, int (*each)(const struct tb_event *e, void *user),
			void *user, struct tb_tear *tear, struct trainer_error *err)
{
	static struct tb_event e;
	size_t size = 0, off = 0, at = 0;
	const char *why = NULL;
	uint8_t *img = slurp(path, &size, err);
	int rc;

	if (!img)
		return -1;
	if (tear)
		*tear = (struct tb_tear){ .complete = size, .size = size };
	while ((rc = next_record(img, size, &off, &e, &why)) == 1) {
		if (at == 0 && !e.file_version) {
			why = "the first record holds no file_version";
			rc = -1;
			break;
		}
		if (each && each(&e, user)) {
			why = "rejected by the reader";
			rc = -1;
			break;
		}
		at = off;
	}
	free(img);
	if (tear && (rc == -2 || size == 0)) {
		tear->torn = 1;
		tear->complete = at;
		return 0;
	}
	if (rc == 0 && at == 0)
		why = "empty", rc = -1;
	if (rc)
		return trainer_error_set(err, "tensorboard: '%s': record at byte %zu: %s", path, at, why);
	return 0;
}
