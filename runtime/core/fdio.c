/* fdio.c - see fdio.h. Sends never raise SIGPIPE (MSG_NOSIGNAL). */
#include "core/fdio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"

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

/* Moves all of buf in (recv) or out (send) without blocking, waiting
 * for the socket between tries until the deadline. */
static int full(int fd, char *p, size_t len, double deadline, int out)
{
	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
				: recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = fdio_wait(fd, out ? POLLOUT : POLLIN, deadline);
			if (rc)
				return rc;
			continue;
		}
		if (n <= 0)
			return FDIO_CLOSED;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fdio_recv(int fd, void *buf, size_t len, double deadline)
{
	return full(fd, buf, len, deadline, 0);
}

int fdio_send(int fd, const void *buf, size_t len, double deadline)
{
	return full(fd, (char *)buf, len, deadline, 1);
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

int fdio_listen(const char *ip, uint16_t *port, int backlog)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(*port) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd >= 0 && *port)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

int fdio_connect(const char *ip, uint16_t port, double deadline)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int soerr = 0;
	socklen_t l = sizeof(soerr);
	if (fd >= 0 && ((connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) ||
			fdio_wait(fd, POLLOUT, deadline) ||
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) || soerr)) {
		close(fd);
		return -1;
	}
	return fd;
}
