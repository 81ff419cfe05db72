/* fdio.h - whole-buffer socket reads and writes against a deadline, for
 * the start-up handshakes and frames of the control plane and the tcp
 * backend's links (one copy of the EINTR/EAGAIN/short-count loops), and
 * the IPv4 listen and connect they start from.
 * What it does not do: framing, authentication or error messages (the
 * callers name the peer), or reads in the control thread's poll loop.
 */
#ifndef HVD_FDIO_H
#define HVD_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* Results: 0 done, FDIO_TIMEOUT the deadline passed, FDIO_CLOSED the peer
 * closed or the socket failed. */
#define FDIO_TIMEOUT (-2)
#define FDIO_CLOSED (-1)

/* Deadlines are runtime_now() seconds. */
int fdio_wait(int fd, short events, double deadline);
int fdio_recv(int fd, void *buf, size_t len, double deadline);
int fdio_send(int fd, const void *buf, size_t len, double deadline);
/* Blocking send of all of buf (the socket's own SO_SNDTIMEO bounds it). */
int fdio_send_blocking(int fd, const void *buf, size_t len);
/* A non-blocking, close-on-exec listener on ip:*port (0: ephemeral; a
 * fixed one is taken again at once, SO_REUSEADDR), *port the one bound.
 * The fd, or -1 with errno. */
int fdio_listen(const char *ip, uint16_t *port, int backlog);
/* A non-blocking, close-on-exec connection to ip:port, established by the
 * deadline. The fd, or -1. */
int fdio_connect(const char *ip, uint16_t port, double deadline);

#endif
