/* test_runtime_control.c - the control plane's defences without sockets:
 * the handshake of auth.h (its MACs against Python's hmac; both sides,
 * wrong key, replayed proof, wrong rank or size), the secret file's checks, the frame checks of wire.h,
 * and control_parse_frames fed hostile frames on rank 0 and on a worker
 * (EXEC count 0 / past the pending list / out of order, unterminated or
 * unprintable names, escaped peer text, the per-rank queue bound), the
 * HVD_CPUS and HVD_COORDINATOR settings and the CPU-list comparison.
 * What it does not do: open sockets (slurm-control does, on the cluster).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/auth.h"
#include "control/control_state.h"
#include "observe/report.h"
#include "control_fixture.h"
#include "runner.h"
#include "plan/wire.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* The key is the SHA-256 of the secret file (FIPS 180-2's two-block
 * example as its contents) and the REPLY and PROOF MACs are HMAC-SHA256
 * over label | HELLO | nonce_0, as Python's hashlib and hmac compute them
 * for the same bytes: the wire protocol pinned by an implementation that
 * is not ours. */
static void test_handshake_macs_match_an_independent_hmac_sha256(void)
{
	char path[4200], err[512], h[65];
	struct auth_key k;
	snprintf(path, sizeof(path), "%s/fips-secret", test_tmpdir());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	const char *text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	CHECK_INT(auth_key_from_file(path, &k, err, sizeof(err)), 0);
	hex(k.bytes, sizeof(k.bytes), h);
	CHECK_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	uint8_t nw[AUTH_NONCE_BYTES], n0[AUTH_NONCE_BYTES];
	for (int i = 0; i < AUTH_NONCE_BYTES; i++)
		nw[i] = (uint8_t)(1 + i), n0[i] = (uint8_t)(0xa0 + i);
	struct auth_hello hello;
	struct auth_reply reply;
	struct auth_proof proof;
	auth_hello_make(&hello, 1, 2, nw);
	auth_reply_make(&k, &hello, n0, &reply);
	auth_proof_make(&k, &hello, &reply, &proof);
	hex(reply.mac, sizeof(reply.mac), h);
	CHECK_STR(h, "74a0ba87252d3dc129b6bbd1af18ba2b64ce35cecaaac17a1021dfc2913b6490");
	hex(proof.mac, sizeof(proof.mac), h);
	CHECK_STR(h, "ee79fdeec864cc9a32161bfd2ffa13750397896fb917b67ff652595ab6871e74");
}

struct shake {
	struct auth_key k;
	struct auth_hello hello;
	struct auth_reply reply;
	struct auth_proof proof;
};

static void shake(struct shake *s, int rank, int size)
{
	uint8_t nw[AUTH_NONCE_BYTES], n0[AUTH_NONCE_BYTES];
	char err[256];
	CHECK_INT(auth_key_generate(&s->k, err, sizeof(err)), 0);
	CHECK_INT(auth_random(nw, sizeof(nw)), 0);
	CHECK_INT(auth_random(n0, sizeof(n0)), 0);
	auth_hello_make(&s->hello, rank, size, nw);
	auth_reply_make(&s->k, &s->hello, n0, &s->reply);
	auth_proof_make(&s->k, &s->hello, &s->reply, &s->proof);
}

static void test_handshake_both_sides_prove_the_key(void)
{
	struct shake s;
	char why[128];
	shake(&s, 1, 4);
	CHECK_INT(sizeof(struct auth_hello), 48);
	CHECK_INT(sizeof(struct auth_reply), 72);
	CHECK_INT(sizeof(struct auth_proof), 40);
	CHECK_INT(auth_hello_check(&s.hello, 4, why, sizeof(why)), 0);
	CHECK_INT(auth_reply_verify(&s.k, &s.hello, &s.reply), 0);
	CHECK_INT(auth_proof_verify(&s.k, &s.hello, &s.reply, &s.proof), 0);
	struct auth_key other = s.k; /* one bit of the key wrong: both sides refuse */
	other.bytes[7] ^= 1;
	CHECK(auth_reply_verify(&other, &s.hello, &s.reply) != 0);
	CHECK(auth_proof_verify(&other, &s.hello, &s.reply, &s.proof) != 0);
	struct auth_reply forged = s.reply; /* a worker's MAC never passes as rank 0's */
	memcpy(forged.mac, s.proof.mac, sizeof(forged.mac));
	CHECK(auth_reply_verify(&s.k, &s.hello, &forged) != 0);
	struct auth_hello moved = s.hello; /* a proof for rank 1 is not one for rank 2 */
	moved.rank = 2;
	CHECK(auth_proof_verify(&s.k, &moved, &s.reply, &s.proof) != 0);
}

static void test_replayed_handshake_fails_against_a_fresh_nonce(void)
{
	struct shake s;
	shake(&s, 1, 2);
	uint8_t fresh[AUTH_NONCE_BYTES];
	struct auth_reply again;
	CHECK_INT(auth_random(fresh, sizeof(fresh)), 0);
	auth_reply_make(&s.k, &s.hello, fresh, &again); /* rank 0 answers the replayed HELLO anew */
	CHECK(auth_proof_verify(&s.k, &s.hello, &again, &s.proof) != 0);
	CHECK(memcmp(s.reply.nonce, again.nonce, AUTH_NONCE_BYTES) != 0);
}

static void test_hello_check_names_what_is_wrong(void)
{
	struct auth_hello h;
	uint8_t n[AUTH_NONCE_BYTES] = { 0 };
	char why[128];
	auth_hello_make(&h, 0, 2, n);
	CHECK(auth_hello_check(&h, 2, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "rank 0 is not a worker");
	auth_hello_make(&h, 2, 2, n);
	CHECK(auth_hello_check(&h, 2, why, sizeof(why)) != 0);
	auth_hello_make(&h, 1, 3, n);
	CHECK(auth_hello_check(&h, 2, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "world size 3");
	int32_t old[12] = { MSG_HELLO, 4, 1 }; /* the old protocol's HELLO */
	memcpy(&h, old, sizeof(h));
	CHECK(auth_hello_check(&h, 2, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "not an hvd handshake");
}

static void test_secret_file_must_be_private_and_long(void)
{
	char path[4200], err[512];
	struct auth_key a, b;
	snprintf(path, sizeof(path), "%s/secret", test_tmpdir());
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("0123456789abcdef0123456789abcdef-job-secret\n", f);
	fclose(f);
	chmod(path, 0644);
	CHECK(auth_key_from_file(path, &a, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "HVD_SECRET_FILE");
	CHECK_CONTAINS(err, "other users");
	chmod(path, 0600);
	CHECK_INT(auth_key_from_file(path, &a, err, sizeof(err)), 0);
	CHECK_INT(auth_key_from_file(path, &b, err, sizeof(err)), 0);
	CHECK(!memcmp(a.bytes, b.bytes, sizeof(a.bytes)));
	f = fopen(path, "w");
	fputs("short", f);
	fclose(f);
	CHECK(auth_key_from_file(path, &a, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "shorter than 32 bytes");
}

static void test_wire_checks_every_field(void)
{
	struct fusion_item it = { .count = 4 };
	char why[160];
	snprintf(it.name, sizeof(it.name), "grad.conv0");
	CHECK_INT(wire_check_item(&it, 2, why, sizeof(why)), 0);
	struct fusion_item bad = it;
	memset(bad.name, 'A', sizeof(bad.name)); /* unterminated */
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "unterminated");
	bad = it;
	bad.name[2] = '\x1b';
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	bad = it;
	bad.name[0] = '\0';
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	bad = it;
	bad.dtype = HVD_DTYPE_COUNT;
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	bad = it;
	bad.kind = 9;
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	bad = it;
	bad.root = 2;
	CHECK(wire_check_item(&bad, 2, why, sizeof(why)) != 0);
	struct wire_exec x = { .first = 0, .count = 0 };
	CHECK(wire_check_exec(&x, 0, 5, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "bucket of 0 tensors");
	x.count = 6;
	CHECK(wire_check_exec(&x, 0, 5, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "this rank submitted 5");
	x.count = 0xffffffffu;
	CHECK(wire_check_exec(&x, 0, 5, why, sizeof(why)) != 0);
	x = (struct wire_exec){ .first = 3, .count = 2 };
	CHECK(wire_check_exec(&x, 2, 5, why, sizeof(why)) != 0);
	CHECK_CONTAINS(why, "next unexecuted is 2");
	x.first = 2;
	CHECK_INT(wire_check_exec(&x, 2, 5, why, sizeof(why)), 0);
	x = (struct wire_exec){ .first = UINT64_MAX, .count = 2 };
	CHECK(wire_check_exec(&x, UINT64_MAX, 5, why, sizeof(why)) != 0);
}

static void test_peer_text_is_escaped(void)
{
	char out[64];
	const char in[] = "a\x1b[31mb\nc\\d\0e";
	wire_sanitize(in, sizeof(in) - 1, out, sizeof(out));
	CHECK_STR(out, "a\\x1b[31mb\\x0ac\\x5cd\\x00e");
	char small[12];
	wire_sanitize("0123456789abcdef", 16, small, sizeof(small));
	CHECK_STR(small, "01234567...");
	wire_sanitize("\x01\x02\x03", 3, small, sizeof(small));
	CHECK(strlen(small) < sizeof(small));
}

/* ---- control_parse_frames on a runtime without sockets ---- */

static void feed(struct control *c, int i, uint32_t type, const void *payload, uint32_t len)
{
	struct peer *p = &c->peers[i];
	struct msg_header h = { type, len };
	p->buf = realloc(p->buf, p->len + sizeof(h) + len);
	memcpy(p->buf + p->len, &h, sizeof(h));
	if (len)
		memcpy(p->buf + p->len + sizeof(h), payload, len);
	p->len += sizeof(h) + len;
	p->cap = p->len;
	control_parse_frames(c, i);
}

static void test_worker_refuses_bad_exec_frames(void)
{
	struct wire_exec zero = { .first = 0, .count = 0 }, past = { .first = 0, .count = 3 };
	struct control *c = fixture_control(1, 2, 1 << 20);
	c->rt->next_seq = 2;
	feed(c, 0, MSG_EXEC, &zero, sizeof(zero));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "'rank 0 (host n0)': EXEC: bucket of 0 tensors");
	CHECK(c->rt->execs == NULL);
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20);
	c->rt->next_seq = 2;
	feed(c, 0, MSG_EXEC, &past, sizeof(past));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "this rank submitted 2");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20); /* a good one, then the same again: out of order */
	c->rt->next_seq = 2;
	past.count = 2;
	feed(c, 0, MSG_EXEC, &past, sizeof(past));
	CHECK(!c->rt->aborted);
	CHECK(c->rt->execs != NULL);
	feed(c, 0, MSG_EXEC, &past, sizeof(past));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "next unexecuted is 2");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20);
	feed(c, 0, MSG_EXEC, &past, 7); /* short */
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "wrong length");
	fixture_control_free(c);
}

static void test_rank0_refuses_bad_submit_frames(void)
{
	struct fusion_item it = { .count = 1 };
	memset(it.name, 'x', sizeof(it.name));
	struct control *c = fixture_control(0, 2, 1 << 20);
	feed(c, 1, MSG_SUBMIT, &it, sizeof(it));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "'rank 1 (host n1)': SUBMIT: tensor name empty, unterminated");
	CHECK_INT((int)coord_ready(&c->coord), 0);
	fixture_control_free(c);
	c = fixture_control(0, 2, 1 << 20);
	struct wire_exec x = { .count = 1 };
	feed(c, 1, MSG_EXEC, &x, sizeof(x));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "sent to rank 0");
	fixture_control_free(c);
}

static void test_plan_cache_frames_are_checked(void)
{
	struct control *c = fixture_control(0, 2, 1 << 20);
	struct wire_hit h = { .id = 0, .off = 0, .count = 1 };
	feed(c, 1, MSG_HIT, &h, sizeof(h)); /* nothing learnt yet */
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "'rank 1 (host n1)': HIT: cached bucket 0 unknown (0 learnt)");
	fixture_control_free(c);
	c = fixture_control(0, 2, 1 << 20);
	struct fusion_item ab[2] = { { .count = 3 }, { .count = 5 } };
	snprintf(ab[0].name, sizeof(ab[0].name), "a");
	snprintf(ab[1].name, sizeof(ab[1].name), "b");
	CHECK_INT((int)plan_cache_learn(&c->rt->cache, ab, 2), 0);
	h.count = 2;
	feed(c, 1, MSG_HIT, &h, sizeof(h)); /* a run of the whole bucket: rank 0's copies */
	CHECK(!c->rt->aborted);
	CHECK_INT((int)(c->coord.q[1].len - c->coord.q[1].head), 2);
	CHECK_STR(c->coord.q[1].items[c->coord.q[1].head + 1].name, "b"); /* position 1 */
	h.off = 1;
	feed(c, 1, MSG_HIT, &h, sizeof(h)); /* past the bucket's end */
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "HIT: tensors 1..2 of cached bucket 0 of 2 tensors");
	plan_cache_free(&c->rt->cache);
	fixture_control_free(c);
	c = fixture_control(0, 2, 1 << 20);
	h = (struct wire_hit){ .pad = 1 };
	feed(c, 1, MSG_HIT, &h, sizeof(h));
	CHECK_CONTAINS(c->rt->error, "HIT: padding not zero");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20); /* workers take no HIT, and EXEC flags are known */
	feed(c, 0, MSG_HIT, &h, sizeof(h));
	CHECK_CONTAINS(c->rt->error, "HIT: sent to a worker");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20);
	c->rt->next_seq = 2;
	struct wire_exec x = { .first = 0, .count = 1, .flags = 8 };
	feed(c, 0, MSG_EXEC, &x, sizeof(x));
	CHECK_CONTAINS(c->rt->error, "EXEC: unknown flags 0x8");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20); /* LEARN of tensors this rank does not hold */
	c->rt->next_seq = 2;
	x.flags = WIRE_EXEC_LEARN;
	feed(c, 0, MSG_EXEC, &x, sizeof(x));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "hvd: plan cache: 'position 0': cannot learn");
	fixture_control_free(c);
}

static void test_fast_path_frames_are_checked(void)
{
	struct fusion_item it = { .count = 1 };
	snprintf(it.name, sizeof(it.name), "t");
	struct control *c = fixture_control(0, 2, 1 << 20);
	feed(c, 1, MSG_FAST, NULL, 0); /* rank 0 did not switch */
	CHECK_CONTAINS(c->rt->error, "'rank 1 (host n1)': FAST: rank 0 did not ask for it");
	fixture_control_free(c);
	c = fixture_control(0, 2, 1 << 20); /* switched: the worker's frames until its FAST are dropped */
	c->fast = 1;
	c->peers[1].draining = 1;
	feed(c, 1, MSG_SUBMIT, &it, sizeof(it));
	CHECK(!c->rt->aborted);
	CHECK_INT((int)(c->coord.q[1].len - c->coord.q[1].head), 0);
	feed(c, 1, MSG_FAST, NULL, 0);
	feed(c, 1, MSG_SUBMIT, &it, sizeof(it));
	CHECK(!c->rt->aborted);
	CHECK_INT((int)(c->coord.q[1].len - c->coord.q[1].head), 1);
	feed(c, 1, MSG_FAST, "x", 1);
	CHECK_CONTAINS(c->rt->error, "FAST: carries a payload");
	fixture_control_free(c);
	struct wire_pos p = { 7 };
	c = fixture_control(0, 2, 1 << 20); /* WAITING: rank 0 nudges its own engine (and the workers) */
	feed(c, 1, MSG_WAITING, &p, sizeof(p));
	CHECK(!c->rt->aborted);
	CHECK(mailbox_has(&c->rt->mail, MAIL_NUDGE, 7));
	feed(c, 1, MSG_WAITING, &p, 4);
	CHECK_CONTAINS(c->rt->error, "'rank 1 (host n1)': WAITING: wrong length");
	fixture_control_free(c);
	c = fixture_control(0, 2, 1 << 20);
	feed(c, 1, MSG_NUDGE, &p, sizeof(p));
	CHECK_CONTAINS(c->rt->error, "NUDGE: sent to rank 0");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20);
	feed(c, 0, MSG_NUDGE, &p, sizeof(p));
	CHECK(!c->rt->aborted);
	CHECK(mailbox_has(&c->rt->mail, MAIL_NUDGE, 7));
	p.position = ~0ull;
	feed(c, 0, MSG_NUDGE, &p, sizeof(p));
	CHECK_CONTAINS(c->rt->error, "NUDGE: position out of range");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20); /* no EXEC while the engines agree among themselves */
	c->rt->next_seq = 2;
	c->fast = 1;
	struct wire_exec x = { .first = 0, .count = 1 };
	feed(c, 0, MSG_EXEC, &x, sizeof(x));
	CHECK_CONTAINS(c->rt->error, "EXEC: while the engines agree among themselves");
	CHECK(c->rt->execs == NULL);
	fixture_control_free(c);
}

/* A worker's SUBMIT can reach rank 0 before rank 0's own engine has seen
 * the engines disagree (rank 0 still fast): the coordinator places it
 * after the last planned position. When rank 0 then negotiates from the
 * agreed position, the span it opened moves with it, so rank 0's own
 * submission at that position does not open it a second time. */
static void test_worker_submit_before_rank0_falls_back_is_rebased(void)
{
	struct control *c = fixture_control(0, 2, 1 << 20);
	c->nego_open = calloc(CTL_NEGO_RING, 1);
	struct fusion_item it = { .count = 1 };
	snprintf(it.name, sizeof(it.name), "t");
	c->coord.planned = 40;
	c->nego_begun = 40;
	c->fast = 1;
	feed(c, 1, MSG_SUBMIT, &it, sizeof(it));
	CHECK(!c->rt->aborted);
	CHECK(c->nego_begun == 41 && c->nego_open[40] == 1);
	mailbox_put(&c->rt->mail, MAIL_NEGOTIATE, 80);
	control_take_requests(c);
	CHECK(!c->rt->aborted && !c->fast && c->coord.planned == 80);
	CHECK_MSG(c->nego_begun == 81 && c->nego_open[80] == 1 && c->nego_open[40] == 0,
		  "begun up to %llu", (unsigned long long)c->nego_begun);
	free(c->nego_open);
	fixture_control_free(c);
}

/* A worker announces a tensor the plan cache does not know as a SUBMIT
 * whose name is the tensor's and zeros after it: a recycled entry keeps
 * its earlier, longer name's bytes past the NUL (entry_alloc leaves the
 * name alone), and those must not reach rank 0. */
static void test_submit_frame_carries_nothing_after_the_name(void)
{
	struct control *c = fixture_control(1, 2, 1 << 20);
	int sv[2];
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c->peers[0].fd = sv[0];
	struct entry *e = calloc(1, sizeof(*e));
	memset(e->item.name, 'X', sizeof(e->item.name)); /* an earlier tensor's name */
	memcpy(e->item.name, "ab", 3);
	e->item.count = 4;
	e->tag.id = -1; /* not cached: a SUBMIT */
	c->rt->pending = c->rt->pending_tail = e;
	control_announce(c);
	struct msg_header h = { 0, 0 };
	struct fusion_item got;
	memset(&got, 'Y', sizeof(got));
	CHECK(read(sv[1], &h, sizeof(h)) == (ssize_t)sizeof(h));
	CHECK(h.type == MSG_SUBMIT && h.len == sizeof(got));
	CHECK(read(sv[1], &got, sizeof(got)) == (ssize_t)sizeof(got));
	CHECK_STR(got.name, "ab");
	int stale = 0;
	for (size_t i = 3; i < sizeof(got.name); i++)
		stale += got.name[i] != 0;
	CHECK_MSG(stale == 0, "%d bytes after the name's NUL are not zero", stale);
	CHECK(got.count == 4 && !c->rt->aborted);
	c->rt->pending = c->rt->pending_tail = NULL;
	free(e);
	close(sv[0]);
	close(sv[1]);
	fixture_control_free(c);
}

static void test_peer_error_text_is_escaped_before_anyone_prints_it(void)
{
	const char text[] = "\x1b[2Jhvd: fake\nline";
	struct control *c = fixture_control(0, 2, 1 << 20);
	feed(c, 1, MSG_ERROR, text, sizeof(text) - 1);
	CHECK(c->rt->aborted);
	CHECK(strchr(c->rt->error, '\x1b') == NULL);
	CHECK(strchr(c->rt->error, '\n') == NULL);
	CHECK_CONTAINS(c->rt->error, "\\x1b[2Jhvd: fake\\x0aline");
	fixture_control_free(c);
	c = fixture_control(1, 2, 1 << 20); /* ABORT only travels from rank 0 to workers */
	feed(c, 0, MSG_ERROR, text, sizeof(text) - 1);
	CHECK_CONTAINS(c->rt->error, "wrong direction");
	fixture_control_free(c);
}

static void test_submissions_queued_per_rank_are_bounded(void)
{
	struct control *c = fixture_control(0, 2, 1 << 20);
	struct fusion_item it = { .count = 1 };
	snprintf(it.name, sizeof(it.name), "t");
	for (unsigned i = 0; i <= WIRE_MAX_QUEUED && !c->rt->aborted; i++)
		feed(c, 1, MSG_SUBMIT, &it, sizeof(it));
	CHECK(c->rt->aborted);
	CHECK_CONTAINS(c->rt->error, "hvd: rank 1 (host n1): '16384 submissions'");
	CHECK(WIRE_MAX_QUEUED >= 364 * 10); /* DenseNet-121: 364 per step */
	fixture_control_free(c);
}

static void test_settings_cpus_coordinator_and_timeouts(void)
{
	struct hvd_settings s;
	char err[512], big[5000];
	size_t used = 0; /* every other CPU of a 1024-CPU node */
	for (int cpu = 0; cpu < 1024; cpu += 2)
		used += (size_t)snprintf(big + used, sizeof(big) - used, "%s%d", cpu ? "," : "", cpu);
	char *env1[] = { NULL, NULL };
	char *e = NULL;
	CHECK(asprintf(&e, "HVD_CPUS=%s", big) > 0);
	env1[0] = e;
	CHECK_INT(settings_parse(env1, &s, err, sizeof(err)), 0);
	CHECK_STR(s.cpus, big);
	free(e);
	char *env2[] = { "HVD_COORDINATOR=10.0.0.1:29500", NULL };
	CHECK_INT(settings_parse(env2, &s, err, sizeof(err)), 0);
	CHECK_STR(s.coord_host, "10.0.0.1");
	CHECK_INT(s.coord_port, 29500);
	char *env3[] = { "HVD_COORDINATOR=10.0.0.1:0", NULL };
	CHECK(settings_parse(env3, &s, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "HVD_COORDINATOR");
	char *env4[] = { "HVD_COORDINATOR=nohost", NULL };
	CHECK(settings_parse(env4, &s, err, sizeof(err)) != 0);
	char *env5[] = { "HVD_SECRET_FILE=", NULL };
	CHECK(settings_parse(env5, &s, err, sizeof(err)) != 0);
}

static void test_report_compares_whole_cpu_lists(void)
{
	struct host_entry *h = calloc(1, sizeof(*h));
	char out[32768];
	snprintf(h->host, sizeof(h->host), "n0");
	snprintf(h->bind, sizeof(h->bind), "socket");
	size_t used = 0;
	for (int cpu = 0; cpu < 1024; cpu += 2)
		used += (size_t)snprintf(h->cpus + used, sizeof(h->cpus) - used, "%s%d", cpu ? "," : "", cpu);
	memcpy(h->affinity, h->cpus, sizeof(h->cpus));
	CHECK_INT(report_warnings(h, 1, "mpi", out, sizeof(out)), 0);
	snprintf(h->cpus, sizeof(h->cpus), "0,1,2,3");
	snprintf(h->affinity, sizeof(h->affinity), "0-3");
	CHECK_INT(report_warnings(h, 1, "mpi", out, sizeof(out)), 0);
	snprintf(h->affinity, sizeof(h->affinity), "0-4");
	CHECK_INT(report_warnings(h, 1, "mpi", out, sizeof(out)), 1);
	CHECK_CONTAINS(out, "re-bound");
	free(h);
}

static void test_socket_timeout_below_one_second_rounds_up(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = { 0, 0 };
	socklen_t l = sizeof(tv);
	control_socket_options(fd, 0.6);
	getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l);
	CHECK_INT((int)tv.tv_sec, 1);
	close(fd);
}

const struct test_case runtime_control_tests[] = {
	{ "handshake_macs_match_an_independent_hmac_sha256", test_handshake_macs_match_an_independent_hmac_sha256 },
	{ "handshake_both_sides_prove_the_key", test_handshake_both_sides_prove_the_key },
	{ "replayed_handshake_fails_against_a_fresh_nonce", test_replayed_handshake_fails_against_a_fresh_nonce },
	{ "hello_check_names_what_is_wrong", test_hello_check_names_what_is_wrong },
	{ "secret_file_must_be_private_and_long", test_secret_file_must_be_private_and_long },
	{ "wire_checks_every_field", test_wire_checks_every_field },
	{ "peer_text_is_escaped", test_peer_text_is_escaped },
	{ "worker_refuses_bad_exec_frames", test_worker_refuses_bad_exec_frames },
	{ "rank0_refuses_bad_submit_frames", test_rank0_refuses_bad_submit_frames },
	{ "plan_cache_frames_are_checked", test_plan_cache_frames_are_checked },
	{ "submit_frame_carries_nothing_after_the_name",
	  test_submit_frame_carries_nothing_after_the_name },
	{ "fast_path_frames_are_checked", test_fast_path_frames_are_checked },
	{ "worker_submit_before_rank0_falls_back_is_rebased",
	  test_worker_submit_before_rank0_falls_back_is_rebased },
	{ "peer_error_text_is_escaped_before_anyone_prints_it", test_peer_error_text_is_escaped_before_anyone_prints_it },
	{ "submissions_queued_per_rank_are_bounded", test_submissions_queued_per_rank_are_bounded },
	{ "settings_cpus_coordinator_and_timeouts", test_settings_cpus_coordinator_and_timeouts },
	{ "report_compares_whole_cpu_lists", test_report_compares_whole_cpu_lists },
	{ "socket_timeout_below_one_second_rounds_up", test_socket_timeout_below_one_second_rounds_up },
	{ 0 }
};
