/* core/clock.c - runtime_now (clock.h). */
#include <time.h>

#include "core/clock.h"

double runtime_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
