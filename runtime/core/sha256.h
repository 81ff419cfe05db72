/* sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and
 * self-contained so libhvd needs no crypto library at link time; checked
 * against the FIPS 180-2 examples and every RFC 4231 test case
 * (tests/test_runtime_control.c). Used only for the control plane's
 * handshake (auth.c). What it does not do: anything constant-time beyond
 * what plain SHA-256 is, key derivation, or encryption.
 */
#ifndef HVD_SHA256_H
#define HVD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

struct sha256 {
	uint32_t h[8];
	uint64_t total_bytes;
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_BYTES]);

/* HMAC-SHA256 over the concatenation of `parts` (n of them, lens[i] bytes each). */
void hmac_sha256(const uint8_t *key, size_t key_len, const void *const *parts,
		 const size_t *lens, size_t n, uint8_t out[SHA256_BYTES]);

#endif
