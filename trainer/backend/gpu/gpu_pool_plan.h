/* gpu_pool_plan.h - how big the GPU backend's one device memory pool is
 * and where every buffer sits in it (M2: allocated once at create, no
 * per-step cudaMalloc), plus the fit check against free device memory
 * (M1). Pure C: no CUDA here, so the unit tests (tests/test_gpu_pure.c)
 * reach it on a machine without a GPU.
 *
 * The plan is a list of regions (offset, bytes), every offset a multiple
 * of GPU_POOL_ALIGN; the backend adds the pool's base pointer. What this
 * is not: the allocation itself (gpu_backend.c) or the conv workspace query
 * (the caller passes workspace_bytes).
 */
#ifndef HVD_TRAINER_GPU_POOL_PLAN_H
#define HVD_TRAINER_GPU_POOL_PLAN_H

#include <stddef.h>

#include "base/error.h"
#include "model/model.h"

#define GPU_POOL_ALIGN 256  /* cudaMalloc's own alignment; enough for every vector load */
#define GPU_POOL_BN_PARTS 64  /* most blocks a BN channel is split over (gpu_kernels.h) */

struct gpu_region {
	size_t offset, bytes;
};

struct gpu_pool_inputs {
	int batch;               /* N */
	size_t elem_bytes;       /* activation element: 4 (fp32) or 2 (fp16, bf16) */
	size_t workspace_bytes;  /* largest cuDNN conv workspace of the chosen algorithms */
	int memory_efficient;    /* rebuild BN(+ReLU) outputs in backward (act_bwd, rebuild) */
};

/* Every region the backend uses. Per-tensor arrays are indexed by tensor. */
struct gpu_pool_plan {
	int tensor_count;
	struct gpu_region *act;      /* (N, C, H, W) activations in the compute type */
	struct gpu_region *act_bwd;  /* where backward finds them: act, except for a
					BN(+ReLU) output rebuilt (--memory-efficient):
					act lives from its BN to its last reader's
					forward, act_bwd from that reader's backward to
					the BN's, both in rebuild_arena */
	int (*rebuild)[2];           /* per layer: the BN layers (-1: none) whose
					outputs are rebuilt before its backward */
	struct gpu_region rebuild_arena;
	struct gpu_region *grad;     /* their gradients, same shape and type, inside
					grad_arena: two share bytes only when their
					lifetimes in a step do not meet */
	struct gpu_region grad_arena;
	struct gpu_region *bn_stats; /* fp32 (mean, squared deviations) per channel of each
					tensor a BN layer reads, kept for the step (batchnorm.c) */
	int *bn_known;               /* per layer: the leading channels of a BN layer's input
					whose statistics an earlier BN layer of the same
					training forward left in bn_stats, none written since
					(a dense layer's norm1 computes only the growth
					channels, a transition's none); 0 for other layers */
	struct gpu_region params;    /* (param_count) fp32 master weights */
	struct gpu_region grads;     /* (param_count) fp32 gradients */
	struct gpu_region params_lp; /* (param_count) compute-type copy; 0 bytes in fp32 */
	struct gpu_region dw_lp;     /* largest conv weight in the compute type; 0 in fp32 */
	struct gpu_region filter_io; /* largest conv weight, fp32: KCRS <-> KRSC on the way
					between host and device (--gpu-layout nhwc) */
	struct gpu_region state;     /* (state_count) fp32 BN running mean/var */
	struct gpu_region bn_saved;  /* (2*state_count) fp32 batch mean, 1/std */
	struct gpu_region bn_parts;  /* fp32 partial sums of one BN call: widest BN
					layer's channels * GPU_POOL_BN_PARTS * 2 */
	struct gpu_region io;        /* fp32 scratch: the largest of input, output (N, C, H, W) */
	struct gpu_region images[2]; /* uint8 (N, S, S), double buffered (P4); 0 if no image input */
	struct gpu_region flags;     /* small device scalars (found_inf) */
	struct gpu_region loss;      /* fp32 labels, w+, w-, d(loss)/d(logits), then the
					double running sum and batch count (M3;
					gpu_pool_loss_layout) */
	struct gpu_region workspace; /* cuDNN conv workspace */
	size_t total_bytes;
};

/* Where things sit inside plan.loss, in bytes from its start: fp32
 * labels (batch, outputs), fp32 w_pos and w_neg (outputs) each (so the
 * inputs of one loss are one copy of `dy` bytes), fp32 dy (batch,
 * outputs), then two doubles (running loss sum, batch count) at an
 * 8-byte boundary. bytes: the whole; 0 when it would overflow. */
struct gpu_loss_layout {
	size_t labels, dy, w_pos, w_neg, acc, bytes;
};
void gpu_pool_loss_layout(size_t batch, size_t outputs, struct gpu_loss_layout *l);

/* Fills *plan for model d. Returns 0, or -1 (err) on bad inputs or
 * overflow. gpu_pool_plan_free releases the per-tensor and per-layer
 * arrays. */
int gpu_pool_plan_build(const struct model_desc *d, const struct gpu_pool_inputs *in,
			struct gpu_pool_plan *plan, struct trainer_error *err);
void gpu_pool_plan_free(struct gpu_pool_plan *plan);

/* The largest batch whose plan (like's, but for its batch) fits in
 * free_bytes minus reserve_bytes (the plan grows linearly in N), 0 if not
 * even one image fits, at most limit. -1 (err) on bad inputs. */
long gpu_pool_largest_batch(const struct model_desc *d, const struct gpu_pool_inputs *like,
			    size_t free_bytes, size_t reserve_bytes, long limit,
			    struct trainer_error *err);

/* 0 when a pool of need_bytes fits into free_bytes - reserve_bytes; else
 * -1 and err says how much is needed, how much is free and which batch
 * would fit (largest_batch, from gpu_pool_largest_batch). */
int gpu_pool_fit_check(size_t need_bytes, size_t free_bytes, size_t reserve_bytes,
		       int batch, long largest_batch, int device, struct trainer_error *err);

/* Device memory left to cuDNN, cuBLAS and the CUDA context outside the pool. */
#define GPU_POOL_RESERVE_BYTES ((size_t)512 << 20)

#endif
