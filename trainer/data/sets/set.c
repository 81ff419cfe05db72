/* data/sets/set.c - a data set's own operations (set.h): where an
 * entry's image file is, and freeing the set.
 * What it does not do: pick a layout (layout.c), grow entry lists or walk
 * a label table (list.c), give columns a meaning (nih.c, generic.c) or
 * split by patient (split.c).
 */
#include <stdio.h>
#include <unistd.h>

#include "data/sets/set.h"

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
