/* bench/allreduce.c - allreduce bandwidth under srun (2 ranks, not a test):
 * for sizes 4 KiB .. 256 MiB prints the bus bandwidth 2(n-1)/n x bytes /
 * time of (a) hvd with fusion (the buffer submitted as 64 named tensors,
 * as gradients are), (b) a plain MPI_Allreduce loop on the same buffer,
 * (c) memcpy of the same bytes, and the ratios hvd/MPI and MPI/memcpy.
 * Rank 0 prints; every phase is separated by barriers so the engine thread
 * and the direct MPI calls never overlap (MPI_THREAD_SERIALIZED).
 * What it does not do: check results (the slurm-runtime tests do).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "hvd.h"

#define PIECES 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int iterations(size_t bytes)
{
	size_t n = (64u << 20) / (bytes ? bytes : 1);
	return n < 3 ? 3 : n > 200 ? 200 : (int)n;
}

static double time_hvd(float *buf, size_t count, int iters)
{
	hvd_handle *h[PIECES];
	size_t piece = (count + PIECES - 1) / PIECES;
	hvd_barrier();
	double t0 = now_s();
	for (int it = 0; it < iters; it++) {
		int n = 0;
		for (size_t off = 0; off < count; off += piece, n++) {
			char name[32];
			snprintf(name, sizeof(name), "bench.%d", n);
			size_t c = count - off < piece ? count - off : piece;
			if (hvd_allreduce_async(name, buf + off, c, HVD_F32, HVD_SUM, &h[n]))
				return -1;
		}
		for (int k = 0; k < n; k++)
			if (hvd_wait(h[k]))
				return -1;
	}
	return (now_s() - t0) / iters;
}

static double time_mpi(float *buf, size_t count, int iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now_s();
	for (int it = 0; it < iters; it++)
		MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	return (now_s() - t0) / iters;
}

static double time_memcpy(float *dst, const float *src, size_t bytes, int iters)
{
	double t0 = now_s();
	for (int it = 0; it < iters; it++) {
		memcpy(dst, src, bytes);
		__asm__ __volatile__("" : : "r"(dst) : "memory");
	}
	return (now_s() - t0) / iters;
}

int main(int argc, char **argv)
{
	size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (256u << 20);
	if (hvd_init()) {
		fprintf(stderr, "%s\n", hvd_error());
		return 1;
	}
	if (strcmp(hvd_backend_name(), "mpi")) {
		fprintf(stderr, "bench-allreduce: needs the mpi backend (srun -n 2), got %s\n",
			hvd_backend_name());
		hvd_shutdown();
		return 1;
	}
	int n = hvd_size(), rank = hvd_rank();
	float *buf = calloc(max_bytes / 4, sizeof(float)), *dst = calloc(max_bytes / 4, sizeof(float));
	if (!buf || !dst) {
		fprintf(stderr, "bench-allreduce: out of memory\n");
		return 1;
	}
	double factor = 2.0 * (n - 1) / n;
	if (rank == 0)
		printf("# %d ranks; busbw = 2(n-1)/n x bytes/time, GB/s\n"
		       "%12s %10s %10s %10s %9s %11s\n", n, "bytes", "hvd", "mpi", "memcpy",
		       "hvd/mpi", "mpi/memcpy");
	for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 16) {
		size_t count = bytes / 4;
		int iters = iterations(bytes);
		time_hvd(buf, count, 1); /* warm the fusion buffer */
		double th = time_hvd(buf, count, iters);
		double tm = time_mpi(buf, count, iters);
		double tc = time_memcpy(dst, buf, bytes, iters);
		if (th < 0) {
			fprintf(stderr, "%s\n", hvd_error());
			return 1;
		}
		double bh = factor * bytes / th / 1e9, bm = factor * bytes / tm / 1e9;
		double bc = bytes / tc / 1e9;
		if (rank == 0)
			printf("%12zu %10.3f %10.3f %10.3f %9.2f %11.3f\n", bytes, bh, bm, bc, bh / bm, bm / bc);
		fflush(stdout);
	}
	free(buf);
	free(dst);
	return hvd_shutdown() ? 1 : 0;
}
