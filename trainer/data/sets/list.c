/* list.c - entry lists (list.h): grow one, free one, fill one from a
 * label table row by row. What it does not do: give columns a meaning
 * (nih.c, generic.c) or find a data set's files (set.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sets/csv.h"
#include "data/sets/list.h"

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
