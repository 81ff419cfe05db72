/* data/sets/set.c - picks the layout of a data directory, finds image files,
 * What it does not do: grow entry lists or walk a label table (list.c),
 * give columns a meaning (nih.c, generic.c) or split by patient (split.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/sets/set.h"

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
