/* fdio.c - see fdio.h. Sends never raise SIGPIPE (MSG_NOSIGNAL). */
#define _GNU_SOURCE
#include "fdio.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "comm.h"

int fdio_wait(int fd, short events, double deadline)
{
	for (;;) {
		int ms = (int)((deadline - runtime_now()) * 1000);
		if (ms <= 0)
			return FDIO_TIMEOUT;
		struct pollfd p = { fd, events, 0 };
		int n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return FDIO_CLOSED;
	}
}

int fdio_recv(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;
	while (len) {
		ssize_t r = recv(fd, p, len, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = fdio_wait(fd, POLLIN, deadline);
			if (rc)
				return rc;
			continue;
		}
		if (r <= 0)
			return FDIO_CLOSED;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int fdio_send(int fd, const void *buf, size_t len, double deadline)
{
	const char *p = buf;
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = fdio_wait(fd, POLLOUT, deadline);
			if (rc)
				return rc;
			continue;
		}
		if (w <= 0)
			return FDIO_CLOSED;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fdio_send_blocking(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return FDIO_CLOSED;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}
