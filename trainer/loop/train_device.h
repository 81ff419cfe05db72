/* loop/train_device.h - where a training step's gradients, optimizer
 * and health live, for every backend: the GPU's device memory and
 * streams with --backend gpu; the host with the others, where each call
 * does what the host path always did (or nothing). loop/train.c keeps
 * one code path.
 *
 * Modes with --backend gpu:
 *  - device (one rank, or the runtime's "nccl" backend): gradients stay
 *    on the device, grad_sync submits device ranges (reduced by NCCL on
 *    its own stream after each layer's gradients are final), the
 *    optimizer runs on the device (gpu_train.h);
 *  - host (the "mpi" backend): exactly the old path: host gradient
 *    copies, MPI on host buffers, the optimizer on the host.
 * Both: fp16 found-inf OR'ed over micro-batches, agreed across ranks with
 * the step stats (train/verdict.h), the loss scaler fed the agreed
 * verdict; GPU health lines at start and end, shared-GPU warning from
 * every rank's (host, bus id) (O1, O2).
 * What this is not: the loop (loop/train.c) or CUDA (trainer/backend/gpu/).
 */
#ifndef HVD_TRAINER_LOOP_TRAIN_DEVICE_H
#define HVD_TRAINER_LOOP_TRAIN_DEVICE_H

#include "train/grad_sync.h"
#include "train/optim.h"
#include "loop/session.h"
#include "train/verdict.h"

struct gpu_train;

struct train_device {
	struct session *s;
	int gpu;                  /* the gpu backend */
	struct gpu_train *dev;    /* device mode; NULL: host gradients */
	int stats_on_device;      /* the step stats travel through device memory (nccl) */
	int found_inf;            /* this step, any micro-batch */
	int rank, world, quiet;
};

/* After session_open, optim_init and grad_sync_init, before any
 * collective. 0 or -1 (printed). */
int train_device_open(struct train_device *tg, struct session *s, const struct optim *o,
		   struct grad_sync *sync, int accumulate, int quiet);
void train_device_close(struct train_device *tg);
/* After --resume filled o's moments: copy them where the optimizer runs. */
int train_device_load_moments(struct train_device *tg, const struct optim *o);
/* Before anything reads model->params or o's moments on the host
 * (checkpoints, BN averaging's load_params). 0 or -1 (printed). */
int train_device_to_host(struct train_device *tg, struct optim *o);

void train_device_step_begin(struct train_device *tg);
/* The batch the next forward takes: its upload starts now, on the GPU's
 * copy stream (P4); nothing with another backend. 0 or -1 (printed). */
int train_device_prefetch(struct train_device *tg, const struct batch *b);
/* After each micro-batch's backward. */
void train_device_after_backward(struct train_device *tg);
int train_device_found_inf(const struct train_device *tg);
/* The per-step stats allreduce (average) around grad_sync_finish:
 * stats in, averaged stats out. 0 or -1 (printed). */
int train_device_exchange(struct train_device *tg, struct grad_sync *sync, float *stats, int count);
/* Feeds the agreed verdict to the fp16 scaler; 1 when the step is skipped. */
int train_device_settle(struct train_device *tg, const struct train_verdict *v);
/* The optimizer step (device or host + load_params). 0 or -1 (printed). */
int train_device_optimize(struct train_device *tg, struct optim *o, double lr);

/* Health: start-up lines (every rank's GPU, shared-GPU warnings), a
 * utilisation sample (call at each progress report, every rank), end
 * lines and the O1 warning. Collective over ranks (each rank calls). */
int train_device_report_start(struct train_device *tg);
void train_device_sample(struct train_device *tg);
int train_device_report_end(struct train_device *tg);

#endif
