/* dicom_inflate.h - a Deflated Explicit VR Little Endian file
 * (1.2.840.10008.1.2.1.99) inflated with a bound on its output, before
 * the library parses it (the library inflates without one: a 1 MiB file
 * can hold a 1 GiB image). The result is the same file in Explicit VR
 * Little Endian: the meta group with its transfer syntax (and group
 * length) rewritten, then the inflated data set.
 * What it does not do: parse the data set, or read files without a
 * meta group (they cannot declare deflate).
 */
#ifndef HVD_TRAINER_DICOM_INFLATE_H
#define HVD_TRAINER_DICOM_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: *out (malloc'd, *out_bytes) is the inflated file; 0: not deflated
 * (or a meta group this does not follow: left to the library); -1: a
 * reason in why (inflates past cap bytes, corrupt, cut short); -2: out
 * of memory. */
int dicom_inflate(const uint8_t *data, size_t bytes, uint64_t cap, uint8_t **out,
		  size_t *out_bytes, char *why, size_t why_bytes);

#ifdef __cplusplus
}
#endif

#endif
