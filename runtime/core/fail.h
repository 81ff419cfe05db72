/* core/fail.h - the runtime's way out of a failed call in one step: the
 * one-line message (`hvd: what: 'value': reason`) into the caller's
 * buffer, and the status the caller returns.
 * What it does not do: record the job's failure (runtime_fail, state.c)
 * or set hvd_error()'s text (api/error.c).
 */
#ifndef HVD_FAIL_H
#define HVD_FAIL_H

#include <stddef.h>

/* snprintf(err, len, fmt, ...); returns code. */
int fail_msg(int code, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
