/* record.c - the first failure of a task's record (record.h).
 * What it does not do: decide what a failure is.
 */
#include <stdarg.h>
#include <stdio.h>

#include "record.h"

void check_record_fail(struct check_record *r, const char *fmt, ...)
{
	va_list ap;
	if (r->failed)
		return;
	r->failed = 1;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}
