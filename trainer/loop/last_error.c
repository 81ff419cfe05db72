/* loop/last_error.c - stderr through a stream that remembers its last
 * "chexnet: " or "hvd: " line (last_error.h).
 * What it does not do: change what is printed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "loop/last_error.h"

static FILE *saved, *tee;
static char line[512], kept[512];
static size_t used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A finished line: kept when it is a message. */
static void end_line(void)
{
	line[used] = '\0';
	if (!strncmp(line, "chexnet: ", 9) || !strncmp(line, "hvd: ", 5))
		snprintf(kept, sizeof(kept), "%s", line + (line[0] == 'c' ? 9 : 5));
	used = 0;
}

static ssize_t tee_write(void *cookie, const char *buf, size_t size)
{
	size_t done = 0;

	(void)cookie;
	while (done < size) {
		ssize_t n = write(2, buf + done, size - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < size; i++)
		if (buf[i] == '\n')
			end_line();
		else if (used + 1 < sizeof(line))
			line[used++] = buf[i];
	pthread_mutex_unlock(&lock);
	return (ssize_t)size;
}

void last_error_capture(void)
{
	cookie_io_functions_t io = { .write = tee_write };

	kept[0] = '\0';
	used = 0;
	if (!tee && (tee = fopencookie(NULL, "w", io)))
		setvbuf(tee, NULL, _IONBF, 0);
	if (!tee)
		return;
	fflush(stderr);
	saved = stderr;
	stderr = tee;
}

const char *last_error(void)
{
	return kept;
}

void last_error_release(void)
{
	if (!saved)
		return;
	fflush(tee);
	stderr = saved;
	saved = NULL;
}
