/* dicom_budget.h - what one DICOM read may cost: the decoded-size budget
 * (pixels and bytes; `--max-pixels`, default 8192 x 8192 at 16 bits,
 * above any radiograph: a 43 x 43 cm detector at 100 um is ~4300 x 4300)
 * and the reader process's memory limit derived from it. Process-wide:
 * set once before reading (pack's option), read by every decode.
 * What it does not do: apply them (dicom_gdcm.cc, dicom_reader.c).
 */
#ifndef HVD_TRAINER_DICOM_BUDGET_H
#define HVD_TRAINER_DICOM_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "data/dicom/dicom_read.h"

#define DICOM_MAX_PIXELS_DEFAULT (8192ull * 8192ull)
#define DICOM_MAX_PIXELS_LOWEST (64ull * 64ull)
#define DICOM_MAX_PIXELS_HIGHEST (16384ull * 16384ull)
/* non-pixel attributes a deflated data set may hold besides the image */
#define DICOM_INFLATE_SLACK (64ull << 20)
/* the reader's memory limit overrides the budget's (tests, diagnosis) */
#define DICOM_READER_MIB_ENV "HVD_DICOM_READER_MIB"

/* The budget: max_pixels, max_bytes = 2 bytes per pixel. pixels outside
 * DICOM_MAX_PIXELS_LOWEST..HIGHEST: -1 with a reason. */
int dicom_budget_set(uint64_t pixels, char *why, size_t why_bytes);

/* The current budget with max_side. */
struct dicom_limits dicom_budget(uint32_t max_side);

/* The memory limit, in MiB, of a reader of a file of file_bytes: the
 * reader's own data at its start plus this (see DATA.md, "What one file
 * costs"): 256 MiB + 2 x file_bytes + 6 x max_bytes, or DICOM_READER_MIB_ENV's
 * value. -1 with a reason when that value is not a whole number 1..1048576. */
long dicom_reader_limit_mib(size_t file_bytes, char *why, size_t why_bytes);

#endif
