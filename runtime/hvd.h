/* hvd.h - libhvd public API: data-parallel collectives for programs started
 * by `srun` (no mpirun), Horovod's ideas in C (practice C1-C5, O3).
 *
 * What it does: bootstraps through PMIx (or runs as a one-rank world without
 * a PMIx server), negotiates named tensors across ranks, fuses them into
 * buckets, runs one collective per bucket on a background thread (MPI on
 * host buffers, NCCL on device buffers in GPU builds), and watches every
 * rank through a TCP control plane so that no wait is unbounded.
 * What it does not do: exit or abort the process. Every call returns
 * HVD_OK or a negative code; hvd_error() then holds a one-line message
 * `hvd: what: 'value': reason [rank R/S host]`. Once a collective has failed
 * on any rank, every later call on every rank fails with the same reason.
 *
 * Rules: every rank submits the same tensors (name, count, dtype, op) in the
 * same order. One hvd program per Slurm task: a second PMIx client in the
 * same task loses its per-process keys (see runtime/README.md).
 */
#ifndef HVD_H
#define HVD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hvd_status {
	HVD_OK = 0,
	HVD_ERR_USAGE = -1,     /* bad argument or call order */
	HVD_ERR_SETTINGS = -2,  /* an HVD_* variable is malformed */
	HVD_ERR_BOOTSTRAP = -3, /* PMIx / launch environment */
	HVD_ERR_COMM = -4,      /* collective backend failed or timed out */
	HVD_ERR_ABORTED = -5,   /* another rank failed, or a rank went silent */
	HVD_ERR_NOMEM = -6,
};

enum hvd_dtype { HVD_F32 = 0, HVD_F16, HVD_BF16, HVD_I32, HVD_I64, HVD_DTYPE_COUNT };
enum hvd_op { HVD_SUM = 0, HVD_AVERAGE };

typedef struct hvd_handle hvd_handle;

/* Start-up: settings, bootstrap, backend, control plane, engine thread.
 * Collective: every rank of the step must call it. */
int hvd_init(void);
/* Drains pending work, says goodbye to every rank, releases everything.
 * Returns the first error seen during the run (HVD_OK if none). */
int hvd_shutdown(void);

int hvd_rank(void);
int hvd_size(void);
int hvd_local_rank(void);
int hvd_local_size(void);
/* This rank's node (0 .. hvd_node_count()-1, PMIx's node id) and the
 * step's node count: Horovod's cross rank/size for one rank per GPU. */
int hvd_node_id(void);
int hvd_node_count(void);
const char *hvd_hostname(void);
const char *hvd_backend_name(void);       /* "mpi", "nccl", "tcp" or "self" */
const char *hvd_backend_library(void);    /* "NCCL 2.28.3", "Open MPI v4.1.4"; "" if none */
const char *hvd_error(void);              /* last message, "" if none */
const char *hvd_version(void);            /* "0.1.0" (the VERSION file) */

/* Allreduce in place on `data` (host memory for MPI, device memory for
 * NCCL), `count` elements. `name` identifies the tensor across ranks (at
 * most HVD_NAME_MAX-1 bytes). HVD_AVERAGE needs a float dtype. The buffer
 * must stay untouched until hvd_wait returns. */
#define HVD_NAME_MAX 128
int hvd_allreduce_async(const char *name, void *data, size_t count,
			enum hvd_dtype dtype, enum hvd_op op, hvd_handle **handle);
/* 1 when done (successfully or not), 0 while pending. */
int hvd_poll(const hvd_handle *handle);
/* Waits, frees the handle, returns the operation's status. */
int hvd_wait(hvd_handle *handle);
int hvd_allreduce(const char *name, void *data, size_t count,
		  enum hvd_dtype dtype, enum hvd_op op);

/* Broadcast `count` elements from `root` to every rank, in place. */
int hvd_broadcast(const char *name, void *data, size_t count,
		  enum hvd_dtype dtype, int root);
/* Uneven allgather: each rank gives `send_count` elements; `recv` (room
 * for `recv_capacity` elements) gets rank 0's, then rank 1's, ...;
 * `counts` (hvd_size() entries, may be NULL) gets each rank's count. */
int hvd_allgatherv(const char *name, const void *send, size_t send_count,
		   void *recv, size_t recv_capacity, size_t *counts,
		   enum hvd_dtype dtype);
int hvd_barrier(void);

/* For main() after a failure, before hvd_shutdown (like MPI_Abort): asks
 * the launcher to end every task of the step (PMIx_Abort; Slurm kills the
 * step). Without it, ranks cut off by the network keep srun waiting until
 * Slurm declares their node down (SlurmdTimeout, minutes by default).
 * After the runtime's own failure the end is rank 0's: it first waits up
 * to 3 s for the ranks it told to call it too (they have printed why by
 * then), and they leave the abort to rank 0 for up to 5 s. The library
 * itself never calls it. Does not return when the launcher acts;
 * returns HVD_ERR_USAGE in a one-rank world without PMIx or before
 * hvd_init, HVD_ERR_BOOTSTRAP when the launcher refused. Launched without
 * a scheduler (HVD_SIZE, no PMIx) there is no step to end: it fails the
 * job here, lets the control plane tell every rank it can reach (at most
 * 2 s) and returns HVD_OK, or HVD_ERR_COMM naming the ranks it could not
 * reach; main() then exits non-zero. */
int hvd_abort_job(int status);

/* Which ranks a failure lost, and how, as data (no message to parse).
 * Kept for the process from the failure (every rank learns the record
 * with the failure's text) until the next hvd_init, past hvd_shutdown
 * and a failed hvd_init. */
enum hvd_lost_kind {
	HVD_LOST_NONE = 0,      /* no failure, or one that lost no rank */
	HVD_LOST_EXITED,        /* its process ended without hvd_shutdown (killed, crashed) */
	HVD_LOST_SILENT,        /* no heartbeat within HVD_TIMEOUT_S: stopped, hung, or cut off */
	HVD_LOST_UNREACHABLE,   /* this rank could not send to it (rank 0, from a worker) */
	HVD_LOST_NEVER_JOINED,  /* the world did not form: it never joined within HVD_TIMEOUT_S */
};
#define HVD_LOST_MAX 256
#define HVD_HOST_MAX 64
struct hvd_lost {
	enum hvd_lost_kind kind;
	int count;                               /* ranks named, at most HVD_LOST_MAX */
	int ranks[HVD_LOST_MAX];                 /* ascending, in the failed world */
	char hosts[HVD_LOST_MAX][HVD_HOST_MAX];  /* ranks[i]'s host; "" when never known */
};
/* Fills *out; returns out->count. */
int hvd_lost_ranks(struct hvd_lost *out);

/* A world of its own, for ranks that go on after a loss in the same
 * processes (no scheduler: the TCP control plane among them), instead of
 * PMIx or the HVD_RANK/HVD_SIZE/HVD_COORDINATOR/HVD_SECRET_FILE
 * variables. Every other setting still comes from the environment. */
struct hvd_world {
	int rank, size;
	const char *coordinator;  /* "HOST:PORT" of rank 0; rank 0 listens on its port */
	const char *secret_file;  /* the job secret (a 0600 file of this user), as HVD_SECRET_FILE */
};
/* hvd_init in that world; the same errors. */
int hvd_init_world(const struct hvd_world *world);

/* Timeline spans for the caller's own work (practice O3): `lane` groups
 * spans in one row ("compute", "data"), `name` labels the span ("backward
 * compute", "data wait"). No-ops when HVD_TIMELINE is unset. */
void hvd_timeline_begin(const char *lane, const char *name);
void hvd_timeline_end(const char *lane);

/* Threads a compute library should use: the CPUs this task may run on
 * (its affinity mask, set by the hvd plugin) minus `loader_threads`,
 * at least 1. Never the machine's core count. */
int hvd_compute_threads(int loader_threads);

/* GPU builds: the CUDA stream (cudaStream_t) the caller computes on;
 * collectives on submitted tensors are ordered after its work so far.
 * Ignored by host backends. */
int hvd_set_compute_stream(void *cuda_stream);

#ifdef __cplusplus
}
#endif
#endif
