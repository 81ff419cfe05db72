/* fuzz_control.c - libFuzzer target for both sides of the control plane:
 * the first input byte picks rank 0 (of 2..5 ranks, the frames come from a
 * worker) or a worker (the frames come from rank 0, with 0..255 of its own
 * submissions pending); the rest arrives in pieces of fuzzer-chosen sizes
 * through control_parse_frames, as recv would deliver it. The same bytes
 * also go through the handshake checks of auth.h. Built with clang
 * -fsanitize=fuzzer,address,undefined as build/fuzz-control; make check
 * runs it for a few seconds (tests/test_fuzz.c), FUZZ_S=600 for longer.
 * What it does not do: open sockets or start threads.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "control/control_state.h"
#include "../control_fixture.h"


static void handshake_checks(const uint8_t *d, size_t n)
{
	struct auth_key k = { { 0 } };
	struct auth_hello h;
	struct auth_reply r;
	struct auth_proof p;
	char why[128];
	if (n < sizeof(h) + sizeof(r) + sizeof(p))
		return;
	memcpy(&h, d, sizeof(h));
	memcpy(&r, d + sizeof(h), sizeof(r));
	memcpy(&p, d + sizeof(h) + sizeof(r), sizeof(p));
	auth_hello_check(&h, 4, why, sizeof(why));
	auth_reply_verify(&k, &h, &r);
	auth_proof_verify(&k, &h, &r, &p);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 3)
		return 0;
	handshake_checks(d, n);
	int root = d[0] & 1, size = 2 + (d[0] >> 1) % 4;
	struct control *c = fixture_control(root ? 0 : 1, size, 1 << 16);
	if (!root)
		c->rt->next_seq = d[1];
	int from = root ? 1 + d[1] % (size - 1) : 0;
	size_t piece = 1 + d[2] % 64, off = 3;
	struct peer *p = &c->peers[from];
	while (off < n && !c->rt->aborted) {
		size_t take = n - off < piece ? n - off : piece;
		if (p->len + take > p->cap) {
			p->cap = p->len + take;
			p->buf = realloc(p->buf, p->cap);
		}
		memcpy(p->buf + p->len, d + off, take);
		p->len += take;
		off += take;
		control_parse_frames(c, from);
		piece = piece * 3 % 61 + 1;
	}
	fixture_control_free(c);
	return 0;
}
