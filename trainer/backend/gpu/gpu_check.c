/* gpu_check.c - the one-line message behind gpu_check.h's macros. What it
 * does not do: decide whether a failure is fatal (the caller does).
 */
#include <string.h>

#include "backend/gpu/gpu_check.h"

int gpu_fail(struct trainer_error *err, const char *file, int line, const char *call,
	     const char *library, const char *reason)
{
	const char *base = strrchr(file, '/');
	char shown[120];
	size_t len = strlen(call);

	/* Long calls are cut: the file:line already says which one. */
	if (len >= sizeof(shown))
		len = sizeof(shown) - 4;
	memcpy(shown, call, len);
	strcpy(shown + len, strlen(call) > len ? "..." : "");
	return trainer_error_set(err, "gpu: %s:%d: '%s': %s: %s", base ? base + 1 : file, line,
				 shown, library, reason);
}
