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

