/* wire.h - the control plane's frames after the handshake (auth.h) and the
 * checks every received field passes before anything uses it: a SUBMIT
 * (rank 0) and an EXEC (workers) are validated here, and text from a
 * peer (ABORT/ERROR) is escaped before anyone prints it. Pure: no
 * sockets, no runtime state, unit-tested and fuzzed directly.
 * What it does not do: read sockets (control_loop.c) or decide buckets
 * (coord.c).
 */
#ifndef HVD_WIRE_H
#define HVD_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "plan/fusion.h"

enum msg_type { MSG_HELLO = 1, MSG_HB, MSG_SUBMIT, MSG_EXEC, MSG_ABORT, MSG_ERROR, MSG_BYE,
		MSG_HIT, MSG_FAST, MSG_WAITING, MSG_NUDGE };

struct msg_header {
	uint32_t type;
	uint32_t len;
};

struct wire_exec {
	uint64_t first;
	uint64_t signature;
	uint32_t count;
	uint32_t flags;      /* WIRE_EXEC_LEARN, WIRE_EXEC_REVERSED */
};
/* Every rank appends the bucket to its plan cache (plan_cache.h). */
#define WIRE_EXEC_LEARN 1u
/* The bucket's buffer holds its tensors last first: rank 0's tensors lie
 * that way in memory (gradients submitted in backward order from one
 * buffer), so ranks laid out like it reduce in place (engine.c). */
#define WIRE_EXEC_REVERSED 2u

/* After this bucket the engines agree on cached buckets among themselves
 * (runtime/engine/agree.c): the worker stops announcing and answers MSG_FAST (no
 * payload), after which rank 0 counts its SUBMITs and HITs again. */
#define WIRE_EXEC_FAST 4u

/* MSG_WAITING, worker -> rank 0: this rank's engine has waited long in
 * the agreement at `position`; MSG_NUDGE, rank 0 -> workers: every
 * engine at `position` votes now (nothing submitted there = no). */
struct wire_pos {
	uint64_t position;
};

/* Worker -> rank 0: its next `count` submissions are tensors off..off+count-1
 * of cached bucket `id` ("same as last time"; rank 0 checks the range
 * with plan_cache_check_run). */
struct wire_hit {
	uint32_t id;
	uint32_t off;
	uint32_t count;
	uint32_t pad;        /* 0 */
};

/* One frame's payload at most; a longer header is a corrupt stream. */
#define WIRE_MAX_MSG (1u << 20)
/* Bytes a connection may have received but not yet parsed: reading
 * stops there until frames are consumed, so a peer that floods costs at
 * most this much memory. */
#define WIRE_RECV_MAX (4u * WIRE_MAX_MSG)
/* Submissions of one rank not yet planned (rank 0) and tensors in one
 * bucket. DenseNet-121 submits 364 tensors per step; a rank that runs
 * this far ahead of the slowest is broken or hostile: the job fails. */
#define WIRE_MAX_QUEUED 16384u

/* SUBMIT payload from a rank of a world of `size`: 0, or -1 with why
 * (name empty, not NUL-terminated, not printable; unknown dtype, op or
 * kind; broadcast root outside the world; count past 2^48). */
int wire_check_item(const struct fusion_item *it, int size, char *why, size_t whylen);
/* EXEC from rank 0 at a worker whose next unexecuted position is
 * `next_exec` and who has submitted positions below `submitted`: 0, or -1
 * with why (count 0 or above WIRE_MAX_QUEUED, first not next_exec,
 * first + count past what was submitted, unknown flags). */
int wire_check_exec(const struct wire_exec *x, uint64_t next_exec, uint64_t submitted,
		    char *why, size_t whylen);
/* Copies len bytes of peer text into out (outlen > 0, always terminated):
 * printable ASCII as is, every other byte (NUL, escape, newline, 8-bit)
 * as \xNN, truncated with "..." when out is too small. */
void wire_sanitize(const char *in, size_t len, char *out, size_t outlen);
/* 1 for printable ASCII, 0x20-0x7e: the bytes a tensor name may hold. */
static inline int wire_byte_printable(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* How many of s's first bytes (at most max) are printable ASCII
 * (0x20-0x7e): the name's length when s[that] is its NUL. */
size_t wire_name_span(const char *s, size_t max);

#endif
