/* cmd/recipe_none.c - recipe_read.h in a build without libyaml
 * (WITH_YAML=0, or libyaml-dev or nettle-dev missing): every file is
 * refused in one line that says how to get the feature.
 */
#include "cmd/recipe_read.h"

int recipe_read(const char *path, struct yaml_map *m, int *record, char sha256[65],
		struct trainer_error *err)
{
	(void)m;
	(void)record;
	sha256[0] = '\0';
	return trainer_error_set(err, "'%s': this chexnet was built without recipe files "
				 "(feature WITH_YAML: install libyaml-dev and nettle-dev and rebuild)",
				 path);
}
