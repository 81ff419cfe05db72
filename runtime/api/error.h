/* api/error.h - this thread's hvd_error() text, set by the API's calls
 * (api.c, submit.c) on their way out.
 * What it does not do: record a job's failure (engine/state.c:
 * runtime_fail).
 */
#ifndef HVD_API_ERROR_H
#define HVD_API_ERROR_H

/* Sets this thread's hvd_error() text; returns code. */
int api_set_error(int code, const char *text);

#endif
