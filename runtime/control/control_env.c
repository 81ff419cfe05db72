/* control_env.c - the control plane's part of a launch without PMIx
 * (bootstrap_env.h): nobody publishes rank 0's address or a secret, so
 * every rank connects at start-up to HVD_COORDINATOR (resolved again on
 * every attempt: a Kubernetes Service name exists only once rank 0's pod
 * does) with the same authenticated handshake as under Slurm, and the
 * bootstrap's blob exchange (host table, NCCL unique id, the TCP
 * backend's addresses) runs over those connections, a star around rank 0:
 * every worker sends its part, rank 0 answers with the whole table. A
 * failure during start-up is sent to every connected rank before rank 0
 * closes. Also hvd_abort_job without a launcher: fail, let the control
 * thread broadcast, name the ranks it cannot reach, return.
 * What it does not do: the handshake (control.c, control_join.c) or the
 * frames after start-up (control_loop.c); it never exits.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control/control_state.h"
#include "observe/report.h"
#include "control/control_env.h"
#include "core/fail.h"
#include "core/fdio.h"

/* Start-up frames, never seen by control_loop.c (numbers apart from wire.h's). */
enum { ENV_MSG_PART = 64, ENV_MSG_TABLE = 65 };
#define ENV_KEY_BYTES 32

/* Every address HVD_COORDINATOR's host resolves to now, into rank 0's row. */
static int resolve_coordinator(struct runtime *rt, char *why, size_t whylen)
{
	struct host_entry *root = &rt->hosts[0];
	int rc = control_resolve(rt->set.coord_host, root->ctl_addrs, sizeof(root->ctl_addrs),
				 (int)sizeof(root->ctl_addrs)); /* every one that fits */
	root->ctl_port = rt->set.coord_port;
	snprintf(why, whylen, "%s", rc ? gai_strerror(rc) : "no answer, or no proof of the job secret");
	return rc ? -1 : 0;
}

/* Rank 0 tells every connected worker why start-up failed. */
static void tell_workers(struct control *c, const char *text)
{
	char frame[CONTROL_FAIL_FRAME];
	if (c->rt->boot.rank == 0 && c->peers)
		control_send_to_peers(c, MSG_ABORT, frame, control_fail_frame(text, &runtime_lost, frame));
}

/* ---- the exchange: frames with a deadline, before the control thread ---- */

/* One frame of `type` and exactly `len` bytes into buf. An ABORT's text
 * becomes err (rank 0 failed and said why; the ranks it lost, the
 * record); anything else is named. */
static int read_frame(struct runtime *rt, int fd, uint32_t type, void *buf, size_t len,
		      double deadline, const char *who, char *err, size_t errlen)
{
	struct msg_header h = { 0, 0 };
	int rc = fdio_recv(fd, &h, sizeof(h), deadline);
	if (!rc && h.type == MSG_ABORT && h.len < WIRE_MAX_MSG) {
		char *text = calloc(1, (size_t)h.len + 1);
		if (text && !fdio_recv(fd, text, h.len, deadline)) {
			control_fail_read(rt, text, h.len, err, errlen, &runtime_lost);
			free(text);
			return HVD_ERR_ABORTED;
		}
		free(text);
		rc = -1;
	}
	if (!rc && (h.type != type || h.len != len))
		snprintf(err, errlen, "hvd: %s: 'message type %u, %u bytes': expected %u bytes of "
			 "type %u during start-up (a different hvd version or a different start-up "
			 "sequence)", who, h.type, h.len, (unsigned)len, type);
	else if (!rc)
		rc = fdio_recv(fd, buf, len, deadline);
	if (rc == FDIO_TIMEOUT)
		snprintf(err, errlen, "hvd: %s: 'silent': sent nothing of the start-up exchange "
			 "within HVD_TIMEOUT_S", who);
	else if (rc == FDIO_CLOSED)
		snprintf(err, errlen, "hvd: %s: 'control connection closed': during the start-up "
			 "exchange (the process died or failed)", who);
	return rc ? HVD_ERR_COMM : (h.type != type || h.len != len) ? HVD_ERR_BOOTSTRAP : 0;
}

static int root_exchange(struct control *c, const char *key, const void *mine, size_t len,
			 void *all, char *err, size_t errlen)
{
	struct runtime *rt = c->rt;
	double deadline = runtime_now() + rt->set.timeout_s;
	size_t part = ENV_KEY_BYTES + len;
	char *buf = malloc(part);
	if (!buf)
		return HVD_ERR_NOMEM;
	memcpy(all, mine, len);
	int rc = 0;
	for (int r = 1; !rc && r < rt->boot.size; r++) {
		char who[96];
		snprintf(who, sizeof(who), "rank %d (host %s)", r, control_host_of(rt, r));
		rc = read_frame(rt, c->peers[r].fd, ENV_MSG_PART, buf, part, deadline, who, err, errlen);
		if (!rc && strncmp(buf, key, ENV_KEY_BYTES)) {
			char theirs[ENV_KEY_BYTES * 4 + 1];
			wire_sanitize(buf, strnlen(buf, ENV_KEY_BYTES), theirs, sizeof(theirs));
			rc = fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "hvd: %s: '%s': exchanged while "
				      "rank 0 exchanged '%s' (the ranks chose different backends?)", who,
				      theirs, key);
		}
		if (!rc)
			memcpy((char *)all + (size_t)r * len, buf + ENV_KEY_BYTES, len);
	}
	free(buf);
	size_t table = (size_t)rt->boot.size * len;
	for (int r = 1; !rc && r < rt->boot.size; r++)
		if (control_send_msg(c->peers[r].fd, ENV_MSG_TABLE, all, (uint32_t)table))
			rc = HVD_ERR_COMM;
	return rc;
}

static int exchange(void *ctx, const char *key, const void *mine, size_t len, void *all,
		    char *err, size_t errlen)
{
	struct control *c = ctx;
	struct runtime *rt = c->rt;
	if ((size_t)rt->boot.size * len >= UINT32_MAX || strlen(key) >= ENV_KEY_BYTES)
		return fail_msg(HVD_ERR_USAGE, err, errlen, "hvd: bootstrap: '%s': %zu bytes per "
				"rank: too large", key, len);
	if (rt->boot.rank == 0) {
		int rc = root_exchange(c, key, mine, len, all, err, errlen);
		if (rc) {
			char text[2400], suffix[300];
			runtime_suffix(rt, suffix, sizeof(suffix));
			snprintf(text, sizeof(text), "%s%s", err, strstr(err, "[rank ") ? "" : suffix);
			tell_workers(c, text);
		}
		return rc;
	}
	char *part = calloc(1, ENV_KEY_BYTES + len);
	if (!part)
		return HVD_ERR_NOMEM;
	memcpy(part, key, strlen(key));
	memcpy(part + ENV_KEY_BYTES, mine, len);
	int rc = control_send_msg(c->peers[0].fd, ENV_MSG_PART, part, (uint32_t)(ENV_KEY_BYTES + len));
	free(part);
	char who[96];
	snprintf(who, sizeof(who), "rank 0 (host %s)", control_host_of(rt, 0));
	if (rc)
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: %s: 'control connection closed': "
				"during the start-up exchange", who);
	return read_frame(rt, c->peers[0].fd, ENV_MSG_TABLE, all, (size_t)rt->boot.size * len,
			  runtime_now() + 2 * rt->set.timeout_s, who, err, errlen);
}

/* ---- start-up: every rank connected, then the exchange over those connections ---- */

int control_env_rendezvous(struct runtime *rt, char *err, size_t errlen)
{
	struct control *c = rt->ctl;
	if (rt->boot.size == 1)
		return 0;
	for (int r = 0; r < rt->boot.size; r++)
		if (r != rt->boot.rank)
			snprintf(rt->hosts[r].host, sizeof(rt->hosts[r].host), "?");
	if (control_peers_init(c))
		return HVD_ERR_NOMEM;
	char why[256] = "not tried";
	int rc = 0;
	if (rt->boot.rank == 0)
		rc = control_join(c, err, errlen);
	else if (control_reach_rank0(c, resolve_coordinator, why, sizeof(why))) {
		int rank0 = 0;
		runtime_lost_of(rt, HVD_LOST_NEVER_JOINED, &rank0, 1, &runtime_lost);
		rc = fail_msg(HVD_ERR_COMM, err, errlen, "hvd: HVD_COORDINATOR: '%s:%u': rank 0 did "
			      "not answer within HVD_TIMEOUT_S (%g s): %s (is rank 0 running, with the "
			      "same HVD_SECRET_FILE contents?)", rt->set.coord_host, rt->set.coord_port,
			      rt->set.timeout_s, why);
	}
	control_close_listeners(c);
	if (rc) {
		tell_workers(c, err);
		return rc;
	}
	c->joined = 1;
	rt->boot.exchange = exchange;
	rt->boot.exchange_ctx = c;
	return 0;
}

/* The local address of a connection of the control plane: where the
 * other ranks reach this one. A worker: its connection to rank 0; rank 0
 * (which may listen on every address, HVD_COORDINATOR=0.0.0.0:PORT): a
 * worker's from another host where there is one, else loopback. */
int control_env_address(struct runtime *rt, char *ip, size_t len)
{
	struct control *c = rt->ctl;
	int root = rt->boot.rank == 0;
	ip[0] = '\0';
	for (int r = root; c && c->peers && r < (root ? rt->boot.size : 1); r++) {
		struct sockaddr_in a;
		socklen_t alen = sizeof(a);
		if (c->peers[r].fd >= 0 && !getsockname(c->peers[r].fd, (struct sockaddr *)&a, &alen) &&
		    inet_ntop(AF_INET, &a.sin_addr, ip, (socklen_t)len) && strncmp(ip, "127.", 4) != 0)
			break;
	}
	return ip[0] ? 0 : -1;
}

const struct auth_key *control_env_key(struct runtime *rt)
{
	return rt->ctl ? &rt->ctl->key : NULL;
}

/* ---- hvd_abort_job without a launcher ---- */

static void name_unreachable(struct control *c, char *out, size_t len)
{
	struct runtime *rt = c->rt;
	int *ranks = calloc((size_t)rt->boot.size, sizeof(int)), n = 0;
	out[0] = '\0';
	if (!ranks)
		return;
	for (int i = 0; c->peers && i < c->npeers; i++) {
		int r = peer_rank(c, i);
		if (r != rt->boot.rank && !c->peers[i].knows_failure && !c->peers[i].said_bye)
			ranks[n++] = r;
	}
	if (n)
		report_name_ranks(rt->hosts, rt->boot.size, ranks, n, out, len);
	free(ranks);
}

int control_env_abort(struct runtime *rt, int status, char *err, size_t errlen)
{
	struct control *c = rt->ctl;
	if (!rt->aborted)
		runtime_fail(rt, HVD_ERR_ABORTED, "hvd: hvd_abort_job: 'status %d': this rank "
			     "ends the job", status);
	control_wake(rt);
	if (!c || !c->thread_started)
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: hvd_abort_job: 'no control "
				"plane': the other ranks were not told");
	int sent = control_await_failure_sent(c, 2.0);
	char who[1024];
	name_unreachable(c, who, sizeof(who));
	if (!sent || who[0])
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: hvd_abort_job: '%s': not reached "
				"by the abort (dead or cut off%s); they fail on their own within "
				"HVD_TIMEOUT_S", who[0] ? who : "every rank",
				rt->boot.rank ? ": the others hear of it only through rank 0" : "");
	return HVD_OK;
}
