/* core/csv_list.c - csv_listed, csv_append (csv_list.h). */
#include <stdio.h>
#include <string.h>

#include "core/csv_list.h"

int csv_listed(const char *list, const char *s, size_t n)
{
	for (const char *a = list; *a; a += strcspn(a, ",") + (a[strcspn(a, ",")] == ','))
		if (strcspn(a, ",") == n && strncmp(a, s, n) == 0)
			return 1;
	return 0;
}

int csv_append(char *out, size_t len, const char *s)
{
	size_t used = strlen(out);

	if (csv_listed(out, s, strlen(s)) || used + strlen(s) + 2 > len)
		return 0;
	snprintf(out + used, len - used, "%s%s", used ? "," : "", s);
	return 1;
}
