/* auth.h - the control plane's handshake: a job secret and a mutual
 * HMAC-SHA256 challenge-response with a fresh nonce from each side.
 *
 *   worker -> rank 0   HELLO  magic, version, rank, size, nonce_w
 *   rank 0 -> worker   REPLY  nonce_0, HMAC(K, "rank0" | HELLO | nonce_0)
 *   worker -> rank 0   PROOF  HMAC(K, "worker" | HELLO | nonce_0)
 *
 * The worker checks REPLY before it proves anything (it reached the real
 * rank 0, not a local impostor); rank 0 counts the connection as the rank
 * only after PROOF (a recorded PROOF is useless: nonce_0 is new each
 * time). The two labels keep one side's MAC from ever serving as the
 * other's. SHA-256 and HMAC are nettle's. Pure apart from auth_random (getrandom),
 * auth_secret_from_file and auth_connect (the worker's half on a
 * connected socket, fdio.h), unit-tested directly; the same
 * module serves a launch outside Slurm (HVD_SECRET_FILE,
 * HVD_COORDINATOR=host:port).
 * What it does not do: protect frames after the handshake (no per-frame
 * MAC, no encryption: see the threat model in runtime/README.md).
 */
#ifndef HVD_AUTH_H
#define HVD_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

#define AUTH_KEY_BYTES 32
#define AUTH_NONCE_BYTES 32
#define AUTH_VERSION 1u

struct auth_key {
	uint8_t bytes[AUTH_KEY_BYTES];
};

struct auth_hello {            /* worker -> rank 0, 48 bytes */
	char magic[4];         /* "HVDh" */
	uint32_t version;
	int32_t rank;
	int32_t size;
	uint8_t nonce[AUTH_NONCE_BYTES];
};

struct auth_reply {            /* rank 0 -> worker, 72 bytes */
	char magic[4];         /* "HVDr" */
	uint32_t pad;
	uint8_t nonce[AUTH_NONCE_BYTES];
	uint8_t mac[SHA256_DIGEST_SIZE];
};

struct auth_proof {            /* worker -> rank 0, 40 bytes */
	char magic[4];         /* "HVDp" */
	uint32_t pad;
	uint8_t mac[SHA256_DIGEST_SIZE];
};

/* len random bytes from getrandom. Returns 0, or -1 with errno. */
int auth_random(void *out, size_t len);
/* A fresh job secret (rank 0). Returns 0 or -1 with a message. */
int auth_key_generate(struct auth_key *k, char *err, size_t errlen);
/* The key from a file of 32 to 4096 bytes (SHA-256 of its contents) that
 * only its owner may read. Returns 0 or -1 with a message naming it. */
int auth_key_from_file(const char *path, struct auth_key *k, char *err, size_t errlen);

void auth_hello_make(struct auth_hello *h, int rank, int size, const uint8_t nonce[AUTH_NONCE_BYTES]);
/* Rank 0: 0 when h is a HELLO of a worker of this job's size (1 <= rank <
 * size), else -1 with the reason in why. */
int auth_hello_check(const struct auth_hello *h, int size, char *why, size_t whylen);
void auth_reply_make(const struct auth_key *k, const struct auth_hello *h,
		     const uint8_t nonce[AUTH_NONCE_BYTES], struct auth_reply *out);
/* Worker: 0 when r proves that its sender holds the key for our HELLO. */
int auth_reply_verify(const struct auth_key *k, const struct auth_hello *h, const struct auth_reply *r);
void auth_proof_make(const struct auth_key *k, const struct auth_hello *h,
		     const struct auth_reply *r, struct auth_proof *out);
/* Rank 0: 0 when p proves the key for this HELLO and our REPLY. */
/* The worker's half on fd: HELLO (rank of size), the acceptor's REPLY
 * verified, PROOF, by the deadline. 0, or -1: not the job's acceptor, or
 * too slow. */
int auth_connect(int fd, const struct auth_key *k, int rank, int size, double deadline);
int auth_proof_verify(const struct auth_key *k, const struct auth_hello *h,
		      const struct auth_reply *r, const struct auth_proof *p);

#endif
