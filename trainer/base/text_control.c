/* text_control.c - the first control character of a string (see
 * text_control.h).
 * What it does not do: judge UTF-8 (bytes from 0x80 are text).
 */
#include "base/text_control.h"

long text_control_at(const char *s)
{
	for (long i = 0; s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return i;
	return -1;
}
