/* data/sets/nih.c - the NIH ChestX-ray14 layout: Data_Entry CSV (both
 * published variants), train_val/test lists, image folders.
 * What it does not do: decode images.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/sets/csv.h"
#include "data/sets/labels.h"
#include "data/sets/path_check.h"
#include "data/sets/set.h"
#include "data/sets/split.h"
#include "data/sets/view.h"

#define NIH_FIELDS 11

static int parse_patient(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* 11 fields, or 12 whose last is empty (Data_Entry_2017.csv ends rows with ','). */
static int nih_field_count_ok(const struct csv_reader *r)
{
	return r->count == NIH_FIELDS || (r->count == NIH_FIELDS + 1 && !r->fields[NIH_FIELDS][0]);
}

static int nih_check_header(const struct csv_reader *r, void *ctx, char *err, size_t err_bytes)
{
	(void)ctx;
	if (!nih_field_count_ok(r)) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: header has %d fields, expected %d",
			 r->path, r->line, r->count, NIH_FIELDS);
		return -1;
	}
	if (strcmp(r->fields[0], "Image Index") || strcmp(r->fields[1], "Finding Labels") ||
	    strcmp(r->fields[3], "Patient ID")) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: '%s': not a Data_Entry header "
			 "(expected Image Index,Finding Labels,Follow-up #,Patient ID,...)",
			 r->path, r->line, r->fields[0]);
		return -1;
	}
	return 0;
}

static int nih_parse_row(const struct csv_reader *r, void *ctx, struct data_entry *e,
			 char *err, size_t err_bytes)
{
	(void)ctx;
	char bad[256];
	if (!nih_field_count_ok(r)) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: %d fields, expected %d",
			 r->path, r->line, r->count, NIH_FIELDS);
		return -1;
	}
	const char *name = r->fields[0];
	if (!name[0] || strlen(name) >= DATA_NAME_BYTES || strchr(name, '/') || data_path_check(name)) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: image index '%s': not a file name",
			 r->path, r->line, name);
		return -1;
	}
	if (data_labels_parse(r->fields[1], &e->labels, bad, sizeof(bad)) != 0) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: label '%s': unknown or repeated",
			 r->path, r->line, bad);
		return -1;
	}
	if (parse_patient(r->fields[3], &e->patient) != 0) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: patient id '%s': not a number",
			 r->path, r->line, r->fields[3]);
		return -1;
	}
	memcpy(e->name, name, strlen(name) + 1);
	e->view = data_view_code(r->fields[6]);   /* View Position */
	return 0;
}

int data_nih_read_entries(const char *csv_path, struct data_list *out,
			  char *err, size_t err_bytes)
{
	return data_list_read_table(csv_path, nih_check_header, nih_parse_row, NULL, out,
				    err, err_bytes);
}

static int find_first(const char *dir, const char *const *names, char *path, size_t bytes)
{
	struct stat st;
	for (; *names; names++) {
		snprintf(path, bytes, "%s/%s", dir, *names);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	return -1;
}

static void nih_find_image_dirs(struct data_set *set)
{
	struct stat st;
	char path[4200];
	snprintf(path, sizeof(path), "%s/images", set->root);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		memcpy(set->image_dirs[set->image_dir_count++], path, sizeof(path));
	for (int i = 1; i <= 12; i++) {
		snprintf(path, sizeof(path), "%s/images_%03d/images", set->root, i);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			memcpy(set->image_dirs[set->image_dir_count++], path, sizeof(path));
	}
	snprintf(set->image_dirs[set->image_dir_count++], sizeof(path), "%s", set->root);
}

static int cmp_entry_name(const void *a, const void *b)
{
	const struct data_entry *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* Appends the entries named by list file path to out, each at most once. */
static int nih_read_list(const char *path, struct data_entry **by_name, size_t n,
			 uint8_t *used, struct data_list *out, char *err, size_t err_bytes)
{
	struct csv_reader *r = csv_open_new(path, err, err_bytes);
	int rc = -1, got;
	if (!r)
		return -1;
	while ((got = csv_next_raw(r, err, err_bytes)) == 1) {
		struct data_entry key, *kp = &key, **hit;
		if (strlen(r->buf) >= sizeof(key.name)) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: image '%.60s...': longer than %zu bytes",
				 path, r->line, r->buf, sizeof(key.name) - 1);
			goto out;
		}
		snprintf(key.name, sizeof(key.name), "%s", r->buf);
		hit = bsearch(&kp, by_name, n, sizeof(*by_name), cmp_entry_name);
		if (!hit) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: image '%s': not in the Data_Entry CSV",
				 path, r->line, r->buf);
			goto out;
		}
		size_t at = (size_t)(hit - by_name);
		if (used[at]) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: image '%s': listed twice",
				 path, r->line, r->buf);
			goto out;
		}
		used[at] = 1;
		struct data_entry *e = data_list_push(out);
		if (!e) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: out of memory", path, r->line);
			goto out;
		}
		*e = **hit;
	}
	rc = got;
out:
	csv_free(r);
	return rc;
}

int data_nih_open(struct data_set *set, const char *dir, double val_fraction,
		  char *err, size_t err_bytes)
{
	static const char *const csv_names[] = {
		"Data_Entry_2017_v2020.csv", "Data_Entry_2017.csv",
		"Data_Entry_2017_v2020.csv.gz", "Data_Entry_2017.csv.gz", NULL };
	static const char *const train_names[] = { "train_val_list.txt", NULL };
	static const char *const test_names[] = { "test_list.txt", NULL };
	char csv[4200], train_path[4200], test_path[4200];
	struct data_list all = { 0 };
	struct data_entry **by_name = NULL;
	uint8_t *used = NULL;
	int rc = -1;
	if (find_first(dir, csv_names, csv, sizeof(csv)) != 0 ||
	    find_first(dir, train_names, train_path, sizeof(train_path)) != 0 ||
	    find_first(dir, test_names, test_path, sizeof(test_path)) != 0) {
		snprintf(err, err_bytes, "chexnet: data dir '%s': neither NIH layout (Data_Entry_2017[_v2020].csv, "
			 "train_val_list.txt, test_list.txt) nor generic (train.csv, test.csv)", dir);
		return -1;
	}
	if (data_nih_read_entries(csv, &all, err, err_bytes) != 0)
		goto out;
	by_name = malloc((all.count + 1) * sizeof(*by_name));
	used = calloc(all.count + 1, 1);
	if (!by_name || !used) {
		snprintf(err, err_bytes, "chexnet: '%s': out of memory", csv);
		goto out;
	}
	for (size_t i = 0; i < all.count; i++)
		by_name[i] = &all.items[i];
	qsort(by_name, all.count, sizeof(*by_name), cmp_entry_name);
	for (size_t i = 1; i < all.count; i++)
		if (strcmp(by_name[i - 1]->name, by_name[i]->name) == 0) {
			snprintf(err, err_bytes, "chexnet: '%s': image '%s': two rows", csv, by_name[i]->name);
			goto out;
		}
	if (nih_read_list(train_path, by_name, all.count, used, &set->split[0], err, err_bytes) != 0 ||
	    nih_read_list(test_path, by_name, all.count, used, &set->split[2], err, err_bytes) != 0)
		goto out;
	if (data_split_by_patient(&set->split[0], &set->split[1], set->patient_key, val_fraction) != 0) {
		snprintf(err, err_bytes, "chexnet: '%s': out of memory", dir);
		goto out;
	}
	nih_find_image_dirs(set);
	rc = 0;
out:
	free(by_name);
	free(used);
	data_list_free(&all);
	return rc;
}
