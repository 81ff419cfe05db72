/* transport/comm.h - the data backends behind one small ops table: MPI on
 * host buffers (comm_mpi.c), a TCP ring without a launcher (comm_tcp.c),
 * NCCL on device buffers (comm_nccl.c, GPU builds), and "self" for a
 * one-rank world without a PMIx server (comm_self.c). Data operations
 * only: the plan cache's votes travel on the coordination plane
 * (vote/vote.h).
 * Every blocking call polls against a deadline and an abort flag, so no
 * wait is unbounded. An allreduce sums, or averages (HVD_AVERAGE: f32 on
 * the host backends, the float dtypes on NCCL), each backend folding the
 * 1/size into its own reduction.
 * What it does not do: fusion, naming, timeline (engine.c).
 */
#ifndef HVD_COMM_H
#define HVD_COMM_H

#include <stddef.h>

#include "hvd.h"
#include "core/clock.h"

struct auth_key;
struct bootstrap;
struct hvd_settings;

struct comm_wait {
	double deadline;            /* monotonic seconds (runtime_now()) */
	const volatile int *abort;  /* set by the control plane on failure */
	/* Past the deadline, a wait goes on while the control plane may still
	 * name a peer it sees going silent: that, not this wait, is the cause
	 * (NULL: no control plane). */
	const volatile double *naming_until;
	const char *what;           /* names the collective in messages */
	char *err;
	size_t errlen;
};

/* A chunked bucket's steps, for backends that copy beside the reductions. */
enum comm_stage { COMM_STAGE_BEGIN, COMM_STAGE_IN_DONE, COMM_STAGE_OUT, COMM_STAGE_END };

struct comm_ops {
	const char *name;            /* "mpi", "nccl", "self" */
	/* the library doing the work and its version ("NCCL 2.28.3"); NULL: none */
	void (*library)(char *text, size_t len);
	const char *allreduce_phase; /* timeline: MPI_ALLREDUCE, NCCL_ALLREDUCE */
	const char *broadcast_phase;
	const char *allgather_phase;
	int device_memory;           /* buffers are device pointers */
	int widens_halves;           /* no f16/bf16 sums: the engine sends them as f32 */
	size_t max_count;            /* most elements one allreduce_start takes, 0: any */
	/* NULL with err (the library's reason) when it cannot */
	void *(*alloc)(void *ctx, size_t bytes, char *err, size_t errlen);
	void (*release)(void *ctx, void *p);
	int (*copy)(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen);
	/* Every allreduce (runtime/engine/pipeline.c, a bucket in one piece or
	 * in chunks): start one reduction (at most one in flight), then poll
	 * it; done (*done = 1) when its result may be copied out: at once for
	 * a stream-ordered backend, whose later copies queue behind it, and
	 * for one whose start ran the whole reduction (comm_done_test). */
	int (*allreduce_start)(void *ctx, void *buf, size_t count, enum hvd_dtype t,
			       enum hvd_op op, const struct comm_wait *w);
	int (*allreduce_test)(void *ctx, int *done, const struct comm_wait *w);
	/* Device backends with a copy stream (NULL elsewhere): a chunked
	 * bucket's copies run on a second stream beside its reductions.
	 * BEGIN: copies go there from now on, after everything queued so
	 * far; IN_DONE: the next allreduce_start waits for the copies so far;
	 * OUT: the copies that follow wait for chunk `chunk`'s reduction;
	 * END: copies back on the backend's stream (drain waits for both). */
	int (*stage)(void *ctx, enum comm_stage s, size_t chunk, const struct comm_wait *w);
	int (*broadcast)(void *ctx, void *buf, size_t bytes, int root, const struct comm_wait *w);
	/* bytes_per_rank: size entries, filled with every rank's send_bytes */
	int (*allgatherv)(void *ctx, const void *send, size_t send_bytes, void *recv,
			  size_t recv_capacity_bytes, size_t *bytes_per_rank,
			  const struct comm_wait *w);
	/* GPU ordering: record readiness on the caller's stream at submit
	 * time, make the backend's stream wait for it before the bucket. */
	int (*record_ready)(void *ctx, void *stream, void **mark, char *err, size_t errlen);
	int (*wait_ready)(void *ctx, void *mark, const struct comm_wait *w);
	/* Device backends (NULL elsewhere): wait, against the deadline, until
	 * the copies queued on the backend's stream (the fusion buffer's
	 * copy-out) are done, so a completed handle means the caller's
	 * tensor holds the result. */
	int (*drain)(void *ctx, const struct comm_wait *w);
	/* clean: every rank is finishing normally; else only local cleanup
	 * (NULL: nothing to release) */
	void (*finalize)(void *ctx, int clean);
};

/* A data backend: its ops and their context. */
struct comm {
	const struct comm_ops *ops;
	void *ctx;
};

int comm_self_open(struct comm *c, char *err, size_t errlen);
/* Launch without PMIx (comm_tcp.c): a ring over authenticated TCP links
 * from `ip`, their addresses exchanged through the bootstrap. */
int comm_tcp_open(struct comm *c, struct bootstrap *b, const struct auth_key *key,
		  const char *ip, double deadline, char *err, size_t errlen);
#ifdef HAVE_MPI
/* MPI_Init_thread, unless MPI is up: before the bootstrap's host exchange
 * (Open MPI's TCP BTL told to leave out addresses several hosts have). */
int comm_mpi_init(struct bootstrap *b, char *err, size_t errlen);
int comm_mpi_open(struct comm *c, int rank, int size, char *err, size_t errlen);
/* w->err = "hvd: call: 'what': MPI's reason"; HVD_ERR_COMM. */
int comm_mpi_fail(const struct comm_wait *w, const char *call, int rc);
#endif
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
int comm_nccl_open(struct comm *c, struct bootstrap *b, const struct hvd_settings *s,
		   double deadline, char *err, size_t errlen);
/* 1 when the CUDA driver reports at least one device. */
int comm_nccl_usable(void);
#endif

/* The host backends' alloc, release and copy (malloc, free, memmove). */
void *comm_host_alloc(void *ctx, size_t bytes, char *err, size_t errlen);
void comm_host_release(void *ctx, void *p);
int comm_host_copy(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen);

/* Shared by backends: the deadline/abort check. Returns 0 to keep
 * waiting, else an hvd_status; past the deadline with `call` (NULL: the
 * caller words it) w->err = "hvd: call: 'what': did not complete before
 * the deadline (HVD_TIMEOUT_S)". */
int comm_wait_check(const struct comm_wait *w, const char *call);
/* An allreduce_test that is done at once. */
int comm_done_test(void *ctx, int *done, const struct comm_wait *w);
/* Block b of count elements split in size parts: [*first, *first + *n). */
void comm_block(size_t count, int size, int b, size_t *first, size_t *n);
/* Between two polls of a collective (polls: how many so far): spin at
 * first, a peer on another core answers within microseconds and a system
 * call per poll costs about one; then yield the core, which the peer may
 * need to progress when ranks share cores; after about a millisecond nap
 * 0.1 ms a poll: the wait is for a slower or stopped peer, and the core
 * goes to what runs beside this rank rather than to polling. */
void comm_poll_pause(unsigned polls);

#endif
