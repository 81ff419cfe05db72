/* precision.c - the names of the compute precisions (backend.h:
 * precision_name, precision_parse), used by every backend and the
 * command line. What it does not do: pick a backend (registry.c).
 */
#include <stddef.h>
#include <string.h>

#include "backend/backend.h"

static const char *const precision_names[] = {
	[PRECISION_FP32] = "fp32",
	[PRECISION_BF16] = "bf16",
	[PRECISION_FP16] = "fp16",
};

const char *precision_name(enum precision p)
{
	return precision_names[p];
}

int precision_parse(const char *s, enum precision *p, struct trainer_error *err)
{
	for (size_t i = 0; i < sizeof(precision_names) / sizeof(precision_names[0]); i++)
		if (strcmp(s, precision_names[i]) == 0) {
			*p = (enum precision)i;
			return 0;
		}
	return trainer_error_set(err, "--precision: '%s': expected fp32, bf16 or fp16", s);
}
