/* wire.c - see wire.h. */
#include "plan/wire.h"
#include "core/fail.h"

#include <stdio.h>

size_t wire_name_span(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && wire_byte_printable((unsigned char)s[n]))
		n++;
	return n;
}

/* 1 when s is non-empty, printable ASCII all the way to a NUL within max
 * bytes. */
static int wire_name_ok(const char *s, size_t max)
{
	size_t n = wire_name_span(s, max);
	return n > 0 && n < max && !s[n];
}

int wire_check_item(const struct fusion_item *it, int size, char *why, size_t whylen)
{
	const char *bad = !wire_name_ok(it->name, sizeof(it->name))
				  ? "tensor name empty, unterminated or not printable ASCII"
			  : it->dtype >= HVD_DTYPE_COUNT ? "unknown dtype"
			  : it->op > HVD_AVERAGE ? "unknown op"
			  : it->kind > FUSION_BARRIER ? "unknown collective"
			  : it->root < 0 || it->root >= size ? "broadcast root outside the job"
			  : it->count >= (1ull << 48) ? "element count past 2^48" : NULL;
	if (!bad)
		return 0;
	return fail_msg(-1, why, whylen, "%s", bad);
}

int wire_check_exec(const struct wire_exec *x, uint64_t next_exec, uint64_t submitted,
		    char *why, size_t whylen)
{
	if (x->count == 0 || x->count > WIRE_MAX_QUEUED)
		snprintf(why, whylen, "bucket of %u tensors (1 to %u)", x->count, WIRE_MAX_QUEUED);
	else if (x->first != next_exec)
		snprintf(why, whylen, "bucket starts at position %llu, next unexecuted is %llu",
			 (unsigned long long)x->first, (unsigned long long)next_exec);
	else if (x->count > submitted - next_exec || next_exec > submitted)
		snprintf(why, whylen, "bucket of positions %llu..%llu, this rank submitted %llu",
			 (unsigned long long)x->first, (unsigned long long)(x->first + x->count - 1),
			 (unsigned long long)submitted);
	else if (x->flags & ~(WIRE_EXEC_LEARN | WIRE_EXEC_REVERSED | WIRE_EXEC_FAST))
		snprintf(why, whylen, "unknown flags 0x%x", x->flags);
	else
		return 0;
	return -1;
}

void wire_sanitize(const char *in, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		size_t need = (wire_byte_printable(c) && c != '\\') ? 1 : 4;
		if (o + need + 4 > outlen) { /* room for "..." and the NUL */
			if (o + 4 <= outlen)
				o += (size_t)snprintf(out + o, outlen - o, "...");
			break;
		}
		if (need == 1)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	out[o < outlen ? o : outlen - 1] = '\0';
}
