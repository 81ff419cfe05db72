/* error.c - trainer_error_set. What it does not do: print anything. */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"

int trainer_error_set(struct trainer_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}
