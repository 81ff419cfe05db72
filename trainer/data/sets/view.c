/* view.c - view codes, the --views list and the filter (view.h).
 * What it does not do: read CSV columns or DICOM (nih.c, patient.c).
 */
#include <stdio.h>
#include <string.h>

#include "data/sets/view.h"

static const char *const view_names[DATA_VIEW_CODES] = { "unknown", "PA", "AP", "LL", "RL", "OTHER" };

uint8_t data_view_code(const char *view)
{
	if (!view[0])
		return DATA_VIEW_UNKNOWN;
	for (int c = DATA_VIEW_PA; c < DATA_VIEW_OTHER; c++)
		if (strcmp(view, view_names[c]) == 0)
			return (uint8_t)c;
	return DATA_VIEW_OTHER;
}

const char *data_view_name(int code)
{
	return code >= 0 && code < DATA_VIEW_CODES ? view_names[code] : "?";
}

int data_views_parse(const char *list, unsigned *mask, char *err, size_t err_bytes)
{
	*mask = 0;
	for (const char *s = list;; s++) {
		size_t n = strcspn(s, ",");
		int code = 0;
		for (int c = DATA_VIEW_PA; c < DATA_VIEW_CODES && !code; c++)
			if (n == strlen(view_names[c]) && strncmp(s, view_names[c], n) == 0)
				code = c;
		if (!code) {
			snprintf(err, err_bytes, "chexnet: views '%s': '%.*s': not one of PA, AP, LL, RL, OTHER",
				 list, (int)n, s);
			return -1;
		}
		*mask |= 1u << code;
		s += n;
		if (!*s)
			return 0;
	}
}

size_t data_set_keep_views(struct data_set *set, unsigned mask)
{
	size_t kept = 0;
	for (int s = 0; s < 3; s++) {
		struct data_list *l = &set->split[s];
		size_t out = 0;
		for (size_t i = 0; i < l->count; i++)
			if (mask >> l->items[i].view & 1)
				l->items[out++] = l->items[i];
		l->count = out;
		kept += out;
	}
	return kept;
}
