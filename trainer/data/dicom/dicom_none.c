/* dicom_none.c - dicom_read.h in a build without GDCM (WITH_GDCM=0 or
 * libgdcm-dev absent): every DICOM file is refused with one reason naming
 * the feature, never read as something else.
 * What it does not do: parse anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dicom/dicom_read.h"

int dicom_read_available(void)
{
	return 0;
}

void dicom_raw_free(struct dicom_raw *raw)
{
	free(raw->pixels);   /* whoever filled it (tests, the fuzz target) */
	free(raw->modality_lut.data);
	free(raw->voi_lut.data);
	memset(raw, 0, sizeof(*raw));
}

long dicom_reader_peak_kib(void)
{
	return 0;
}

int dicom_read_memory(const void *data, size_t bytes, const struct dicom_limits *limits,
		      struct dicom_raw *out, char *why, size_t why_bytes)
{
	(void)data, (void)bytes, (void)limits;
	memset(out, 0, sizeof(*out));
	snprintf(why, why_bytes, "this build has no DICOM support (feature WITH_GDCM: "
		 "install libgdcm-dev and rebuild)");
	return -1;
}
