/* data/sets/path_check.c - refuses image paths that leave the data directory
 * (see data/sets/path_check.h).
 * What it does not do: touch the file system.
 */
#include <stddef.h>
#include <string.h>

#include "data/sets/path_check.h"

const char *data_path_check(const char *path)
{
	if (!path[0])
		return "empty";
	if (path[0] == '/')
		return "absolute path: must be relative to the data directory";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0)
			return "empty path component";
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return "'.' or '..' component: must stay inside the data directory";
		p += n;
		if (*p == '/' && !*++p)
			return "ends with '/'";
	}
	return NULL;
}
