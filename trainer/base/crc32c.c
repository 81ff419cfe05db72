/* crc32c.c - CRC-32C with a 8x256 table built once (slicing by 8).
 * What it does not do: use the SSE4.2 crc32 instruction (records are read
 * from the page cache; 1-2 GB/s per core is far above what the loader needs).
 */
#include <pthread.h>
#include <string.h>

#include "base/crc32c.h"

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_build_table(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int t = 1; t < 8; t++)
			crc_table[t][n] = (crc_table[t - 1][n] >> 8) ^
					  crc_table[0][crc_table[t - 1][n] & 0xff];
}

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes)
{
	const uint8_t *p = data;
	pthread_once(&crc_once, crc_build_table);
	crc = ~crc;
	while (bytes >= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;   /* little-endian hosts only: checked at compile time below */
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		bytes -= 8;
	}
	while (bytes--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "crc32c.c: slicing-by-8 assumes a little-endian host"
#endif
