/* xmlfile.c - is HWLOC_XMLFILE something hwloc can read (xmlfile.h)?
 * Only the cheap part: readable, not empty, XML at the start, a format
 * version this hwloc reads (hwloc 2.x refuses 3.0 files with only
 * EINVAL); whether it is a topology hwloc accepts is hwloc's to say.
 * What it does not do: parse XML or load hwloc.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmlfile.h"

int check_xmlfile(const char *path, char *why, size_t len)
{
	char head[256];
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "unreadable: %s", strerror(errno));
		return -1;
	}
	size_t n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = 0;
	size_t skip = strspn(head, " \t\r\n");
	if (n == 0 || skip == n) {
		snprintf(why, len, "empty");
		return -1;
	}
	if (head[skip] != '<') {
		snprintf(why, len, "not XML");
		return -1;
	}
	const char *v = strstr(head, "<topology version=\"");
	if (v && atoi(v + 19) > HWLOC_API_VERSION >> 16) {
		snprintf(why, len, "hwloc XML version %.3s, this hwloc " HWLOC_VERSION " reads up to 2.x",
			 v + 19);
		return -1;
	}
	return 0;
}
