/* core/fail.c - see fail.h. */
#include "core/fail.h"

#include <stdarg.h>
#include <stdio.h>

int fail_msg(int code, char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}
