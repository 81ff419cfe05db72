/* control_msg.c - what every part of the control plane uses to talk: a
 * frame sent on a socket, the same frame to every open worker, a
 * protocol breach that fails the job naming its sender, a rank's host,
 * the socket options every control connection gets, and rank 0's
 * listeners closed.
 * What it does not do: read frames (control_loop.c) or connect
 * (control.c, control_join.c).
 */
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control_state.h"
#include "core/fdio.h"

int control_send_msg(int fd, uint32_t type, const void *payload, uint32_t len)
{
	char stackbuf[512];
	char *buf = len + sizeof(struct msg_header) <= sizeof(stackbuf) ? stackbuf
		    : malloc(len + sizeof(struct msg_header));
	if (!buf)
		return -1;
	struct msg_header h = { type, len };
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	int rc = fdio_send_blocking(fd, buf, sizeof(h) + len);
	if (buf != stackbuf)
		free(buf);
	return rc;
}

const char *control_host_of(const struct runtime *rt, int rank)
{
	return rt->hosts && rank >= 0 && rank < rt->boot.size ? rt->hosts[rank].host : "?";
}

void control_socket_options(int fd, double timeout_s)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* whole seconds, rounded up: a zero timeval would mean "block forever" */
	time_t whole = (time_t)ceil(timeout_s);
	struct timeval tv = { whole < 1 ? 1 : whole, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

/* A frame that breaks the protocol fails the job naming the sender. */
void control_bad_frame(struct control *c, int from, const char *what, const char *why)
{
	runtime_fail(c->rt, HVD_ERR_COMM, "hvd: control plane: 'rank %d (host %s)': %s: %s",
		     from, control_host_of(c->rt, from), what, why);
}

void control_send_to_workers(struct control *c, uint32_t type, const void *payload, uint32_t len)
{
	for (int i = 0; i < c->npeers; i++)
		if (peer_open(&c->peers[i]))
			control_send_msg(c->peers[i].fd, type, payload, len);
}

void control_close_listeners(struct control *c)
{
	for (int i = 0; i < c->nlisten; i++)
		close(c->listen_fd[i]);
	c->nlisten = 0;
}
