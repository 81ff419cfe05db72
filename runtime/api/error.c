/* api/error.c - hvd_error() (error.h) and hvd_version(). */
#include <stdio.h>

#include "api/error.h"
#include "hvd.h"

static __thread char tls_error[2048];

int api_set_error(int code, const char *text)
{
	snprintf(tls_error, sizeof(tls_error), "%s", text);
	return code;
}

const char *hvd_error(void)
{
	return tls_error;
}

const char *hvd_version(void)
{
	return HVD_VERSION;
}
