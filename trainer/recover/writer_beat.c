/* recover/writer_beat.c - the writer's beat and the wait's limit
 * (writer_beat.h): one thread rewriting one line in place.
 * What it does not do: wait (recover/survivors.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fence.h"
#include "recover/survivors.h"
#include "recover/writer_beat.h"

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int fd, running, stop;
	double interval_s;
	char path[4400], who[512];
} beat = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .fd = -1 };

static void path_of(char *buf, size_t len, const char *out, long g)
{
	snprintf(buf, len, "%s/" FENCE_DIR "/%ld.writing", out, g);
}

/* Beat n, in place: the line has a fixed width, so nothing is left over. */
static void put(long n)
{
	char line[640];
	int len = snprintf(line, sizeof(line), "%s beat %020ld\n", beat.who, n);
	if (pwrite(beat.fd, line, (size_t)len, 0) == len)
		fdatasync(beat.fd);
}

static void *run(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&beat.lock);
	for (long n = 1; !beat.stop; n++) {
		put(n);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		double at = until.tv_sec + until.tv_nsec * 1e-9 + beat.interval_s;
		until.tv_sec = (time_t)at;
		until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
		while (!beat.stop && pthread_cond_timedwait(&beat.wake, &beat.lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&beat.lock);
	return NULL;
}

int writer_beat_start(const char *out, long g, int rank, const char *host, double interval_s)
{
	if (beat.running)
		writer_beat_stop();
	path_of(beat.path, sizeof(beat.path), out, g);
	snprintf(beat.who, sizeof(beat.who), "rank %d host %.200s", rank, host);
	beat.fd = open(beat.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (beat.fd < 0)
		return -1;
	put(0);
	beat.interval_s = interval_s;
	beat.stop = 0;
	int rc = pthread_create(&beat.thread, NULL, run, NULL);
	if (rc) {
		close(beat.fd);
		unlink(beat.path);
		beat.fd = -1;
		errno = rc;
		return -1;
	}
	beat.running = 1;
	return 0;
}

void writer_beat_stop(void)
{
	if (!beat.running)
		return;
	pthread_mutex_lock(&beat.lock);
	beat.stop = 1;
	pthread_cond_signal(&beat.wake);
	pthread_mutex_unlock(&beat.lock);
	pthread_join(beat.thread, NULL);
	close(beat.fd);
	unlink(beat.path);
	beat.fd = -1;
	beat.running = 0;
}

void writer_beat_read(const char *out, long g, char *text, size_t len)
{
	char path[4400];
	path_of(path, sizeof(path), out, g);
	text[0] = '\0';
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, text, len - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	text[strcspn(text, "\n")] = '\0';
}

double writer_wait_limit_s(double checkpoint_bytes)
{
	double by_size = checkpoint_bytes / WRITER_SLOWEST_BYTES_PER_S;
	return by_size > SURVIVORS_SAVE_WAIT_S ? by_size : SURVIVORS_SAVE_WAIT_S;
}
