/* dicom_gdcm.h - the two halves of a read through GDCM that meet in a
 * memfd: dicom_gdcm_read_to runs in a reader process (dicom_reader.c
 * starts it), parses the file and writes the result there;
 * dicom_gdcm_take_result copies it back out in the caller's process.
 * Both in dicom_gdcm.cc. Internal to trainer/data.
 */
#ifndef HVD_TRAINER_DICOM_GDCM_H
#define HVD_TRAINER_DICOM_GDCM_H

#include <stddef.h>
#include <stdint.h>

#include "data/dicom/dicom_read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A reader still busy after this long is killed (SIGALRM). */
#define DICOM_READ_SECONDS 60

/* The reader's exit code when an allocation failed (its memory limit). */
#define DICOM_READER_EXIT_NOMEM 86

/* In the reader process: GDCM reads bytes within limits, fd (a memfd) is
 * sized to the result and receives it, stderr goes to /dev/null. Never
 * returns (_exit: 0 once the result is written, DICOM_READER_EXIT_NOMEM
 * when memory ran out, another non-zero code when it could not write). */
void dicom_gdcm_read_to(const void *data, size_t bytes, const struct dicom_limits *limits, int fd)
	__attribute__((noreturn));

/* In the caller: the result (map of map_bytes) as malloc'd copies; one
 * that does not fit its file is refused. 0, or -1 with a reason. */
int dicom_gdcm_take_result(const uint8_t *map, size_t map_bytes, struct dicom_raw *out,
			   char *why, size_t why_bytes);

#ifdef __cplusplus
}
#endif

#endif
