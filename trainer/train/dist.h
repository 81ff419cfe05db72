/* dist.h - the trainer's view of the data-parallel runtime (libhvd,
 * runtime/hvd.h): rank and world size, the collectives the training loop
 * needs, timeline spans, compute threads.
 *
 * Memory: dist_allreduce_async reduces the memory the runtime's backend
 * reduces (host for "mpi", device for "nccl": dist_device_buffers()). The
 * blocking calls (average, sum, broadcast, allgather) always take host
 * buffers; with a device backend they go through the staging hooks the
 * GPU trainer installs (dist_set_staging: copy in, collective, copy out;
 * used off the step path only), and fail with a clear line without them.
 *
 * Builds without the runtime (no PMIx) get a one-rank world: every
 * collective is the identity there, so the training loop has one code
 * path. With the runtime, a program started without srun is a one-rank
 * world too (hvd_init falls back), and collectives are skipped when
 * size == 1 (nothing to exchange).
 * Every call returns 0 or -1; dist_error() then holds the runtime's one-line
 * message (it names the rank).
 *
 * The end of a command (main's exit path, which alone knows the exit
 * status): dist_shutdown only says the command is done with collectives;
 * the runtime stays up until main either ends the whole Slurm step
 * (dist_abort_job) or releases it (dist_release). The rule
 * (dist_status_ends_step): in a world of several ranks, any exit status
 * but 0 (done) and 75 (CHEXNET_EXIT_PREEMPTED: a stop every rank agreed
 * on, checkpoint written) ends the step. A failed rank cannot know whether
 * its peers can still hear it (a cut node cannot: srun would wait for
 * Slurm to declare it down) or whether they wait for it in a collective
 * (a rank 0 that fails alone keeps them waiting HVD_TIMEOUT_S); errors
 * every rank hits alike end the step too, the first rank's line is shown.
 * Errors before dist_init (usage) and one-rank worlds end only the
 * process. What this is not: gradient bookkeeping (grad_sync.h) or
 * anything that exits.
 */
#ifndef HVD_TRAINER_DIST_H
#define HVD_TRAINER_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "backend/hooks.h"

struct dist_handle;

/* show 0: on a single process the runtime's start-up report (its
 * settings and the rank table) is kept back; on many ranks, or when
 * dist_init fails, it is shown. Before dist_init; default 1. */
void dist_show_startup(int show);
int dist_init(void);
/* A world of the ranks left after a loss (recover/rejoin.h), in these
 * processes: the runtime starts from it, not from the environment. */
struct dist_world {
	int rank, size;
	char coordinator[2100];   /* "ip:port" */
	char secret_file[4400];
};
int dist_init_world(const struct dist_world *w);
/* The ranks the runtime's failure lost, and how (peer_lost.h): out->how,
 * PEER_LOST_NONE (0) when none. */
struct peer_lost;
int dist_lost(struct peer_lost *out);
/* The command is done with collectives: 0, or -1 when a runtime call
 * failed during the run. The runtime stays up for main's exit path. */
int dist_shutdown(void);
/* 1 when a command ending with exit `status` in a world of `ranks` ranks
 * must end the whole step (the rule above); pure. */
int dist_status_ends_step(int status, int ranks);
/* Ends every task of the Slurm step (hvd_abort_job: PMIx_Abort, Slurm
 * kills the step on every node, reachable or not, after KillWait). Does
 * not return when Slurm acts; 0 when the launcher took the request (the
 * caller then just exits, no dist_release), -1 (dist_error()) when the
 * runtime is not up, the world has one rank, or the launcher refused. */
int dist_abort_job(int status);
/* Releases the runtime after dist_shutdown (hvd_shutdown: drain, goodbye
 * to every rank): 0, or -1 (dist_error()) when the runtime saw a failure
 * during the run. 0 when the runtime is not up. */
int dist_release(void);
int dist_rank(void);
int dist_size(void);
const char *dist_error(void);
/* The runtime's collective backend: "mpi" (host buffers), "nccl" (device
 * buffers) or "self". */
const char *dist_backend_name(void);
/* This rank's host as the runtime names it in its lines ("" without one). */
const char *dist_hostname(void);
/* libhvd's version ("0.1.0"), or a note that this build has none. */
const char *dist_runtime_version(void);
/* the runtime backend's library and version ("NCCL 2.28.3"), "" if none */
const char *dist_runtime_library(void);

/* 1 when collectives need device memory (the "nccl" backend on more than
 * one rank); 0 for host backends and one-rank worlds. */
int dist_device_buffers(void);
/* The CUDA stream (cudaStream_t as void *) the trainer computes on:
 * device-memory collectives are ordered after its work at submission
 * (CUDA events, runtime/transport/comm_nccl.c). No-op without a device backend. */
int dist_set_compute_stream(void *stream);

/* NULL removes them. The struct must outlive its use. */
void dist_set_staging(const struct dist_staging *s);

/* In place; every rank passes the same names and counts in the same order.
 * `data` is host or device memory as dist_device_buffers() says. */
int dist_allreduce_async(const char *name, float *data, size_t count, int average,
			 struct dist_handle **h);
int dist_wait(struct dist_handle *h);
int dist_average(const char *name, float *data, size_t count);
int dist_sum_i64(const char *name, int64_t *data, size_t count);
int dist_broadcast(const char *name, float *data, size_t count, int root);
/* Rank 0's part, then rank 1's...: recv holds recv_capacity floats; *total
 * gets the number written. */
int dist_allgather(const char *name, const float *send, size_t count, float *recv,
		   size_t recv_capacity, size_t *total);

/* Timeline spans (HVD_TIMELINE): lanes "compute" and "data". */
void dist_span_begin(const char *lane, const char *name);
void dist_span_end(const char *lane);

/* Compute threads for this task: its allowed CPUs minus loader threads. */
int dist_compute_threads(int loader_threads);

#endif
