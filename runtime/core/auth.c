/* auth.c - see auth.h. */
#include "core/auth.h"
#include "core/fail.h"
#include "core/fdio.h"

#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char LABEL_ROOT[] = "hvd control v1: rank 0";
static const char LABEL_WORKER[] = "hvd control v1: worker";

int auth_random(void *out, size_t len)
{
	char *p = out;
	while (len) {
		ssize_t r = getrandom(p, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int auth_key_generate(struct auth_key *k, char *err, size_t errlen)
{
	if (auth_random(k->bytes, sizeof(k->bytes)) == 0)
		return 0;
	return fail_msg(-1, err, errlen, "hvd: control plane: 'getrandom': %s", strerror(errno));
}

int auth_key_from_file(const char *path, struct auth_key *k, char *err, size_t errlen)
{
	uint8_t buf[4097];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "hvd: HVD_SECRET_FILE: '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	const char *why = !S_ISREG(st.st_mode) ? "not a regular file"
			  : (st.st_mode & 077) ? "readable or writable by other users (chmod 600)"
			  : n < 0 ? strerror(errno)
			  : n < AUTH_KEY_BYTES ? "shorter than 32 bytes"
			  : n > 4096 ? "longer than 4096 bytes" : NULL;
	if (!why) {
		struct sha256_ctx s;
		sha256_init(&s);
		sha256_update(&s, (size_t)n, buf);
		sha256_digest(&s, sizeof(k->bytes), k->bytes);
	}
	memset(buf, 0, sizeof(buf)); /* the secret leaves no copy, used or refused */
	return why ? fail_msg(-1, err, errlen, "hvd: HVD_SECRET_FILE: '%s': %s", path, why) : 0;
}

void auth_hello_make(struct auth_hello *h, int rank, int size, const uint8_t nonce[AUTH_NONCE_BYTES])
{
	*h = (struct auth_hello){ .magic = { 'H', 'V', 'D', 'h' }, .version = AUTH_VERSION,
				  .rank = rank, .size = size };
	memcpy(h->nonce, nonce, AUTH_NONCE_BYTES);
}

int auth_hello_check(const struct auth_hello *h, int size, char *why, size_t whylen)
{
	if (memcmp(h->magic, "HVDh", 4))
		snprintf(why, whylen, "not an hvd handshake");
	else if (h->version != AUTH_VERSION)
		snprintf(why, whylen, "handshake version %u, this library speaks %u", h->version, AUTH_VERSION);
	else if (h->size != size)
		snprintf(why, whylen, "world size %d, this job has %d", h->size, size);
	else if (h->rank < 1 || h->rank >= size)
		snprintf(why, whylen, "rank %d is not a worker of this job", h->rank);
	else
		return 0;
	return -1;
}

static void mac(const struct auth_key *k, const char *label, const struct auth_hello *h,
		const uint8_t nonce0[AUTH_NONCE_BYTES], uint8_t out[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx c;
	hmac_sha256_set_key(&c, sizeof(k->bytes), k->bytes);
	hmac_sha256_update(&c, strlen(label), (const uint8_t *)label);
	hmac_sha256_update(&c, sizeof(*h), (const uint8_t *)h);
	hmac_sha256_update(&c, AUTH_NONCE_BYTES, nonce0);
	hmac_sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

/* 0 when a message's magic is `want` and it carries label's MAC over h
 * and nonce0, compared in constant time (memeql_sec); else -1. */
static int check(const struct auth_key *k, const char *label, const char *magic,
		 const char *want, const struct auth_hello *h, const uint8_t *nonce0,
		 const uint8_t *got)
{
	uint8_t expect[SHA256_DIGEST_SIZE];
	if (memcmp(magic, want, 4))
		return -1;
	mac(k, label, h, nonce0, expect);
	return memeql_sec(expect, got, sizeof(expect)) ? 0 : -1;
}

void auth_reply_make(const struct auth_key *k, const struct auth_hello *h,
		     const uint8_t nonce[AUTH_NONCE_BYTES], struct auth_reply *out)
{
	*out = (struct auth_reply){ .magic = { 'H', 'V', 'D', 'r' } };
	memcpy(out->nonce, nonce, AUTH_NONCE_BYTES);
	mac(k, LABEL_ROOT, h, nonce, out->mac);
}

int auth_reply_verify(const struct auth_key *k, const struct auth_hello *h, const struct auth_reply *r)
{
	return check(k, LABEL_ROOT, r->magic, "HVDr", h, r->nonce, r->mac);
}

void auth_proof_make(const struct auth_key *k, const struct auth_hello *h,
		     const struct auth_reply *r, struct auth_proof *out)
{
	*out = (struct auth_proof){ .magic = { 'H', 'V', 'D', 'p' } };
	mac(k, LABEL_WORKER, h, r->nonce, out->mac);
}

int auth_proof_verify(const struct auth_key *k, const struct auth_hello *h,
		      const struct auth_reply *r, const struct auth_proof *p)
{
	return check(k, LABEL_WORKER, p->magic, "HVDp", h, r->nonce, p->mac);
}

int auth_connect(int fd, const struct auth_key *k, int rank, int size, double deadline)
{
	uint8_t nonce[AUTH_NONCE_BYTES];
	struct auth_hello hello;
	struct auth_reply reply;
	struct auth_proof proof;
	if (auth_random(nonce, sizeof(nonce)))
		return -1;
	auth_hello_make(&hello, rank, size, nonce);
	if (fdio_send(fd, &hello, sizeof(hello), deadline) ||
	    fdio_recv(fd, &reply, sizeof(reply), deadline) || auth_reply_verify(k, &hello, &reply))
		return -1;
	auth_proof_make(k, &hello, &reply, &proof);
	return fdio_send(fd, &proof, sizeof(proof), deadline) ? -1 : 0;
}
