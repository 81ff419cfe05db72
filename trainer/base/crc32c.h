/* crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of shard headers and records. Table-driven, byte at a time;
 * zlib's crc32() is the other polynomial. What this is not: a hash for
 * anything but error detection.
 */
#ifndef HVD_TRAINER_CRC32C_H
#define HVD_TRAINER_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC of data continuing from crc (0 to start): crc32c(0, "123456789", 9)
 * is 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *data, size_t bytes);

#endif
