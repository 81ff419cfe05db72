/* dicom_budget.c - the decoded-size budget and the reader's memory limit
 * (dicom_budget.h). What it does not do: read files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "data/dicom/dicom_budget.h"

static uint64_t max_pixels = DICOM_MAX_PIXELS_DEFAULT;

int dicom_budget_set(uint64_t pixels, char *why, size_t why_bytes)
{
	if (pixels < DICOM_MAX_PIXELS_LOWEST || pixels > DICOM_MAX_PIXELS_HIGHEST)
		return snprintf(why, why_bytes, "chexnet: --max-pixels '%llu': out of range %llu..%llu",
				(unsigned long long)pixels, DICOM_MAX_PIXELS_LOWEST,
				DICOM_MAX_PIXELS_HIGHEST), -1;
	max_pixels = pixels;
	return 0;
}

struct dicom_limits dicom_budget(uint32_t max_side)
{
	struct dicom_limits l = { max_side, max_pixels, 2 * max_pixels };
	return l;
}

long dicom_reader_limit_mib(size_t file_bytes, char *why, size_t why_bytes)
{
	const char *v = getenv(DICOM_READER_MIB_ENV);
	if (v) {
		char *end;
		long mib = strtol(v, &end, 10);
		if (!*v || *end || mib < 1 || mib > 1048576)
			return snprintf(why, why_bytes, "%s '%.40s': not a whole number of MiB 1..1048576",
					DICOM_READER_MIB_ENV, v), -1;
		return mib;
	}
	uint64_t bytes = (256ull << 20) + 2 * (uint64_t)file_bytes + 6 * 2 * max_pixels;
	return (long)((bytes + (1u << 20) - 1) >> 20);
}
