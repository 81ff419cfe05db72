/* dicom_inflate.c - deflated data sets inflated within a bound
 * (dicom_inflate.h). Raw deflate as PS3.5 A.5 says; a zlib or gzip
 * header is accepted too. What it does not do: parse the data set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/dicom/dicom_inflate.h"

#define DEFLATED_TS "1.2.840.10008.1.2.1.99"
#define EXPLICIT_TS "1.2.840.10008.1.2.1"   /* 19 characters + NUL pad */

/* VRs with a reserved field and a 32-bit length (PS3.5 7.1.2) */
#define LONG_VRS "OB OD OF OL OV OW SQ SV UC UN UR UT UV"

struct meta {
	size_t end;             /* first byte after group 0002 */
	size_t ts_at, ts_len;   /* (0002,0010): element start, value length */
	size_t length_at;       /* (0002,0000)'s value, 0 when absent */
};

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* Group 0002 (explicit VR little endian) after the preamble; 0 when the
 * file has no DICM prefix or a meta element this does not follow. */
static int read_meta(const uint8_t *d, size_t n, struct meta *m)
{
	memset(m, 0, sizeof(*m));
	if (n < 132 || memcmp(d + 128, "DICM", 4) != 0)
		return 0;
	size_t at = 132;
	while (at + 8 <= n && le16(d + at) == 0x0002) {
		char vr[3] = { (char)d[at + 4], (char)d[at + 5], 0 };
		int long_form = strstr(LONG_VRS, vr) && (strstr(LONG_VRS, vr) - LONG_VRS) % 3 == 0;
		if (long_form && at + 12 > n)
			return 0;
		size_t hdr = long_form ? 12 : 8, len = long_form ? le32(d + at + 8) : le16(d + at + 6);
		if (len > n - at - hdr)
			return 0;
		if (le16(d + at + 2) == 0x0010 && !long_form)
			m->ts_at = at, m->ts_len = len;
		if (le16(d + at + 2) == 0x0000 && len == 4)
			m->length_at = at + hdr;
		at += hdr + len;
	}
	m->end = at;
	if (!m->ts_at)
		return 0;
	const char *ts = (const char *)d + m->ts_at + 8;
	size_t k = m->ts_len;
	while (k && (ts[k - 1] == 0 || ts[k - 1] == ' '))
		k--;
	return k == strlen(DEFLATED_TS) && !memcmp(ts, DEFLATED_TS, k);
}

/* The meta group with Explicit VR Little Endian into out; its size. */
static size_t rewrite_meta(const uint8_t *d, const struct meta *m, uint8_t *out)
{
	size_t n = m->ts_at + 6, tail = m->end - (m->ts_at + 8 + m->ts_len);
	memcpy(out, d, n);
	out[n++] = 20, out[n++] = 0;
	memcpy(out + n, EXPLICIT_TS, 20);   /* with its NUL */
	n += 20;
	memcpy(out + n, d + m->ts_at + 8 + m->ts_len, tail);
	n += tail;
	if (m->length_at) {
		uint32_t v = le32(d + m->length_at) + 20 - (uint32_t)m->ts_len;
		for (int i = 0; i < 4; i++)
			out[m->length_at + i] = (uint8_t)(v >> (8 * i));
	}
	return n;
}

/* Inflates in into out[at..), growing it up to at + cap; -1/-2 as above. */
static int inflate_bounded(const uint8_t *in, size_t in_bytes, int window_bits, uint64_t cap,
			   uint8_t **out, size_t *at, char *why, size_t why_bytes)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, window_bits) != Z_OK)
		return -2;
	size_t base = *at, size = base + (cap < (1u << 20) ? cap : (1u << 20));
	uint8_t *first = realloc(*out, size);
	if (!first)
		return inflateEnd(&z), -2;
	*out = first;
	int rc = Z_OK;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)(in_bytes < 0x40000000u ? in_bytes : 0x40000000u);
	while (rc == Z_OK) {
		if (*at == size) {
			if (size - base >= cap)
				break;
			size_t grow = size - base < cap / 2 ? 2 * (size - base) : cap;
			uint8_t *more = realloc(*out, base + grow);
			if (!more)
				return inflateEnd(&z), -2;
			*out = more, size = base + grow;
		}
		z.next_out = *out + *at;
		z.avail_out = (uInt)(size - *at < 0x40000000u ? size - *at : 0x40000000u);
		uInt before = z.avail_out;
		rc = inflate(&z, Z_NO_FLUSH);
		*at += before - z.avail_out;
		if (rc == Z_BUF_ERROR && z.avail_out > 0)
			break;   /* needs input there is not */
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	inflateEnd(&z);
	if (rc == Z_STREAM_END)
		return 0;
	if (rc == Z_MEM_ERROR)
		return -2;
	if (rc == Z_OK)
		return snprintf(why, why_bytes, "deflated data set inflates past %llu MiB (the decoded-size "
				"limit, --max-pixels, plus 64 MiB of attributes): refused before decoding",
				(unsigned long long)(cap >> 20)), -1;
	return snprintf(why, why_bytes, "deflated data set %s", rc == Z_BUF_ERROR ?
			"cut short by the end of the file: truncated" : "corrupt (zlib)"), -1;
}

int dicom_inflate(const uint8_t *data, size_t bytes, uint64_t cap, uint8_t **out,
		  size_t *out_bytes, char *why, size_t why_bytes)
{
	struct meta m;
	*out = NULL;
	if (!read_meta(data, bytes, &m))
		return 0;
	size_t at = 0;
	*out = malloc(m.end + 20);
	if (!*out)
		return -2;
	at = rewrite_meta(data, &m, *out);
	size_t meta_bytes = at;
	int rc = inflate_bounded(data + m.end, bytes - m.end, -15, cap, out, &at, why, why_bytes);
	if (rc == -1 && at == meta_bytes) {   /* nothing came out: a zlib or gzip header? */
		rc = inflate_bounded(data + m.end, bytes - m.end, 15 + 32, cap, out, &at, why, why_bytes);
	}
	if (rc != 0) {
		free(*out);
		*out = NULL;
		return rc;
	}
	*out_bytes = at;
	return 1;
}
