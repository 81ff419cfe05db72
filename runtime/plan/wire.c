/* wire.c - see wire.h. */
#include "plan/wire.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 1 when none of w's eight bytes is outside 0x20-0x7e (a byte below
 * 0x20 borrows into its high bit; one above 0x7e carries into it or has
 * it already: exact for the word as a whole, not for which byte). */
static int wire_word_printable(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t below = (w - ones * 0x20) & ~w & highs;
	uint64_t above = ((w + ones * (0x7f - 0x7e)) | w) & highs;
	return !(below | above);
}

/* The first byte outside 0x20-0x7e in s[from, to), else to. */
static size_t first_unprintable(const char *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (!wire_byte_printable((unsigned char)s[i]))
			return i;
	return to;
}

/* wire_name_span past 8 printable bytes: eight at a time within
 * strnlen's length (no load past the name), a word that fails one byte
 * at a time. */
size_t wire_name_span_rest(const char *s, size_t max)
{
	size_t n = 8 + strnlen(s + 8, max - 8);
	uint64_t w;
	for (size_t i = 8; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (!wire_word_printable(w))
			return first_unprintable(s, i, n);
	}
	memcpy(&w, s + n - 8, 8); /* the last bytes, in a word that may overlap the one before */
	return wire_word_printable(w) ? n : first_unprintable(s, n - 8, n);
}

int wire_name_ok(const char *s, size_t max)
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
	snprintf(why, whylen, "%s", bad);
	return -1;
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
				memcpy(out + o, "...", 3), o += 3;
			break;
		}
		if (need == 1)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	out[o < outlen ? o : outlen - 1] = '\0';
}
