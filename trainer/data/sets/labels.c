/* data/sets/labels.c - the Finding Labels parser (the class names: base/classes.c). Pure.
 * What it does not do: read files or report line numbers (the CSV reader
 * adds those).
 */
#include <stdio.h>
#include <string.h>

#include "data/sets/labels.h"

int data_class_find(const char *name, size_t len)
{
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		if (strlen(data_class_names[c]) == len &&
		    memcmp(data_class_names[c], name, len) == 0)
			return c;
	return -1;
}

static void copy_token(char *bad, size_t bad_bytes, const char *tok, size_t len)
{
	if (bad_bytes == 0)
		return;
	snprintf(bad, bad_bytes, "%.*s", (int)len, tok);
}

int data_labels_parse(const char *field, uint16_t *mask, char *bad, size_t bad_bytes)
{
	static const char no_finding[] = "No Finding";
	uint16_t m = 0;
	int tokens = 0, none = 0;
	const char *p = field;
	for (;;) {
		const char *end = strchr(p, '|');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		tokens++;
		if (len == sizeof(no_finding) - 1 && memcmp(p, no_finding, len) == 0) {
			none = 1;
		} else {
			int c = data_class_find(p, len);
			if (c < 0 || (m & (1u << c))) {
				copy_token(bad, bad_bytes, p, len);
				return -1;
			}
			m |= (uint16_t)(1u << c);
		}
		if (!end)
			break;
		p = end + 1;
	}
	if (none && tokens > 1) {
		copy_token(bad, bad_bytes, field, strlen(field));
		return -1;
	}
	*mask = m;
	return 0;
}

void data_labels_to_floats(uint16_t mask, float *out)
{
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		out[c] = (mask >> c) & 1 ? 1.0f : 0.0f;
}
