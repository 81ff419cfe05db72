/* data_set.c - picks the layout of a data directory, finds image files,
 * grows entry lists, walks a label table row by row. What it does not do:
 * give columns a meaning (data_nih.c, data_generic.c) or split by patient
 * (data_split.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/csv.h"
#include "data/set.h"

struct data_entry *data_list_push(struct data_list *l)
{
	if (l->count == l->capacity) {
		size_t cap = l->capacity ? l->capacity * 2 : 1024;
		struct data_entry *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return NULL;
		l->items = items;
		l->capacity = cap;
	}
	struct data_entry *e = &l->items[l->count++];
	memset(e, 0, sizeof(*e));
	return e;
}

void data_list_free(struct data_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int data_list_read_table(const char *path, data_header_fn header, data_row_fn row, void *ctx,
			 struct data_list *out, char *err, size_t err_bytes)
{
	struct csv_reader *r = csv_open_new(path, err, err_bytes);
	int rc = -1, got;
	if (!r)
		return -1;
	got = csv_next(r, err, err_bytes);
	if (got == 0)
		snprintf(err, err_bytes, "chexnet: '%s': empty file", path);
	if (got <= 0 || header(r, ctx, err, err_bytes) != 0)
		goto out;
	while ((got = csv_next(r, err, err_bytes)) == 1) {
		struct data_entry *e = data_list_push(out);
		if (!e) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: out of memory", path, r->line);
			goto out;
		}
		if (row(r, ctx, e, err, err_bytes) != 0)
			goto out;
	}
	rc = got;  /* 0 at the end of the file, -1 read error */
out:
	csv_free(r);
	return rc;
}

static int file_exists(const char *dir, const char *name)
{
	char path[8192];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int data_set_open(struct data_set *set, const char *dir, double val_fraction,
		  char *err, size_t err_bytes)
{
	struct stat st;
	memset(set, 0, sizeof(*set));
	if (val_fraction < 0 || val_fraction >= 1) {
		snprintf(err, err_bytes, "chexnet: val fraction '%g': must be in [0, 1)", val_fraction);
		return -1;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, err_bytes, "chexnet: data dir '%s': not a directory", dir);
		return -1;
	}
	snprintf(set->root, sizeof(set->root), "%s", dir);
	int rc;
	if (file_exists(dir, "train.csv"))
		rc = data_generic_open(set, dir, val_fraction, err, err_bytes);
	else
		rc = data_nih_open(set, dir, val_fraction, err, err_bytes);
	if (rc != 0)
		data_set_free(set);
	return rc;
}

int data_set_image_path(const struct data_set *set, const struct data_entry *e,
			char *path, size_t path_bytes, char *err, size_t err_bytes)
{
	for (int d = 0; d < set->image_dir_count; d++) {
		snprintf(path, path_bytes, "%s/%s", set->image_dirs[d], e->name);
		if (access(path, R_OK) == 0)
			return 0;
	}
	snprintf(err, err_bytes, "chexnet: image '%s': not found in %s%s", e->name,
		 set->image_dir_count ? set->image_dirs[0] : set->root,
		 set->image_dir_count > 1 ? " (nor the other image dirs)" : "");
	return -1;
}

void data_set_free(struct data_set *set)
{
	for (int s = 0; s < 3; s++)
		data_list_free(&set->split[s]);
}
