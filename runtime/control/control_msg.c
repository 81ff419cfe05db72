/* control_msg.c - what every part of the control plane uses to talk: a
 * frame sent on a socket, the same frame to every open peer, a
 * protocol breach that fails the job naming its sender, a failure's frame
 * (its text and the ranks it lost), a rank's host,
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
#include "plan/wire.h"

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

uint32_t control_fail_frame(const char *text, const struct hvd_lost *lost, char *buf)
{
	size_t n = strnlen(text, 2047);
	int32_t head[2] = { lost->kind, lost->count };

	memcpy(buf, text, n);
	buf[n++] = '\0';
	memcpy(buf + n, head, sizeof(head));
	memcpy(buf + n + sizeof(head), lost->ranks, (size_t)lost->count * sizeof(int32_t));
	return (uint32_t)(n + sizeof(head) + (size_t)lost->count * sizeof(int32_t));
}

void control_fail_read(const struct runtime *rt, const char *frame, uint32_t len, char *text,
		       size_t textlen, struct hvd_lost *lost)
{
	size_t n = strnlen(frame, len), rest = len - n - (n < len);
	int32_t head[2] = { 0, 0 }, ranks[HVD_LOST_MAX];

	wire_sanitize(frame, n, text, textlen);
	if (rest >= sizeof(head))
		memcpy(head, frame + n + 1, sizeof(head));
	if (head[1] < 0 || head[1] > HVD_LOST_MAX || head[0] < HVD_LOST_NONE ||
	    head[0] > HVD_LOST_NEVER_JOINED || rest != sizeof(head) + (size_t)head[1] * 4)
		head[0] = head[1] = 0;
	if (head[1])
		memcpy(ranks, frame + n + 1 + sizeof(head), (size_t)head[1] * sizeof(int32_t));
	runtime_lost_of(rt, (enum hvd_lost_kind)head[0], ranks, head[1], lost);
}

/* A frame that breaks the protocol fails the job naming the sender. */
void control_bad_frame(struct control *c, int from, const char *what, const char *why)
{
	runtime_fail(c->rt, HVD_ERR_COMM, "hvd: control plane: 'rank %d (host %s)': %s: %s",
		     from, control_host_of(c->rt, from), what, why);
}

void control_send_to_peers(struct control *c, uint32_t type, const void *payload, uint32_t len)
{
	for (int i = 0; i < c->npeers; i++)
		if (peer_open(&c->peers[i]) && !control_send_msg(c->peers[i].fd, type, payload, len))
			c->peers[i].knows_failure |= type == MSG_ABORT || type == MSG_ERROR;
}

void control_close_listeners(struct control *c)
{
	for (int i = 0; i < c->nlisten; i++)
		close(c->listen_fd[i]);
	c->nlisten = 0;
}
