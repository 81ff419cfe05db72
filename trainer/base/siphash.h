/* siphash.h - SipHash-2-4 (Aumasson and Bernstein), a keyed 64-bit hash:
 * without the 128-bit key its outputs cannot be computed, so a DICOM
 * Patient ID hashed with it is not recoverable by hashing guessed IDs.
 * What this is not: a checksum (crc32c.h) or an unkeyed mixer.
 */
#ifndef HVD_TRAINER_SIPHASH_H
#define HVD_TRAINER_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* siphash24(key = 00 01 ... 0f, "", 0) is 0x726fdb47dd0e0e31. */
uint64_t siphash24(const uint8_t key[16], const void *data, size_t bytes);

#endif
