/* fake_nccl.cpp - NCCL of the emulated device (make GPU_EMU=1): the calls
 * runtime/transport/comm_nccl.c makes, between processes over TCP, so
 * the NCCL transport runs on the test clusters (one node or several).
 *  - ncclGetUniqueId listens on every IPv4 address of the host and puts
 *    them, the port and a random nonce in the id; the other ranks connect
 *    to rank 0 (a star: rank 0 combines, in rank order, and sends back,
 *    so every rank gets bit-identical results, as NCCL guarantees).
 *  - ncclCommInitRankConfig with blocking = 0 returns ncclInProgress and
 *    connects on a thread; ncclCommGetAsyncError reports the state.
 *  - All-reduce (sum, avg), broadcast and all-gather run in stream order
 *    on the emulated device's memory (emu_device.h); buffers of another
 *    device than the communicator's are ncclInvalidArgument. Each
 *    collective carries a header, so ranks calling different collectives
 *    or sizes fail with ncclInvalidUsage instead of mixing data.
 *  - A closed socket (a dead peer) or a mismatch sets the async error
 *    (ncclRemoteError / ncclInvalidUsage) and the collective then hangs
 *    like a NCCL kernel, until ncclCommAbort, which shuts the sockets.
 *  - Groups are accepted; their collectives run in the order issued.
 *  - Every rank listens too and rank 0 hands out everyone's address at
 *    set-up, so ncclCommShrink needs no new id: the ranks left connect
 *    to the lowest of them, numbered in their old order. ncclCommRevoke
 *    ends the in-flight work (as ncclCommAbort does) and keeps that; on
 *    a non-blocking communicator it is in progress until the work has
 *    drained (QUIESCE_MS later), and a shrink before then or with no
 *    rank excluded is ncclInvalidArgument, as NCCL 2.28's is.
 * What it does not do: rings, trees, bandwidth, point-to-point calls,
 * other reduction operators or data types than the runtime uses.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emu_device.h"

namespace {

const uint32_t MAGIC = 0x48564e43;   /* "HVNC" */
const int MAX_ADDRS = 16;
const int QUIESCE_MS = 50;   /* a revoke's drain of in-flight kernels */

/* What ncclUniqueId holds (128 bytes). */
struct id_layout {
	uint32_t magic;
	uint16_t port;
	uint8_t naddr;
	uint8_t pad;
	uint64_t nonce;
	uint32_t addr[MAX_ADDRS];   /* network order */
};
static_assert(sizeof(id_layout) <= NCCL_UNIQUE_ID_BYTES, "id");

/* Where a rank listens: every rank's is known after set-up. */
struct endpoint {
	uint16_t port;
	uint8_t naddr;
	uint8_t pad;
	uint32_t addr[MAX_ADDRS];   /* network order */
};

/* Sent before every collective's data. */
struct header {
	uint32_t magic;
	uint32_t kind;   /* collective and type: see op_word */
	uint64_t bytes;
	uint64_t seq;
	int32_t root;
	int32_t rank;
};

std::mutex listeners_mu;
std::map<uint64_t, int> *listeners = new std::map<uint64_t, int>;   /* nonce -> socket */

struct comm_state {
	int rank = 0, size = 0, device = 0;
	id_layout id{};
	std::vector<int> fds;   /* rank 0: one per peer rank; others: [0] = rank 0 */
	int listener = -1;      /* this rank's, kept for a shrink's new rank 0 */
	std::vector<endpoint> table;   /* every rank's listener, once set up */
	bool blocking = true;
	std::atomic<int> result{ncclInProgress};
	std::atomic<bool> aborted{false};   /* by ncclCommAbort or ncclCommRevoke */
	std::atomic<bool> revoked{false};
	std::mutex mu;
	std::condition_variable cv;
	uint64_t seq = 0;
	std::thread setup;

	~comm_state()
	{
		for (int fd : fds)
			if (fd >= 0)
				close(fd);
		if (listener >= 0)
			close(listener);
	}

	void fail(ncclResult_t why, const char *what)
	{
		int none = ncclSuccess;
		if (result.compare_exchange_strong(none, (int)why))
			fprintf(stderr, "emulated NCCL: rank %d: %s\n", rank, what);
		for (int fd : fds)
			if (fd >= 0)
				shutdown(fd, SHUT_RDWR);   /* the peers see a closed socket */
	}

	/* A failed collective hangs as a NCCL kernel would, until abort. */
	void hang()
	{
		std::unique_lock<std::mutex> lock(mu);
		cv.wait(lock, [&] { return aborted.load(); });
	}
};

} /* namespace */

struct ncclComm {
	std::shared_ptr<comm_state> s;
};

namespace {

/* --- sockets --- */

/* Waits for fd to be ready for events, 200 ms at a time, until abort. */
bool wait_fd(comm_state &c, int fd, short events)
{
	for (;;) {
		if (c.aborted)
			return false;
		struct pollfd p = { fd, events, 0 };
		int n = poll(&p, 1, 200);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
}

/* All of bytes sent (out) or received, waiting until abort; false when
 * the peer is gone or the communicator aborted. */
bool move_all(comm_state &c, int fd, char *p, size_t bytes, bool out)
{
	while (bytes) {
		if (!wait_fd(c, fd, out ? POLLOUT : POLLIN))
			return false;
		ssize_t n = out ? send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT)
				: recv(fd, p, bytes, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return false;
		p += n;
		bytes -= (size_t)n;
	}
	return true;
}

bool send_all(comm_state &c, int fd, const void *buf, size_t bytes)
{
	return move_all(c, fd, (char *)buf, bytes, true);
}

bool recv_all(comm_state &c, int fd, void *buf, size_t bytes)
{
	return move_all(c, fd, (char *)buf, bytes, false);
}

int connect_to(uint32_t addr, uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {};
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = addr;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The host's IPv4 addresses, loopback last. */
int host_addrs(uint32_t *out)
{
	struct ifaddrs *all = NULL;
	int n = 0;
	if (getifaddrs(&all) == 0)
		for (struct ifaddrs *i = all; i && n < MAX_ADDRS - 1; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
				uint32_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
				if (a != htonl(INADDR_LOOPBACK))
					out[n++] = a;
			}
	freeifaddrs(all);
	out[n++] = htonl(INADDR_LOOPBACK);
	return n;
}

/* A socket listening on every address of the host, its port in *port. */
int listen_any(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {};
	socklen_t len = sizeof(sa);
	sa.sin_family = AF_INET;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* --- setting up --- */

struct hello {
	uint32_t magic;
	int32_t rank, size;
	uint64_t nonce;
	endpoint self;
};

ncclResult_t accept_peers(comm_state &c)
{
	if (c.listener < 0) {
		std::lock_guard<std::mutex> hold(listeners_mu);
		auto it = listeners->find(c.id.nonce);
		if (it == listeners->end())
			return ncclInvalidArgument;   /* rank 0 must use its own id */
		c.listener = it->second;
		listeners->erase(it);
	}
	c.fds.assign((size_t)c.size, -1);
	c.table.assign((size_t)c.size, endpoint{});
	c.table[0] = endpoint{ c.id.port, c.id.naddr, 0, {} };
	memcpy(c.table[0].addr, c.id.addr, sizeof(c.id.addr));
	for (int got = 1; got < c.size;) {
		if (!wait_fd(c, c.listener, POLLIN))
			break;
		int fd = accept4(c.listener, NULL, NULL, SOCK_CLOEXEC);
		hello h;
		if (fd < 0 || !recv_all(c, fd, &h, sizeof(h)) || h.magic != MAGIC ||
		    h.nonce != c.id.nonce || h.size != c.size || h.rank <= 0 || h.rank >= c.size ||
		    c.fds[(size_t)h.rank] >= 0 || h.self.naddr < 1 || h.self.naddr > MAX_ADDRS) {
			if (fd >= 0)
				close(fd);
			continue;   /* a stranger or a stale connection: not a rank */
		}
		c.fds[(size_t)h.rank] = fd;
		c.table[(size_t)h.rank] = h.self;
		got++;
	}
	if (c.aborted)
		return ncclInternalError;
	char ok = 1;
	size_t table_bytes = c.table.size() * sizeof(endpoint);
	for (int r = 1; r < c.size; r++)
		if (!send_all(c, c.fds[(size_t)r], &ok, 1) ||
		    !send_all(c, c.fds[(size_t)r], c.table.data(), table_bytes))
			return ncclRemoteError;
	return ncclSuccess;
}

ncclResult_t join_root(comm_state &c)
{
	hello h = { MAGIC, c.rank, c.size, c.id.nonce, {} };
	if (c.listener < 0 && (c.listener = listen_any(&h.self.port)) < 0)
		return ncclSystemError;
	h.self.naddr = (uint8_t)host_addrs(h.self.addr);
	int fd = -1;
	while (fd < 0 && !c.aborted) {
		for (int i = 0; i < c.id.naddr && fd < 0; i++)
			fd = connect_to(c.id.addr[i], c.id.port);
		if (fd < 0)
			usleep(100 * 1000);
	}
	if (fd < 0)
		return ncclInternalError;
	c.fds.assign(1, fd);
	char ok = 0;
	c.table.assign((size_t)c.size, endpoint{});
	if (!send_all(c, fd, &h, sizeof(h)) || !recv_all(c, fd, &ok, 1) || ok != 1 ||
	    !recv_all(c, fd, c.table.data(), c.table.size() * sizeof(endpoint)))
		return ncclRemoteError;
	return ncclSuccess;
}

void set_up(std::shared_ptr<comm_state> c)
{
	ncclResult_t r = c->rank == 0 ? (c->size == 1 ? ncclSuccess : accept_peers(*c)) : join_root(*c);
	if (r != ncclSuccess)
		c->fail(r, "connecting the communicator failed");
	else
		c->result = ncclSuccess;
}

/* --- collectives --- */

size_t type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8: case ncclUint8: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
	default: return 0;
	}
}

/* acc = acc + x, element-wise; the last rank's turn divides for avg. */
template <typename T> void add_as(void *acc, const void *x, size_t n, int divide)
{
	T *a = (T *)acc;
	const T *b = (const T *)x;
	for (size_t i = 0; i < n; i++) {
		a[i] = (T)(a[i] + b[i]);
		if (divide)
			a[i] = (T)(a[i] / divide);
	}
}

/* fp16/bf16: summed in float, rounded once per step. */
template <typename H, typename F, typename G>
void add_half(void *acc, const void *x, size_t n, int divide, F to_float, G from_float)
{
	H *a = (H *)acc;
	const H *b = (const H *)x;
	for (size_t i = 0; i < n; i++) {
		float v = to_float(a[i]) + to_float(b[i]);
		a[i] = from_float(divide ? v / (float)divide : v);
	}
}

void add(ncclDataType_t t, void *acc, const void *x, size_t n, int divide)
{
	switch (t) {
	case ncclFloat32: add_as<float>(acc, x, n, divide); break;
	case ncclFloat64: add_as<double>(acc, x, n, divide); break;
	case ncclInt32: add_as<int32_t>(acc, x, n, divide); break;
	case ncclUint32: add_as<uint32_t>(acc, x, n, divide); break;
	case ncclInt64: add_as<int64_t>(acc, x, n, divide); break;
	case ncclUint64: add_as<uint64_t>(acc, x, n, divide); break;
	case ncclInt8: add_as<int8_t>(acc, x, n, divide); break;
	case ncclUint8: add_as<uint8_t>(acc, x, n, divide); break;
	case ncclFloat16:
		add_half<__half>(acc, x, n, divide, [](__half h) { return __half2float(h); },
				 [](float f) { return __float2half_rn(f); });
		break;
	case ncclBfloat16:
		add_half<__nv_bfloat16>(acc, x, n, divide,
					[](__nv_bfloat16 h) { return __bfloat162float(h); },
					[](float f) { return __float2bfloat16_rn(f); });
		break;
	default: break;
	}
}

enum kind { ALLREDUCE = 1, BROADCAST = 2, ALLGATHER = 3 };

struct collective {
	enum kind kind;
	ncclDataType_t type;
	ncclRedOp_t op;
	const void *send;
	void *recv;
	size_t count;   /* elements per rank */
	int root;
};

uint32_t op_word(const collective &k)
{
	return (uint32_t)k.kind << 16 | (uint32_t)k.type << 8 | (uint32_t)k.op;
}

/* Rank 0 checks each peer's header against its own. */
bool same_collective(comm_state &c, int fd, const header &mine)
{
	header h;
	if (!recv_all(c, fd, &h, sizeof(h)))
		return false;
	if (h.magic != MAGIC || h.kind != mine.kind || h.bytes != mine.bytes || h.seq != mine.seq ||
	    h.root != mine.root) {
		char why[200];
		snprintf(why, sizeof(why), "rank %d called collective %u of %llu bytes (seq %llu), rank 0 "
			 "collective %u of %llu bytes (seq %llu)", h.rank, h.kind, (unsigned long long)h.bytes,
			 (unsigned long long)h.seq, mine.kind, (unsigned long long)mine.bytes,
			 (unsigned long long)mine.seq);
		c.fail(ncclInvalidUsage, why);
		return false;
	}
	return true;
}

/* Rank 0: gathers the peers' data (in rank order), combines, sends the
 * result to every peer. */
bool root_side(comm_state &c, const collective &k, const header &mine)
{
	size_t bytes = k.count * type_size(k.type);
	std::vector<char> in(bytes);
	if (k.kind == ALLREDUCE && k.recv != k.send)
		memmove(k.recv, k.send, bytes);
	if (k.kind == ALLGATHER)
		memmove((char *)k.recv, k.send, bytes);
	if (k.kind == BROADCAST && k.root == 0 && k.recv != k.send)
		memmove(k.recv, k.send, bytes);
	for (int r = 1; r < c.size; r++) {
		int fd = c.fds[(size_t)r];
		if (!same_collective(c, fd, mine))
			return false;
		if (k.kind == BROADCAST && r != k.root)
			continue;
		void *into = k.kind == ALLREDUCE ? in.data()
			   : k.kind == ALLGATHER ? (char *)k.recv + (size_t)r * bytes : k.recv;
		if (!recv_all(c, fd, into, bytes))
			return false;
		if (k.kind == ALLREDUCE)
			add(k.type, k.recv, in.data(), k.count,
			    r == c.size - 1 && k.op == ncclAvg ? c.size : 0);
	}
	size_t out = k.kind == ALLGATHER ? bytes * (size_t)c.size : bytes;
	for (int r = 1; r < c.size; r++)
		if (!send_all(c, c.fds[(size_t)r], k.recv, out))
			return false;
	return true;
}

bool peer_side(comm_state &c, const collective &k, const header &mine)
{
	int fd = c.fds[0];
	size_t bytes = k.count * type_size(k.type);
	if (!send_all(c, fd, &mine, sizeof(mine)))
		return false;
	if ((k.kind != BROADCAST || k.root == c.rank) && !send_all(c, fd, k.send, bytes))
		return false;
	return recv_all(c, fd, k.recv, k.kind == ALLGATHER ? bytes * (size_t)c.size : bytes);
}

void run(comm_state &c, const collective &k)
{
	if (c.aborted)
		return;
	if (c.result != ncclSuccess) {
		c.hang();
		return;
	}
	header mine = { MAGIC, op_word(k), k.count * type_size(k.type), c.seq++, k.root, c.rank };
	bool ok = c.size == 1 ? (root_side(c, k, mine), true)
		  : c.rank == 0 ? root_side(c, k, mine) : peer_side(c, k, mine);
	if (!ok && !c.aborted) {
		c.fail(ncclRemoteError, "a peer closed its connection (a rank died?)");
		c.hang();
	}
}

/* Ends the in-flight work, for abort and revoke: a hung collective
 * returns, the set-up thread ends, the sockets shut (so the peers'
 * collectives fail as well). The listener stays. */
void stop(comm_state &c)
{
	{
		std::lock_guard<std::mutex> hold(c.mu);
		c.aborted = true;
		c.cv.notify_all();
	}
	if (c.setup.joinable())
		c.setup.join();   /* it ends within a poll slice: fds are its until then */
	for (int fd : c.fds)
		if (fd >= 0)
			shutdown(fd, SHUT_RDWR);
}

/* A shrunk communicator's nonce: the same on every rank left, another
 * than its parent's (splitmix64). */
uint64_t next_nonce(uint64_t n)
{
	n += 0x9e3779b97f4a7c15ull;
	n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ull;
	n = (n ^ (n >> 27)) * 0x94d049bb133111ebull;
	return n ^ (n >> 31);
}

/* The ranks of p that stay, marked: false for each excluded one; empty
 * when the list is not a proper subset of p's ranks or names this one. */
std::vector<bool> staying(const comm_state &p, const int *exclude, int n)
{
	std::vector<bool> stays((size_t)p.size, true);
	for (int i = 0; i < n; i++) {
		if (exclude[i] < 0 || exclude[i] >= p.size || !stays[(size_t)exclude[i]])
			return {};
		stays[(size_t)exclude[i]] = false;
	}
	if (!stays[(size_t)p.rank])
		return {};   /* an excluded rank does not call it */
	return stays;
}

ncclResult_t issue(ncclComm_t comm, const collective &k, cudaStream_t stream)
{
	if (!comm || !type_size(k.type) || (k.kind == ALLREDUCE && k.op != ncclSum && k.op != ncclAvg) ||
	    k.root < 0 || k.root >= comm->s->size)
		return ncclInvalidArgument;
	int device = comm->s->device;
	bool sends = k.kind != BROADCAST || k.root == comm->s->rank;   /* else send is unused */
	if (emu_stream_device(stream) != device ||
	    (k.count && ((sends && emu_pointer_device(k.send) != device) ||
			 emu_pointer_device(k.recv) != device)))
		return ncclInvalidArgument;   /* NCCL needs the comm's device memory */
	int state = comm->s->result;
	if (state == ncclInProgress || comm->s->revoked)
		return ncclInvalidUsage;
	std::shared_ptr<comm_state> c = comm->s;
	emu_enqueue(stream, EMU_NO_LOCK, [c, k] { run(*c, k); });
	return ncclSuccess;
}

} /* namespace */

extern "C" {

/* the version of the NCCL header this was compiled with */
ncclResult_t ncclGetVersion(int *version)
{
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
	switch (r) {
	case ncclSuccess: return "no error";
	case ncclSystemError: return "unhandled system error (emulated)";
	case ncclInternalError: return "internal error (emulated)";
	case ncclInvalidArgument: return "invalid argument (emulated)";
	case ncclInvalidUsage: return "invalid usage (emulated)";
	case ncclRemoteError: return "remote process exited or there was a network error (emulated)";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *out)
{
	id_layout id = {};
	id.magic = MAGIC;
	if (getrandom(&id.nonce, sizeof(id.nonce), 0) != (ssize_t)sizeof(id.nonce))
		return ncclSystemError;
	int fd = listen_any(&id.port);
	if (fd < 0)
		return ncclSystemError;
	id.naddr = (uint8_t)host_addrs(id.addr);
	{
		std::lock_guard<std::mutex> hold(listeners_mu);
		(*listeners)[id.nonce] = fd;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out->internal, &id, sizeof(id));
	return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int nranks, ncclUniqueId uid, int rank,
				    ncclConfig_t *config)
{
	id_layout id;
	memcpy(&id, uid.internal, sizeof(id));
	*out = NULL;
	if (id.magic != MAGIC || nranks < 1 || rank < 0 || rank >= nranks ||
	    id.naddr < 1 || id.naddr > MAX_ADDRS)
		return ncclInvalidArgument;
	ncclComm_t comm = new ncclComm{ std::make_shared<comm_state>() };
	comm_state &c = *comm->s;
	c.rank = rank;
	c.size = nranks;
	c.id = id;
	cudaGetDevice(&c.device);
	*out = comm;
	c.blocking = !config || config->blocking;
	if (!c.blocking) {
		c.setup = std::thread(set_up, comm->s);
		return ncclInProgress;
	}
	set_up(comm->s);
	return (ncclResult_t)c.result.load();
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async)
{
	if (!comm)
		return ncclInvalidArgument;
	*async = (ncclResult_t)comm->s->result.load();
	return ncclSuccess;
}

/* Shuts the sockets (a hung collective ends) and frees the handle; what
 * queued work still holds goes with its last reference. */
ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;
	stop(*comm->s);
	delete comm;
	return ncclSuccess;
}

/* In-flight work ends, later collectives are refused. The state is
 * ncclInProgress until the communicator is quiescent, then ncclSuccess:
 * on return when blocking, QUIESCE_MS later when not. */
ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags)
{
	if (!comm || flags != NCCL_REVOKE_DEFAULT || comm->s->revoked)
		return ncclInvalidArgument;
	std::shared_ptr<comm_state> c = comm->s;
	c->result = ncclInProgress;
	c->revoked = true;
	stop(*c);
	if (c->blocking) {
		c->result = ncclSuccess;
		return ncclSuccess;
	}
	std::thread([c] {
		usleep(QUIESCE_MS * 1000);
		c->result = ncclSuccess;
	}).detach();
	return ncclInProgress;
}

/* Every rank left calls it with the same list; they connect to the
 * lowest of them, whose listener everyone learnt at set-up, and keep
 * their old order. A parent with an error must be revoked first, or
 * shrunk with NCCL_SHRINK_ABORT (which stops its work at once); one
 * whose revoke is still in progress, an empty or a bad list is
 * ncclInvalidArgument. */
ncclResult_t ncclCommShrink(ncclComm_t comm, int *exclude, int n, ncclComm_t *out,
			    ncclConfig_t *config, int flags)
{
	if (out)
		*out = NULL;
	if (!comm || !out || n < 1 || !exclude || (flags & ~NCCL_SHRINK_ABORT))
		return ncclInvalidArgument;
	comm_state &p = *comm->s;
	std::vector<bool> stays = staying(p, exclude, n);
	if (stays.empty() || p.result == ncclInProgress)
		return ncclInvalidArgument;   /* NCCL: not ready (a revoke not yet quiescent) */
	if ((flags & NCCL_SHRINK_ABORT) && !p.revoked) {
		stop(p);   /* the in-flight work, at once */
		p.revoked = true;
		p.result = ncclSuccess;
	}
	if ((!p.revoked && p.result != ncclSuccess) || p.table.size() != (size_t)p.size)
		return ncclInvalidUsage;
	int root = 0, below = 0;
	while (!stays[(size_t)root])
		root++;
	for (int r = 0; r < p.rank; r++)
		below += !stays[(size_t)r];
	ncclComm_t child = new ncclComm{ std::make_shared<comm_state>() };
	comm_state &c = *child->s;
	c.rank = p.rank - below;
	c.size = p.size - n;
	c.device = p.device;
	c.blocking = config ? config->blocking : p.blocking;
	c.id = p.id;
	c.id.nonce = next_nonce(p.id.nonce);
	c.id.port = p.table[(size_t)root].port;
	c.id.naddr = p.table[(size_t)root].naddr;
	memcpy(c.id.addr, p.table[(size_t)root].addr, sizeof(c.id.addr));
	if (c.rank == 0 && (c.listener = fcntl(p.listener, F_DUPFD_CLOEXEC, 0)) < 0) {
		delete child;
		return ncclSystemError;
	}
	*out = child;
	if (!c.blocking) {
		c.setup = std::thread(set_up, child->s);
		return ncclInProgress;
	}
	set_up(child->s);
	return (ncclResult_t)c.result.load();
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (comm && comm->s->setup.joinable())
		comm->s->setup.join();
	delete comm;   /* queued collectives keep the state until they end */
	return ncclSuccess;
}

ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
			   ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return issue(comm, collective{ ALLREDUCE, type, op, send, recv, count, 0 }, stream);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type, int root,
			   ncclComm_t comm, cudaStream_t stream)
{
	return issue(comm, collective{ BROADCAST, type, ncclSum, send, recv, count, root }, stream);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t type,
			   ncclComm_t comm, cudaStream_t stream)
{
	return issue(comm, collective{ ALLGATHER, type, ncclSum, send, recv, count, 0 }, stream);
}

} /* extern "C" */
