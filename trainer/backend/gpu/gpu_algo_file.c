/* gpu_algo_file.c - the per-user cache file of timed convolution
 * algorithms (gpu_algo_file.h): its name, strict parse, format and
 * checked write. Numbers are read with strtoll and range-checked one by
 * one; any fault refuses the whole file.
 * What it does not do: print (the caller says it ignored the file) or
 * decide what a choice is worth.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/gpu/gpu_algo_file.h"
#include "base/regular_file.h"
#include "base/whole_file.h"

#define HEADER "chexnet-conv-algorithms 1\n"
#define FIELDS 19
#define SIDE_MAX (1LL << 20)          /* channels, sides, batch */

void gpu_algo_file_path(const char *folder, const char *device, char *out, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (const unsigned char *p = (const unsigned char *)device; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	snprintf(out, len, "%s/conv-algorithms-%016llx.txt", folder, (unsigned long long)h);
}

/* Field i's range. */
static void range_of(int i, long long *lo, long long *hi)
{
	static const long long ranges[FIELDS][2] = {
		{ 0, 2 }, { 0, 3 }, { 0, 3 }, { 0, 1 }, { 0, 1 },          /* dir dtype math layout any */
		{ 1, SIDE_MAX }, { 1, SIDE_MAX }, { 1, SIDE_MAX }, { 1, SIDE_MAX },   /* n c h w */
		{ 1, SIDE_MAX }, { 1, 64 }, { 1, 64 }, { 0, 64 },          /* k r stride pad */
		{ 1, 1LL << 50 }, { 1, 1LL << 50 }, { 0, 1LL << 50 },     /* xs ys budget */
		{ 0, 63 }, { 0, 3 }, { 0, 1LL << 50 },                      /* algo math bytes */
	};
	*lo = ranges[i][0];
	*hi = ranges[i][1];
}

/* One entry line (NUL-terminated, no newline) into v. 0, or -1 with why. */
static int parse_line(const char *line, long long v[FIELDS], char *why, size_t len)
{
	const char *p = line;

	for (int i = 0; i < FIELDS; i++) {
		char *end;
		long long lo, hi;
		if (i && *p++ != ' ')
			return snprintf(why, len, "expected %d numbers", FIELDS), -1;
		if (*p < '0' || *p > '9')
			return snprintf(why, len, "expected %d numbers", FIELDS), -1;
		errno = 0;
		v[i] = strtoll(p, &end, 10);
		range_of(i, &lo, &hi);
		if (errno || v[i] < lo || v[i] > hi)
			return snprintf(why, len, "number %d out of range", i + 1), -1;
		p = end;
	}
	if (*p)
		return snprintf(why, len, "expected %d numbers", FIELDS), -1;
	if (v[18] > v[15])
		return snprintf(why, len, "workspace over the budget"), -1;
	return 0;
}

static void entry_of(const long long v[FIELDS], struct gpu_conv_key *k, struct gpu_algo_choice *c)
{
	*k = (struct gpu_conv_key){
		.dir = (int32_t)v[0], .dtype = (int32_t)v[1], .math = (int32_t)v[2],
		.layout = (int32_t)v[3], .any = (int32_t)v[4], .n = (int32_t)v[5],
		.c = (int32_t)v[6], .h = (int32_t)v[7], .w = (int32_t)v[8], .k = (int32_t)v[9],
		.r = (int32_t)v[10], .stride = (int32_t)v[11], .pad = (int32_t)v[12],
		.x_image_stride = v[13], .y_image_stride = v[14], .budget = v[15],
	};
	*c = (struct gpu_algo_choice){ .algo = (int)v[16], .math_type = (int)v[17],
				       .workspace_bytes = (size_t)v[18] };
}

/* The next line of text[*at, bytes) into line[len]: 1, 0 at the end, -1 too long or
 * unterminated or holding a NUL. */
static int next_line(const char *text, size_t bytes, size_t *at, char *line, size_t len)
{
	if (*at >= bytes)
		return 0;
	const char *nl = memchr(text + *at, '\n', bytes - *at);
	size_t n = nl ? (size_t)(nl - (text + *at)) : 0;
	if (!nl || n >= len || memchr(text + *at, '\0', n))
		return -1;
	memcpy(line, text + *at, n);
	line[n] = '\0';
	*at += n + 1;
	return 1;
}

int gpu_algo_file_parse(const char *text, size_t bytes, const char *device,
			struct gpu_algo_cache *out, char *why, size_t len)
{
	char line[512], want[GPU_ALGO_DEVICE_MAX + 16];
	size_t at = strlen(HEADER);
	long long v[FIELDS];
	int n = 2, got;

	gpu_algo_cache_init(out);
	if (bytes < at || memcmp(text, HEADER, at))
		return snprintf(why, len, "not a chexnet-conv-algorithms 1 file"), -1;
	snprintf(want, sizeof(want), "device %s", device);
	if (next_line(text, bytes, &at, line, sizeof(line)) != 1 || strcmp(line, want))
		return snprintf(why, len, "line 2: made for another device"), -1;
	while ((got = next_line(text, bytes, &at, line, sizeof(line))) == 1) {
		struct gpu_conv_key k;
		struct gpu_algo_choice c;
		char what[64];
		n++;
		if (parse_line(line, v, what, sizeof(what)))
			return snprintf(why, len, "line %d: %s", n, what), -1;
		entry_of(v, &k, &c);
		if (gpu_algo_cache_find(out, &k))
			return snprintf(why, len, "line %d: a key seen before", n), -1;
		if (gpu_algo_cache_put(out, &k, &c))
			return snprintf(why, len, "line %d: more than %d entries", n,
					GPU_ALGO_CACHE_SLOTS), -1;
	}
	out->hits = out->misses = 0;
	return got ? (snprintf(why, len, "line %d: too long, or not ended by a newline", n + 1), -1)
		   : 0;
}

int gpu_algo_file_read(const char *path, const char *device, struct gpu_algo_cache *out,
		       char *why, size_t len)
{
	struct stat st;
	char *text;
	size_t got;

	gpu_algo_cache_init(out);
	if (lstat(path, &st) && errno == ENOENT)
		return 1;
	FILE *f = regular_fopen(path, 0, why, len);
	if (!f)
		return -1;
	if (fstat(fileno(f), &st) || st.st_uid != geteuid()) {
		fclose(f);
		return snprintf(why, len, "not this user's file"), -1;
	}
	if (!(text = malloc(GPU_ALGO_FILE_MAX + 1))) {
		fclose(f);
		return snprintf(why, len, "out of memory"), -1;
	}
	got = fread(text, 1, GPU_ALGO_FILE_MAX + 1, f);
	int bad = ferror(f);
	fclose(f);
	int rc = bad ? (snprintf(why, len, "read error"), -1)
	       : got > GPU_ALGO_FILE_MAX ? (snprintf(why, len, "over %zu bytes", GPU_ALGO_FILE_MAX), -1)
	       : gpu_algo_file_parse(text, got, device, out, why, len);
	free(text);
	return rc;
}

char *gpu_algo_file_format(const struct gpu_algo_cache *c, const char *device)
{
	size_t cap = strlen(HEADER) + strlen(device) + 16 + (size_t)c->count * 400, used;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	used = (size_t)snprintf(text, cap, HEADER "device %s\n", device);
	for (int s = 0; s < GPU_ALGO_CACHE_SLOTS && used < cap; s++) {
		const struct gpu_conv_key *k = &c->slot[s].key;
		const struct gpu_algo_choice *a = &c->slot[s].choice;
		if (!c->slot[s].used)
			continue;
		used += (size_t)snprintf(text + used, cap - used,
			"%d %d %d %d %d %d %d %d %d %d %d %d %d %lld %lld %lld %d %d %zu\n",
			k->dir, k->dtype, k->math, k->layout, k->any, k->n, k->c, k->h, k->w, k->k, k->r,
			k->stride, k->pad, (long long)k->x_image_stride, (long long)k->y_image_stride,
			(long long)k->budget, a->algo, a->math_type, a->workspace_bytes);
	}
	return text;
}

/* folder and its parent, each made 0700 when missing. */
static int make_folder(const char *folder, char *why, size_t len)
{
	char parent[4096];
	const char *slash = strrchr(folder, '/');

	if (slash && slash > folder && (size_t)(slash - folder) < sizeof(parent)) {
		memcpy(parent, folder, (size_t)(slash - folder));
		parent[slash - folder] = '\0';
		if (mkdir(parent, 0700) && errno != EEXIST)
			return snprintf(why, len, "'%s': %s", parent, strerror(errno)), -1;
	}
	if (mkdir(folder, 0700) && errno != EEXIST)
		return snprintf(why, len, "'%s': %s", folder, strerror(errno)), -1;
	return 0;
}

int gpu_algo_file_write(const char *folder, const char *path, const struct gpu_algo_cache *c,
			const char *device, char *why, size_t len)
{
	char *text;

	if (make_folder(folder, why, len))
		return -1;
	if (!(text = gpu_algo_file_format(c, device)))
		return snprintf(why, len, "out of memory"), -1;
	int rc = whole_file_put(path, text, 0644);
	if (rc)
		snprintf(why, len, "'%s': %s", path, whole_file_why(errno));
	free(text);
	return rc;
}
