/* siphash.c - SipHash-2-4 as in the reference implementation (siphash.h):
 * 2 compression rounds per 8-byte word, 4 finalisation rounds, the input
 * read little-endian whatever the host.
 */
#include "base/siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t load64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1], v[1] = ROTL(v[1], 13), v[1] ^= v[0], v[0] = ROTL(v[0], 32);
	v[2] += v[3], v[3] = ROTL(v[3], 16), v[3] ^= v[2];
	v[0] += v[3], v[3] = ROTL(v[3], 21), v[3] ^= v[0];
	v[2] += v[1], v[1] = ROTL(v[1], 17), v[1] ^= v[2], v[2] = ROTL(v[2], 32);
}

uint64_t siphash24(const uint8_t key[16], const void *data, size_t bytes)
{
	const uint8_t *in = data;
	uint64_t k0 = load64(key), k1 = load64(key + 8);
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
			  k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull };
	size_t whole = bytes - bytes % 8;
	for (size_t i = 0; i < whole; i += 8) {
		uint64_t m = load64(in + i);
		v[3] ^= m;
		sip_round(v), sip_round(v);
		v[0] ^= m;
	}
	uint64_t last = (uint64_t)bytes << 56;
	for (size_t i = 0; i < bytes % 8; i++)
		last |= (uint64_t)in[whole + i] << (8 * i);
	v[3] ^= last;
	sip_round(v), sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
