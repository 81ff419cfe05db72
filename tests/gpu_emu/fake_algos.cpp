/* fake_algos.cpp - the emulated cuDNN's convolution algorithms
 * (emu_algos.h). Per direction: one algorithm over any workspace budget
 * (3 GiB, fastest), a deterministic one with a workspace (the timed
 * choice), a non-deterministic one without (the backward directions:
 * timed-any's choice), the heuristics' deterministic one (slowest), and
 * for the forward one that reports CUDNN_STATUS_NOT_SUPPORTED.
 * What it does not do: arithmetic (fake_cuda.cpp).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "emu_algos.h"

#define OVER_BUDGET ((size_t)3 << 30)

enum size_rule { NONE, OVER, COLUMNS, IMAGE, FILTER };

struct row {
	int algo;
	cudnnStatus_t status;
	cudnnDeterminism_t determinism;
	float time;
	enum size_rule size;
	int heuristic;              /* rank among the heuristics' answers (0: not) */
};

static const row fwd[] = {
	{ CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 0.5f, OVER, 0 },
	{ CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 1.0f, COLUMNS, 0 },
	{ CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 3.0f, NONE, 1 },
	{ CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_STATUS_NOT_SUPPORTED, CUDNN_DETERMINISTIC, -1.0f, NONE, 0 },
};
static const row bwd_data[] = {
	{ CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 0.5f, OVER, 0 },
	{ CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_STATUS_SUCCESS, CUDNN_NON_DETERMINISTIC, 1.0f, NONE, 1 },
	{ CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 2.0f, IMAGE, 0 },
	{ CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 3.0f, NONE, 2 },
};
static const row bwd_filter[] = {
	{ CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 0.5f, OVER, 0 },
	{ CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_STATUS_SUCCESS, CUDNN_NON_DETERMINISTIC, 1.0f, NONE, 1 },
	{ CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 2.0f, FILTER, 0 },
	{ CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_STATUS_SUCCESS, CUDNN_DETERMINISTIC, 3.0f, NONE, 2 },
};

static const row *table(enum emu_dir dir, int *count)
{
	*count = 4;
	return dir == EMU_FWD ? fwd : dir == EMU_BWD_DATA ? bwd_data : bwd_filter;
}

static size_t bytes_of(enum size_rule s, const emu_conv_dims *d)
{
	switch (s) {
	case OVER: return OVER_BUDGET;
	case COLUMNS: return (size_t)d->n * d->c * d->r * d->r * d->oh * d->ow * d->elem;
	case IMAGE: return (size_t)d->c * d->h * d->w * d->elem;
	case FILTER: return (size_t)d->k * d->c * d->r * d->r * d->elem;
	case NONE: break;
	}
	return 0;
}

static emu_algo_perf perf_of(const row &r, const emu_conv_dims *d)
{
	return { r.algo, r.status, r.determinism, r.time,
		 r.status == CUDNN_STATUS_SUCCESS ? bytes_of(r.size, d) : 0 };
}

int emu_algo_find(enum emu_dir dir, const emu_conv_dims *d, emu_algo_perf *out, int room)
{
	int count, n = 0;
	const row *t = table(dir, &count);
	emu_algo_perf all[8];

	for (int i = 0; i < count; i++)
		all[i] = perf_of(t[i], d);
	std::stable_sort(all, all + count, [](const emu_algo_perf &a, const emu_algo_perf &b) {
		return (a.time >= 0) != (b.time >= 0) ? a.time >= 0 : a.time < b.time;
	});
	for (; n < count && n < room; n++)
		out[n] = all[n];
	return n;
}

int emu_algo_heuristic(enum emu_dir dir, const emu_conv_dims *d, emu_algo_perf *out, int room)
{
	int count, n = 0;
	const row *t = table(dir, &count);

	for (int rank = 1; rank <= 2; rank++)
		for (int i = 0; i < count; i++)
			if (t[i].heuristic == rank && n < room)
				out[n++] = perf_of(t[i], d);
	return n;
}

/* Which algorithms the convolutions ran, per direction (bits). */
static std::atomic<unsigned> used[3];

static void print_used(void)
{
	static const char *const names[3] = { "fwd", "bwd-data", "bwd-filter" };
	fprintf(stderr, "emu: conv algorithms:");
	for (int d = 0; d < 3; d++) {
		fprintf(stderr, "%s %s", d ? "," : "", names[d]);
		for (int a = 0; a < 32; a++)
			if (used[d].load() & (1u << a))
				fprintf(stderr, " %d", a);
	}
	fprintf(stderr, "\n");
}

cudnnStatus_t emu_algo_check(enum emu_dir dir, const emu_conv_dims *d, int algo,
			     const void *workspace, size_t bytes)
{
	static std::once_flag once;
	int count;
	const row *t = table(dir, &count);

	std::call_once(once, [] {
		const char *v = getenv("HVD_EMU_COUNTS");
		if (v && !strcmp(v, "1"))
			atexit(print_used);
	});
	for (int i = 0; i < count; i++) {
		if (t[i].algo != algo)
			continue;
		size_t need = bytes_of(t[i].size, d);
		if (t[i].status != CUDNN_STATUS_SUCCESS)
			return t[i].status;
		if (need > bytes || (need && !workspace))
			return CUDNN_STATUS_BAD_PARAM;
		used[dir] |= 1u << algo;
		return CUDNN_STATUS_SUCCESS;
	}
	return CUDNN_STATUS_NOT_SUPPORTED;
}
