/* dicom_codestream.c - the size a JPEG / JPEG-LS / JPEG 2000 fragment
 * declares (dicom_codestream.h). What it does not do: decode.
 */
#include <string.h>

#include "data/dicom/dicom_codestream.h"

/* where JP2 boxes may put the code stream: within the first bytes */
#define J2K_SEARCH 65536

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return be16(p) << 16 | be16(p + 2);
}

/* SIZ: Lsiz Rsiz Xsiz Ysiz XOsiz YOsiz XTsiz YTsiz XTOsiz YTOsiz Csiz. */
static int j2k(const uint8_t *p, size_t n, struct codestream_size *out)
{
	size_t end = n < J2K_SEARCH ? n : J2K_SEARCH;
	for (size_t i = 0; i + 4 + 39 <= n && i + 4 <= end; i++) {
		if (p[i] != 0xff || p[i + 1] != 0x4f || p[i + 2] != 0xff || p[i + 3] != 0x51)
			continue;
		const uint8_t *s = p + i + 4;
		uint32_t x = be32(s + 4), y = be32(s + 8), xo = be32(s + 12), yo = be32(s + 16);
		out->kind = "JPEG 2000";
		if (x <= xo || y <= yo)
			return -1;
		out->width = x - xo, out->height = y - yo, out->components = be16(s + 36);
		out->bits = (s[38] & 0x7f) + 1u;   /* Ssiz: precision - 1, sign bit */
		return 1;
	}
	return 0;
}

/* Markers from SOI to the first frame header (SOF0..15 but DHT, JPG,
 * DAC; SOF55 for JPEG-LS), before any scan. */
static int jpeg(const uint8_t *p, size_t n, struct codestream_size *out)
{
	size_t at = 2;
	while (at + 4 <= n) {
		if (p[at] != 0xff)
			return 0;
		uint8_t m = p[at + 1];
		if (m == 0xff) {   /* fill byte */
			at++;
			continue;
		}
		if (m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01) {
			at += 2;
			continue;
		}
		if (m == 0xda || m == 0xd9)
			return 0;
		uint32_t len = be16(p + at + 2);
		int sof = (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) || m == 0xf7;
		if (sof && at + 2 + 8 <= n && len >= 8) {
			out->kind = "JPEG";
			out->bits = p[at + 4];
			out->height = be16(p + at + 5), out->width = be16(p + at + 7), out->components = p[at + 9];
			if (!out->width)
				return -1;
			return out->height ? 1 : 0;   /* 0: given by a DNL segment later */
		}
		at += 2 + len;
	}
	return 0;
}

int dicom_codestream_size(const uint8_t *p, size_t n, struct codestream_size *out)
{
	memset(out, 0, sizeof(*out));
	if (n >= 4 && p[0] == 0xff && p[1] == 0xd8)
		return jpeg(p, n, out);
	return j2k(p, n, out);
}
