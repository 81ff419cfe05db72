/* dist.c - dist.h over libhvd when the build has it (HAVE_HVD_RUNTIME),
 * a one-rank world otherwise. The only trainer file that includes hvd.h.
 * With a device backend (NCCL) the blocking host-buffer collectives are
 * staged through the hooks of dist_set_staging. The runtime lives from
 * dist_init to dist_release or dist_abort_job (main's exit path).
 * What it does not do: decide what to exchange (the training loop), or
 * touch CUDA itself (the hooks do).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/dist.h"
#include "train/peer_lost.h"
#include "train/stop_signal.h"

int dist_status_ends_step(int status, int ranks)
{
	return ranks > 1 && status != 0 && status != CHEXNET_EXIT_PREEMPTED;
}

/* A one-rank gather: this rank's part is the whole result. */
static int copy_own(const float *send, size_t count, float *recv, size_t recv_capacity,
		    size_t *total)
{
	if (count > recv_capacity)
		return -1;
	memmove(recv, send, count * sizeof(float));
	*total = count;
	return 0;
}

static const struct dist_staging *staging;

void dist_set_staging(const struct dist_staging *s)
{
	staging = s;
}

#ifdef HAVE_HVD_RUNTIME
#include "hvd.h"

/* dist.c's own message (staging, ending the step); else the runtime's */
static char own_error[256];
static int runtime_up;       /* from hvd_init until hvd_shutdown or the abort */
static int runtime_failed;   /* a runtime call returned an error */

static int ok(int rc)
{
	if (rc != HVD_OK)
		runtime_failed = 1;
	return rc == HVD_OK ? 0 : -1;
}

static int staging_failed(const char *name, const char *why)
{
	snprintf(own_error, sizeof(own_error), "chexnet: collective '%s' on the %s backend: %s",
		 name, hvd_backend_name(), why);
	return -1;
}

/* A device buffer for `bytes` of a host collective, or NULL (message set). */
static void *stage_buffer(const char *name, size_t bytes)
{
	void *dev = NULL;

	if (!staging)
		staging_failed(name, "host buffers need the GPU trainer's staging (not installed)");
	else if (!(dev = staging->buffer(staging->ctx, bytes)))
		staging_failed(name, "no device memory for the staging buffer");
	return dev;
}

static int stage_in(const char *name, void *dev, const void *host, size_t bytes)
{
	if (bytes && staging->to_device(staging->ctx, dev, host, bytes))
		return staging_failed(name, "copy to the device failed");
	return 0;
}

static int stage_out(const char *name, void *host, const void *dev, size_t bytes)
{
	if (bytes && staging->to_host(staging->ctx, host, dev, bytes))
		return staging_failed(name, "copy from the device failed");
	return 0;
}

/* A blocking in-place allreduce of a host buffer on any backend. */
static int host_allreduce(const char *name, void *data, size_t count, size_t esize,
			  enum hvd_dtype t, enum hvd_op op)
{
	own_error[0] = '\0';
	if (!dist_device_buffers())
		return ok(hvd_allreduce(name, data, count, t, op));
	void *dev = stage_buffer(name, count * esize);
	if (!dev || stage_in(name, dev, data, count * esize) ||
	    ok(hvd_allreduce(name, dev, count, t, op)))
		return -1;
	return stage_out(name, data, dev, count * esize);
}

int dist_device_buffers(void)
{
	return dist_size() > 1 && strcmp(hvd_backend_name(), "nccl") == 0;
}

int dist_set_compute_stream(void *stream)
{
	return dist_device_buffers() ? ok(hvd_set_compute_stream(stream)) : 0;
}

static int show_startup = 1;

void dist_show_startup(int show)
{
	show_startup = show;
}

/* The runtime's start-up lines (rank 0's stderr during hvd_init) to
 * stderr, or dropped: one process, and not asked for. */
static void replay(FILE *kept, int saved)
{
	char buf[4096];
	size_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(kept);
	while ((!runtime_up || hvd_size() > 1) && (n = fread(buf, 1, sizeof(buf), kept)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(kept);
}

static int start_runtime(const struct dist_world *w)
{
	FILE *kept = show_startup ? NULL : tmpfile();
	int saved = kept ? dup(2) : -1;

	fflush(stderr);
	if (kept && (saved < 0 || dup2(fileno(kept), 2) < 0)) {
		if (saved >= 0)
			close(saved);
		fclose(kept);
		kept = NULL;
	}
	runtime_failed = 0;
	struct hvd_world world = { w ? w->rank : 0, w ? w->size : 0, w ? w->coordinator : NULL,
				   w ? w->secret_file : NULL };
	runtime_up = ok(w ? hvd_init_world(&world) : hvd_init()) == 0;
	if (kept)
		replay(kept, saved);
	return runtime_up ? 0 : -1;
}

int dist_init(void)
{
	return start_runtime(NULL);
}

int dist_init_world(const struct dist_world *w)
{
	return start_runtime(w);
}

int dist_lost(struct peer_lost *out)
{
	static struct hvd_lost l;  /* 17 KB: not on the stack */
	static const int how[] = { [HVD_LOST_NONE] = PEER_LOST_NONE,
		[HVD_LOST_EXITED] = PEER_LOST_EXITED, [HVD_LOST_SILENT] = PEER_LOST_SILENT,
		[HVD_LOST_UNREACHABLE] = PEER_LOST_UNREACHABLE,
		[HVD_LOST_NEVER_JOINED] = PEER_LOST_NEVER_JOINED };
	const char *hosts[HVD_LOST_MAX];

	memset(out, 0, sizeof(*out));
	if (!hvd_lost_ranks(&l) || (unsigned)l.kind >= sizeof(how) / sizeof(how[0]))
		return PEER_LOST_NONE;
	out->how = how[l.kind];
	for (int i = 0; i < l.count && i < PEER_LOST_MAX; i++) {
		out->ranks[out->count++] = l.ranks[i];
		hosts[i] = l.hosts[i];
	}
	peer_lost_name(out, hosts);
	return out->how;
}

int dist_shutdown(void)
{
	return runtime_failed ? -1 : 0;
}

int dist_abort_job(int status)
{
	if (!runtime_up || dist_size() < 2) {
		snprintf(own_error, sizeof(own_error), "chexnet: end the step: '%s': "
			 "nothing beyond this process to end", runtime_up ? "one rank" : "no runtime");
		return -1;
	}
	own_error[0] = '\0';
	if (ok(hvd_abort_job(status)))
		return -1;
	runtime_up = 0;   /* Slurm is ending the step: no goodbye, no hvd_shutdown */
	return 0;
}

int dist_release(void)
{
	if (!runtime_up)
		return 0;
	runtime_up = 0;
	own_error[0] = '\0';
	return ok(hvd_shutdown());
}

int dist_rank(void)
{
	return hvd_rank() < 0 ? 0 : hvd_rank();
}

int dist_size(void)
{
	return hvd_size() < 1 ? 1 : hvd_size();
}

const char *dist_error(void)
{
	return own_error[0] ? own_error : hvd_error();
}

const char *dist_backend_name(void)
{
	return hvd_backend_name();
}

const char *dist_hostname(void)
{
	return hvd_hostname();
}

const char *dist_runtime_version(void)
{
	return hvd_version();
}

const char *dist_runtime_library(void)
{
	return hvd_backend_library();
}

int dist_allreduce_async(const char *name, float *data, size_t count, int average,
			 struct dist_handle **h)
{
	*h = NULL;
	if (dist_size() == 1)
		return 0;
	own_error[0] = '\0';
	return ok(hvd_allreduce_async(name, data, count, HVD_F32, average ? HVD_AVERAGE : HVD_SUM,
				      (hvd_handle **)h));
}

int dist_wait(struct dist_handle *h)
{
	return h ? ok(hvd_wait((hvd_handle *)h)) : 0;
}

int dist_average(const char *name, float *data, size_t count)
{
	if (dist_size() == 1)
		return 0;
	return host_allreduce(name, data, count, sizeof(float), HVD_F32, HVD_AVERAGE);
}

int dist_sum_i64(const char *name, int64_t *data, size_t count)
{
	if (dist_size() == 1)
		return 0;
	return host_allreduce(name, data, count, sizeof(int64_t), HVD_I64, HVD_SUM);
}

int dist_broadcast(const char *name, float *data, size_t count, int root)
{
	size_t bytes = count * sizeof(float);

	if (dist_size() == 1)
		return 0;
	own_error[0] = '\0';
	if (!dist_device_buffers())
		return ok(hvd_broadcast(name, data, count, HVD_F32, root));
	void *dev = stage_buffer(name, bytes);
	if (!dev || stage_in(name, dev, data, bytes) || ok(hvd_broadcast(name, dev, count, HVD_F32, root)))
		return -1;
	return stage_out(name, data, dev, bytes);
}

/* Device backend: send and receive share one staging buffer (receive
 * part first). */
static int staged_allgather(const char *name, const float *send, size_t count, float *recv,
			    size_t recv_capacity, size_t *counts)
{
	float *dev = stage_buffer(name, (recv_capacity + count) * sizeof(float));
	size_t total = 0;

	if (!dev || stage_in(name, dev + recv_capacity, send, count * sizeof(float)) ||
	    ok(hvd_allgatherv(name, dev + recv_capacity, count, dev, recv_capacity, counts, HVD_F32)))
		return -1;
	for (int r = 0; r < dist_size(); r++)
		total += counts[r];
	return stage_out(name, recv, dev, total * sizeof(float));
}

int dist_allgather(const char *name, const float *send, size_t count, float *recv,
		   size_t recv_capacity, size_t *total)
{
	int size = dist_size();

	if (size == 1)
		return copy_own(send, count, recv, recv_capacity, total);
	size_t *counts = calloc((size_t)size, sizeof(size_t));
	if (!counts)
		return -1;
	own_error[0] = '\0';
	int rc = dist_device_buffers()
		 ? staged_allgather(name, send, count, recv, recv_capacity, counts)
		 : ok(hvd_allgatherv(name, send, count, recv, recv_capacity, counts, HVD_F32));
	*total = 0;
	for (int r = 0; r < size; r++)
		*total += counts[r];
	free(counts);
	return rc;
}

void dist_span_begin(const char *lane, const char *name)
{
	hvd_timeline_begin(lane, name);
}

void dist_span_end(const char *lane)
{
	hvd_timeline_end(lane);
}

int dist_compute_threads(int loader_threads)
{
	return hvd_compute_threads(loader_threads);
}

#else /* one-rank world */

void dist_show_startup(int show) { (void)show; }
int dist_init(void) { return 0; }
int dist_init_world(const struct dist_world *w) { (void)w; return -1; }

int dist_lost(struct peer_lost *out)
{
	memset(out, 0, sizeof(*out));
	return PEER_LOST_NONE;
}
int dist_shutdown(void) { return 0; }
int dist_release(void) { return 0; }
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
const char *dist_error(void) { return ""; }

int dist_abort_job(int status)
{
	(void)status;
	return -1;
}
const char *dist_backend_name(void) { return "self"; }
const char *dist_hostname(void) { return ""; }
const char *dist_runtime_version(void) { return "none (built without the runtime)"; }
const char *dist_runtime_library(void) { return ""; }
int dist_device_buffers(void) { return 0; }
int dist_set_compute_stream(void *stream) { (void)stream; return 0; }

int dist_allreduce_async(const char *name, float *data, size_t count, int average,
			 struct dist_handle **h)
{
	(void)name, (void)data, (void)count, (void)average;
	*h = NULL;
	return 0;
}

int dist_wait(struct dist_handle *h) { (void)h; return 0; }

int dist_average(const char *name, float *data, size_t count)
{
	(void)name, (void)data, (void)count;
	return 0;
}

int dist_sum_i64(const char *name, int64_t *data, size_t count)
{
	(void)name, (void)data, (void)count;
	return 0;
}

int dist_broadcast(const char *name, float *data, size_t count, int root)
{
	(void)name, (void)data, (void)count, (void)root;
	return 0;
}

int dist_allgather(const char *name, const float *send, size_t count, float *recv,
		   size_t recv_capacity, size_t *total)
{
	(void)name;
	return copy_own(send, count, recv, recv_capacity, total);
}

void dist_span_begin(const char *lane, const char *name) { (void)lane, (void)name; }
void dist_span_end(const char *lane) { (void)lane; }

int dist_compute_threads(int loader_threads)
{
	cpu_set_t set;
	int cpus = 1;

	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = CPU_COUNT(&set);
	return cpus - loader_threads > 1 ? cpus - loader_threads : 1;
}

#endif
