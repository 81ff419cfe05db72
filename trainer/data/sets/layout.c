/* data/sets/layout.c - data_set_open (set.h): picks a data directory's
 * layout (generic when train.csv is there, else NIH) and hands it to
 * generic.c or nih.c, with the set's key (split_key.h) read or made
 * first. It sits above both, so they (and patient.c) may use
 * set.c's image lookup without a call cycle.
 * What it does not do: read a label table (nih.c, generic.c, list.c).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data/sets/set.h"
#include "data/sets/split_key.h"

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
	if (data_split_key(dir, set->patient_key, err, err_bytes) != 0)
		return -1;
	int rc;
	if (file_exists(dir, "train.csv"))
		rc = data_generic_open(set, dir, val_fraction, err, err_bytes);
	else
		rc = data_nih_open(set, dir, val_fraction, err, err_bytes);
	if (rc != 0)
		data_set_free(set);
	return rc;
}
