/* bench/allreduce.c - allreduce speed under srun (2 ranks, not a test):
 * (1) the DenseNet-121 step: its 364 gradients (bench/densenet121_grads.h)
 * submitted to hvd one by one in backward order and waited for, per step,
 * against one bare MPI_Allreduce of all of them (6,968,206 floats); as in
 * the trainer they are slices of one buffer in forward (parameter) order,
 * so the submissions walk it from the end;
 * (2) for sizes 4 KiB .. MAX the bus bandwidth 2(n-1)/n x bytes / time of
 * (a) hvd with fusion (the buffer submitted as 64 named tensors, as
 * gradients are), (b) a plain MPI_Allreduce loop on the same buffer, (c)
 * memcpy of the same bytes. Every figure is measured REPEATS times (argv[2],
 * default 5), hvd and MPI alternating; it prints the median and the
 * ratio hvd/MPI (MPI's time / hvd's time: 1 = as fast) as median and
 * min-max over the repeats. Rank 0 prints; every phase is separated by
 * barriers so the engine thread and the direct MPI calls never overlap
 * (MPI_THREAD_SERIALIZED).
 * BENCH_OP=sum submits the DenseNet-121 gradients with HVD_SUM instead of
 * HVD_AVERAGE (the bare call only sums; the average is one more pass).
 * What it does not do: check results (the slurm-runtime tests do).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "densenet121_grads.h"
#include "hvd.h"

#define PIECES 64
#define MAX_REPEATS 31

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 64 MiB moved per figure, 3 to 2000 calls: a small size's figure lasts
 * milliseconds, not one scheduler tick (200 calls of 4 KiB took 1 ms and
 * their ratio spread 0.07-0.21 over five repeats). */
static int iterations(size_t bytes)
{
	size_t n = (64u << 20) / (bytes ? bytes : 1);
	return n < 3 ? 3 : n > 2000 ? 2000 : (int)n;
}

/* Tensor names are made once, as a program keeps its parameters' names:
 * formatting them is not the runtime's time. */
static char piece_names[PIECES][32];
static char grad_names[DENSENET121_GRADS][32];

static void make_names(void)
{
	for (int n = 0; n < PIECES; n++)
		snprintf(piece_names[n], sizeof(piece_names[n]), "bench.%d", n);
	for (int k = 0; k < DENSENET121_GRADS; k++)
		snprintf(grad_names[k], sizeof(grad_names[k]), "grad.%d", k);
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
			size_t c = count - off < piece ? count - off : piece;
			if (hvd_allreduce_async(piece_names[n], buf + off, c, HVD_F32, HVD_SUM, &h[n]))
				return -1;
		}
		for (int k = 0; k < n; k++)
			if (hvd_wait(h[k]))
				return -1;
	}
	return (now_s() - t0) / iters;
}

static enum hvd_op densenet_op = HVD_AVERAGE; /* BENCH_OP */

static double time_densenet(float *buf, int iters)
{
	static hvd_handle *h[DENSENET121_GRADS];
	hvd_barrier();
	double t0 = now_s();
	for (int it = 0; it < iters; it++) {
		size_t end = DENSENET121_FLOATS; /* backward order: the last parameters first */
		for (int k = 0; k < DENSENET121_GRADS; k++) {
			end -= densenet121_grad_counts[k];
			if (hvd_allreduce_async(grad_names[k], buf + end, densenet121_grad_counts[k], HVD_F32,
						densenet_op, &h[k]))
				return -1;
		}
		for (int k = 0; k < DENSENET121_GRADS; k++)
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

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return v[n / 2];
}

struct figure {
	double hvd[MAX_REPEATS], mpi[MAX_REPEATS], ratio[MAX_REPEATS];
	int n;
};

/* Prints "hvd_us mpi_us ratio_median ratio_min-max". */
static void print_figure(struct figure *f)
{
	for (int r = 0; r < f->n; r++)
		f->ratio[r] = f->mpi[r] / f->hvd[r];
	double lo = f->ratio[0], hi = f->ratio[0];
	for (int r = 1; r < f->n; r++) {
		lo = f->ratio[r] < lo ? f->ratio[r] : lo;
		hi = f->ratio[r] > hi ? f->ratio[r] : hi;
	}
	printf(" %10.1f %10.1f %7.2f %5.2f-%-5.2f", median(f->hvd, f->n) * 1e6,
	       median(f->mpi, f->n) * 1e6, median(f->ratio, f->n), lo, hi);
}

static int bench_densenet(float *buf, int repeats, int rank)
{
	struct figure f = { .n = repeats };
	time_densenet(buf, 2); /* learn the plan, warm the fusion buffer */
	for (int r = 0; r < repeats; r++) {
		f.hvd[r] = time_densenet(buf, 5);
		f.mpi[r] = time_mpi(buf, DENSENET121_FLOATS, 5);
		if (f.hvd[r] < 0)
			return -1;
	}
	if (rank == 0) {
		printf("# DenseNet-121 step: %d gradients, %u floats (%.1f MB), %s, per step\n"
		       "%-12s %10s %10s %7s %11s\n%-12s", DENSENET121_GRADS, DENSENET121_FLOATS,
		       DENSENET121_FLOATS * 4e-6, densenet_op == HVD_SUM ? "hvd sums" : "hvd averages",
		       "case", "hvd_us", "mpi_us", "hvd/mpi", "min-max", "densenet121");
		print_figure(&f);
		printf("\n");
		fflush(stdout);
	}
	return 0;
}

static int bench_size(float *buf, float *dst, size_t bytes, int repeats, int rank, int n)
{
	size_t count = bytes / 4;
	int iters = iterations(bytes);
	struct figure f = { .n = repeats };
	double tc[MAX_REPEATS];
	time_hvd(buf, count, 1); /* learn the plan, warm the fusion buffer */
	for (int r = 0; r < repeats; r++) {
		f.hvd[r] = time_hvd(buf, count, iters);
		f.mpi[r] = time_mpi(buf, count, iters);
		tc[r] = time_memcpy(dst, buf, bytes, iters);
		if (f.hvd[r] < 0)
			return -1;
	}
	double factor = 2.0 * (n - 1) / n;
	if (rank == 0) {
		printf("%12zu", bytes);
		print_figure(&f);
		printf(" %8.3f %8.3f %8.2f\n", factor * bytes / median(f.hvd, repeats) / 1e9,
		       factor * bytes / median(f.mpi, repeats) / 1e9, bytes / median(tc, repeats) / 1e9);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (256u << 20);
	int repeats = argc > 2 ? atoi(argv[2]) : 5;
	if (repeats < 1 || repeats > MAX_REPEATS)
		repeats = 5;
	const char *op = getenv("BENCH_OP");
	if (op && strcmp(op, "sum") && strcmp(op, "average")) {
		fprintf(stderr, "bench-allreduce: BENCH_OP: '%s': must be sum or average\n", op);
		return 2;
	}
	densenet_op = op && !strcmp(op, "sum") ? HVD_SUM : HVD_AVERAGE;
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
	make_names();
	size_t floats = max_bytes / 4 > DENSENET121_FLOATS ? max_bytes / 4 : DENSENET121_FLOATS;
	float *buf = calloc(floats, sizeof(float)), *dst = calloc(floats, sizeof(float));
	if (!buf || !dst) {
		fprintf(stderr, "bench-allreduce: out of memory\n");
		return 1;
	}
	if (rank == 0)
		printf("# %d ranks, %d repeats (median, min-max of hvd/mpi = mpi time / hvd time)\n", n,
		       repeats);
	int rc = bench_densenet(buf, repeats, rank);
	if (!rc && rank == 0)
		printf("# 64 tensors fused; busbw = 2(n-1)/n x bytes/time, GB/s (medians)\n"
		       "%12s %10s %10s %7s %11s %8s %8s %8s\n", "bytes", "hvd_us", "mpi_us", "hvd/mpi",
		       "min-max", "hvd", "mpi", "memcpy");
	for (size_t bytes = 4096; !rc && bytes <= max_bytes; bytes *= 16)
		rc = bench_size(buf, dst, bytes, repeats, rank, n);
	if (rc)
		fprintf(stderr, "%s\n", hvd_error());
	free(buf);
	free(dst);
	return hvd_shutdown() || rc ? 1 : 0;
}
