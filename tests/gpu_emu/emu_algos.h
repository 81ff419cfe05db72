/* emu_algos.h - the convolution algorithms of the emulated cuDNN
 * (fake_algos.cpp): per direction a fixed table of algorithms, each with
 * a status, a determinism, a time and a workspace size computed from the
 * shape, which the Find calls report (fastest first) and the heuristics
 * (_v7) draw from; every convolution call is checked against it (an
 * algorithm reported unsupported, or a workspace smaller than the
 * algorithm's size, is refused as cuDNN refuses it). Whatever the
 * algorithm, the arithmetic is the emulator's one loop (fake_cuda.cpp).
 * With HVD_EMU_COUNTS=1 the algorithms the convolutions ran are printed
 * at exit: "emu: conv algorithms: fwd A.., bwd-data B.., bwd-filter C..".
 * What this is not: a model of any GPU's speed.
 */
#ifndef HVD_TESTS_EMU_ALGOS_H
#define HVD_TESTS_EMU_ALGOS_H

#include <cudnn.h>
#include <stddef.h>

enum emu_dir { EMU_FWD, EMU_BWD_DATA, EMU_BWD_FILTER };

struct emu_conv_dims {
	int n, c, h, w, k, r, oh, ow;
	size_t elem;                 /* bytes per element */
};

struct emu_algo_perf {
	int algo;
	cudnnStatus_t status;
	cudnnDeterminism_t determinism;
	float time;                  /* ms; -1 when not supported */
	size_t memory;
};

/* The table of dir as Find reports it (fastest first, unsupported last):
 * its length, at most `room` entries into out. */
int emu_algo_find(enum emu_dir dir, const struct emu_conv_dims *d, struct emu_algo_perf *out, int room);
/* What cuDNN's heuristics rank first for dir: a non-deterministic
 * algorithm first for the backward directions (as cuDNN's often is),
 * then a deterministic one. */
int emu_algo_heuristic(enum emu_dir dir, const struct emu_conv_dims *d, struct emu_algo_perf *out, int room);
/* At a convolution call: the algorithm runs (its use noted), or the
 * status cuDNN gives. */
cudnnStatus_t emu_algo_check(enum emu_dir dir, const struct emu_conv_dims *d, int algo,
			     const void *workspace, size_t bytes);

#endif
