/* data/sets/generic.c - the generic layout: train.csv, test.csv, optional
 * val.csv with `path,<14 class names>[,patient]` and 0/1 labels.
 * DICOM images' patients come from their Patient IDs (data/sets/patient.h);
 * without a patient column any other image is a patient of its own, its
 * number the keyed hash of its path (data/sets/split_key.h).
 * What it does not do: guess columns (the header must name the 14 classes
 * in CheXNet order).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/sets/csv.h"
#include "data/sets/labels.h"
#include "data/sets/path_check.h"
#include "data/sets/patient.h"
#include "data/sets/set.h"
#include "data/sets/split.h"

static int generic_header(const struct csv_reader *r, void *ctx, char *err, size_t err_bytes)
{
	int *has_patient = ctx;
	int n = r->count;
	if (n != 1 + CHEXNET_CLASSES && n != 2 + CHEXNET_CLASSES) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: header has %d fields, expected path + %d classes [+ patient]",
			 r->path, r->line, n, CHEXNET_CLASSES);
		return -1;
	}
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		if (strcmp(r->fields[1 + c], data_class_names[c]) != 0) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: column '%s': expected '%s'",
				 r->path, r->line, r->fields[1 + c], data_class_names[c]);
			return -1;
		}
	*has_patient = (n == 2 + CHEXNET_CLASSES);
	if (*has_patient && strcmp(r->fields[n - 1], "patient") != 0) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: column '%s': expected 'patient'",
			 r->path, r->line, r->fields[n - 1]);
		return -1;
	}
	return 0;
}

static int generic_row(const struct csv_reader *r, void *ctx, struct data_entry *e,
		       char *err, size_t err_bytes)
{
	const int has_patient = *(const int *)ctx;
	int want = 1 + CHEXNET_CLASSES + has_patient;
	if (r->count != want) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: %d fields, expected %d",
			 r->path, r->line, r->count, want);
		return -1;
	}
	if (!r->fields[0][0] || strlen(r->fields[0]) >= DATA_NAME_BYTES) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: path '%s': empty or longer than %d bytes",
			 r->path, r->line, r->fields[0], DATA_NAME_BYTES - 1);
		return -1;
	}
	const char *why = data_path_check(r->fields[0]);
	if (why) {
		snprintf(err, err_bytes, "chexnet: '%s' line %ld: path '%s': %s",
			 r->path, r->line, r->fields[0], why);
		return -1;
	}
	snprintf(e->name, sizeof(e->name), "%s", r->fields[0]);
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		const char *v = r->fields[1 + c];
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: label '%s' (%s): expected 0 or 1",
				 r->path, r->line, v, data_class_names[c]);
			return -1;
		}
		e->labels |= (uint16_t)((v[0] == '1') << c);
	}
	e->patient = (uint32_t)r->line;
	if (has_patient) {
		char *end;
		const char *p = r->fields[want - 1];
		unsigned long v = strtoul(p, &end, 10);
		if (*p < '0' || *p > '9' || *end || v > UINT32_MAX) {
			snprintf(err, err_bytes, "chexnet: '%s' line %ld: patient '%s': not a number",
				 r->path, r->line, p);
			return -1;
		}
		e->patient = (uint32_t)v;
	}
	return 0;
}

/* *has_patient &= whether the file has a patient column. */
static int generic_read(const char *path, struct data_list *out, int *all_have_patient,
			char *err, size_t err_bytes)
{
	int has_patient = 0;   /* set by the header, read by every row */
	int rc = data_list_read_table(path, generic_header, generic_row, &has_patient, out,
				      err, err_bytes);
	*all_have_patient &= has_patient;
	return rc;
}

int data_generic_open(struct data_set *set, const char *dir, double val_fraction,
		      char *err, size_t err_bytes)
{
	char path[4200];
	struct stat st;
	int has_patient = 1, has_val;
	snprintf(set->image_dirs[set->image_dir_count++], sizeof(set->image_dirs[0]), "%s", dir);
	snprintf(path, sizeof(path), "%s/train.csv", dir);
	if (generic_read(path, &set->split[0], &has_patient, err, err_bytes) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/test.csv", dir);
	if (generic_read(path, &set->split[2], &has_patient, err, err_bytes) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/val.csv", dir);
	has_val = stat(path, &st) == 0;
	if (has_val && generic_read(path, &set->split[1], &has_patient, err, err_bytes) != 0)
		return -1;
	for (int s = 0; !has_patient && s < 3; s++)   /* one image, one patient: its path's */
		for (size_t i = 0; i < set->split[s].count; i++)
			set->split[s].items[i].patient = data_patient_number(set->patient_key,
									     set->split[s].items[i].name);
	if (data_patient_from_dicom(set, has_patient, err, err_bytes) != 0)
		return -1;
	if (!has_val && data_split_by_patient(&set->split[0], &set->split[1], set->patient_key, val_fraction) != 0) {
		snprintf(err, err_bytes, "chexnet: '%s': out of memory", dir);
		return -1;
	}
	return 0;
}
