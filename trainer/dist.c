/* dist.c - dist.h over libhvd when the build has it (HAVE_HVD_RUNTIME),
 * a one-rank world otherwise. The only trainer file that includes hvd.h.
 * What it does not do: decide what to exchange (the training loop).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

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

#ifdef HAVE_HVD_RUNTIME
#include "hvd.h"

static int ok(int rc)
{
	return rc == HVD_OK ? 0 : -1;
}

int dist_init(void)
{
	return ok(hvd_init());
}

int dist_shutdown(void)
{
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
	return hvd_error();
}

const char *dist_backend_name(void)
{
	return hvd_backend_name();
}

int dist_allreduce_async(const char *name, float *data, size_t count, int average,
			 struct dist_handle **h)
{
	*h = NULL;
	if (dist_size() == 1)
		return 0;
	return ok(hvd_allreduce_async(name, data, count, HVD_F32, average ? HVD_AVERAGE : HVD_SUM,
				      (hvd_handle **)h));
}

int dist_wait(struct dist_handle *h)
{
	return h ? ok(hvd_wait((hvd_handle *)h)) : 0;
}

int dist_average(const char *name, float *data, size_t count)
{
	return dist_size() == 1 ? 0 : ok(hvd_allreduce(name, data, count, HVD_F32, HVD_AVERAGE));
}

int dist_sum_i64(const char *name, int64_t *data, size_t count)
{
	return dist_size() == 1 ? 0 : ok(hvd_allreduce(name, data, count, HVD_I64, HVD_SUM));
}

int dist_broadcast(const char *name, float *data, size_t count, int root)
{
	return dist_size() == 1 ? 0 : ok(hvd_broadcast(name, data, count, HVD_F32, root));
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
	int rc = ok(hvd_allgatherv(name, send, count, recv, recv_capacity, counts, HVD_F32));
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

int dist_init(void) { return 0; }
int dist_shutdown(void) { return 0; }
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
const char *dist_error(void) { return ""; }
const char *dist_backend_name(void) { return "self"; }

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
