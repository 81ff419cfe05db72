/* runtime.h - internal state shared by api.c (public calls), engine.c (the
 * background thread that runs buckets) and control.c (the TCP control
 * plane: negotiation, heartbeats, abort broadcast, stall inspector).
 * What it does not do: declare anything a user of libhvd may call (hvd.h).
 */
#ifndef HVD_RUNTIME_H
#define HVD_RUNTIME_H

#include <pthread.h>
#include <stdint.h>

#include "bootstrap.h"
#include "chunk_tune.h"
#include "comm.h"
#include "dtype.h"
#include "fusion.h"
#include "hvd.h"
#include "lane.h"
#include "plan_cache.h"
#include "settings.h"
#include "timeline.h"

/* One rank's row of the host table, exchanged through the bootstrap. */
struct host_entry {
	char host[64];
	char gpu_busid[32];
	char cpus[SETTINGS_CPULIST_MAX];
	char socket[16];
	char bind[16];
	int32_t local_rank;
	int32_t node_id;      /* PMIx node id */
	int32_t pid;
	char affinity[SETTINGS_CPULIST_MAX]; /* CPUs the task may run on now (sched_getaffinity) */
	int32_t gpus_visible; /* entries in CUDA_VISIBLE_DEVICES, 0 when unset */
	int32_t has_ib;       /* /sys/class/infiniband has devices */
	int32_t ib_disabled;  /* NCCL_IB_DISABLE=1 */
	char ctl_addrs[160];  /* rank 0: "ip,ip,..." the control plane listens on */
	uint16_t ctl_port;    /* rank 0: control plane port */
	uint8_t ctl_key[32];  /* rank 0: the job secret (zero with HVD_SECRET_FILE);
			       * PMIx carries it, control_connect wipes every copy */
};

struct hvd_handle {
	int done;
	int status;
};

/* A submitted collective waiting for (or in) its bucket. One allocation
 * with its handle (first, so hvd_wait's free(handle) frees both): it
 * lives until the caller has waited. 64-byte aligned (entry_cache.c),
 * what a repeated step touches per tensor on its first cache line: the
 * handle, position, data, tag, link and the item's count, dtype and op;
 * the name and what other collectives use after it. */
struct entry {
	hvd_handle h;            /* what the caller holds; done by the engine */
	uint64_t seq;            /* this rank's submission index = position */
	void *data;              /* allreduce/broadcast: in place */
	struct plan_tag tag;     /* its place in the plan cache, set at submission */
	struct entry *next;
	double t_submit;         /* runtime_now() at submission */
	struct fusion_item item;
	const void *send;        /* allgatherv */
	void *recv;
	size_t recv_capacity;    /* elements */
	size_t *counts;
	void *ready_mark;        /* GPU: event recorded at submit */
	int64_t nego_open;       /* worker: its NEGOTIATE span is open (control thread);
				  * 64 bits: no padding, entry_alloc_as's check is exact */
	const struct fusion_item *copied_from; /* the cached item `item` is a copy of (the
				  * lane's, entry_alloc_as), in the lane of generation copied_gen */
	uint64_t copied_gen;
};

struct exec_cmd {
	uint64_t first;
	uint32_t count;
	uint64_t signature;
	int reversed;            /* the buffer holds the tensors last first */
	int fast_after;          /* rank 0 said: the engines agree from first + count on */
	int agreed;              /* agreed by the engines: every tensor matched its cached
				  * item at submission, so the signature holds already */
	int presummed;           /* agreed, and reduced with the vote: the fusion buffer
				  * or the tensors hold the sum (engine_speculate); a
				  * barrier: every rank voted for it, so it is done */
	uint64_t elems;          /* presummed: the bucket's elements */
	int in_place;            /* presummed: the tensors themselves hold it */
	uint64_t chunk_bytes;    /* agreed: rank 0's piece size (the vote), else the setting */
	double voted_at;         /* agreed: runtime_now() when this rank voted */
	struct exec_cmd *next;
};

struct control;

struct runtime {
	struct hvd_settings set;
	struct bootstrap boot;
	struct comm comm;
	struct timeline *tl;
	struct host_entry *hosts;   /* boot.size rows */
	char lanes_prefix[8];

	pthread_mutex_t lock;       /* everything below */
	pthread_cond_t cond;        /* handle completion, an engine lent or handed back */
	pthread_cond_t work;        /* the engine thread: something for it to look at */
	volatile int aborted;       /* first failure seen (read without lock) */
	int error_code;
	char error[2048];
	int fail_pending_send;      /* control: tell the others about our failure */
	uint64_t next_seq;          /* next local submission position */
	struct entry *pending;      /* submitted, not yet executed (by seq) */
	struct entry *pending_tail;
	struct exec_cmd *execs;     /* buckets to run, in order */
	struct exec_cmd *execs_tail;
	uint64_t completed;         /* entries finished */
	void *fusion_buf;           /* engine: the fusion buffer (backend memory) */
	size_t fusion_cap;
	int stopping;               /* engine: leave when idle */
	int engine_busy;            /* a thread runs the engine's work: the engine thread, or
				     * a caller of hvd_wait lent to it (engine_lend) */
	struct plan_cache cache;    /* every rank: the same buckets, learnt from EXECs in order */
	struct plan_cursor cursor;  /* submissions against the cache (tags) */
	struct lane lane;           /* one thread's submissions inside a cached bucket,
				     * unlocked (lane.h), until runtime_lock drains them */
	int fast;                   /* engine: positions from fast_pos on are agreed among
				     * the engines (agree.c), not planned by rank 0 */
	uint64_t fast_pos;
	int slow_pending;           /* engine -> control: negotiate from slow_from on */
	uint64_t slow_from;
	int waiting_pending;        /* engine -> control: the agreement at waiting_pos waits */
	uint64_t waiting_pos;
	int nudged;                 /* control -> engine: vote at nudge_pos now */
	uint64_t nudge_pos;
	uint64_t fast_buckets;      /* buckets agreed by the engines (agree.c) */
	uint64_t buckets_with_vote; /* of those, reduced with their vote */
	struct entry **spec_es;     /* agree.c: the tensors a vote is about (engine's) */
	size_t spec_cap;
	struct entry **exec_es;     /* engine.c: the bucket being run (engine's) */
	size_t exec_cap;
	struct chunk_tune tune;     /* rank 0: the piece size of agreed buckets (chunk_tune.h) */
	uint32_t chunks_used;       /* bit k: an agreed bucket ran in pieces of 1 MiB x 4^k
				     * (bit 31: another size; for tests) */
	double run_completed_at;    /* agree.c: a submission completed a cached run then */
	int waiter_comes;           /* agree.c: the last waiter came right after it */

	pthread_t engine_thread;
	int engine_started;
	struct control *ctl;
	void *compute_stream;
};

/* state.c, lock held: the lane's entries become pending submissions
 * (runtime_lock does this; so must whoever wakes from a wait on the
 * lock's condition variables before reading the pending list). */
void runtime_drain_lane_entries(struct runtime *rt);
static inline void runtime_drain_lane(struct runtime *rt)
{
	if (__atomic_load_n(&rt->lane.pushed, __ATOMIC_ACQUIRE) != rt->lane.drained)
		runtime_drain_lane_entries(rt);
}
/* Takes the runtime lock: what a holder reads of the submissions
 * includes every one made before, the lane's too. */
static inline void runtime_lock(struct runtime *rt)
{
	pthread_mutex_lock(&rt->lock);
	runtime_drain_lane(rt);
}
/* state.c: room for n entries in the array *es of *cap (grown, kept):
 * the array, or NULL when there is none (*es stays as it was). */
struct entry **entry_array_room(struct entry ***es, size_t *cap, size_t n);
/* Lock held: completes n entries with status (their waiters may free
 * them from then on) and wakes the waiters. */
void runtime_complete(struct runtime *rt, struct entry **es, size_t n, int status);

/* Records the first failure (later ones are dropped), wakes every waiter.
 * fmt is the message without the [rank R/S host] suffix, which is added. */
void runtime_fail(struct runtime *rt, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, with a message that already carries its origin; remote = it came
 * from another rank (so it is not sent back). */
void runtime_fail_text(struct runtime *rt, int code, const char *text, int remote);
/* The initialised runtime (NULL before hvd_init / after hvd_shutdown);
 * state.c holds it, api.c sets it. */
extern struct runtime *runtime_rt;
static inline struct runtime *runtime_current(void)
{
	return runtime_rt;
}
/* Sets this thread's hvd_error() text; returns code. */
int runtime_set_error(int code, const char *text);
/* " [rank R/S host]" */
void runtime_suffix(const struct runtime *rt, char *out, size_t len);

int engine_start(struct runtime *rt, char *err, size_t errlen);
/* agree.c, engine thread or a waiter lent to it (by_waiter), lock held
 * (now: runtime_now() read a moment ago by the caller, 0 = read it)
 * (dropped while the agreement runs): the bucket at rt->fast_pos when
 * every rank repeated the same cached bucket there; NULL when there is
 * nothing to vote on yet (*wake_at: when to look again, 0 = at the next
 * submission) or the ranks disagreed (rt->fast is then 0: rank 0
 * negotiates from there on). */
struct exec_cmd *agree_next(struct runtime *rt, int by_waiter, double now, double *wake_at);
/* A bucket a vote is about, as agree.c found it (one pass, lock held). */
struct spec_bucket {
	struct entry **es;       /* its tensors in submission order (agree.c's scratch) */
	size_t n;
	uint64_t elems;
	int reversed;            /* this rank's layout vote: last first in one buffer */
	int adjacent;            /* one after another in that order */
	int in_place;            /* engine_speculate: the tensors themselves travel */
};
/* engine.c, unlocked, for agree.c while the engine is its caller's (now:
 * runtime_now() when it voted, the copy's deadline counts from it): 1
 * when the bucket sb may travel with the vote, and d describes it (its
 * tensors in place, or copied into the fusion buffer), as the bucket
 * will be run when every rank voted alike (cmd->presummed). 0: it goes
 * the ordinary way after the vote (a timeline, a conversion, a device
 * backend, or more bytes than the backend's vote carries). */
int engine_speculate(struct runtime *rt, struct spec_bucket *sb, struct agree_data *d, double now);
/* How long an engine waits in an agreement before rank 0 hears of it. */
double agree_escalate_s(const struct hvd_settings *s);
/* submit.c, lock held: 1 when the new entry e may let the engine vote
 * and the engine thread should look. While waiters have come promptly
 * after the last completed run (agree_note_waiter), runs are left to the
 * caller's next hvd_wait (no wake); a late waiter, or rank 0's nudge,
 * hands them to the engine thread again. */
int agree_wants_wake(struct runtime *rt, const struct entry *e);
/* Lock held: a caller starts to wait (learns whether waiters are prompt).
 * Returns the runtime_now() it read, 0 when it read none. */
double agree_note_waiter(struct runtime *rt);
/* Lock held. A thread about to wait for a handle runs the next agreed
 * bucket itself when the engine is idle (no hand-off to the engine thread
 * and back on the hot path; now as agree_next): 1 when something changed (look again), 0
 * when it should sleep (engine_sleep; *wake_at as agree_next). */
int engine_lend(struct runtime *rt, double now, double *wake_at);
/* Lock held: sleeps on cv (rt->cond: a waiter; rt->work: the engine
 * thread) until woken, or until the monotonic time wake_at (> 0). */
void engine_sleep(struct runtime *rt, pthread_cond_t *cv, double wake_at);
/* Unlocked, after a collective failed on the wire (HVD_ERR_COMM): gives
 * the control plane up to a second to name the rank that caused it
 * before this rank's own, vaguer, reason is taken. */
void engine_await_cause(struct runtime *rt);
/* Waits for the engine to finish what it has and joins it. */
void engine_stop(struct runtime *rt);

/* rank 0: listen before the host table exchange; fills our host_entry. */
int control_listen(struct runtime *rt, struct host_entry *mine, char *err, size_t errlen);
/* Connect everyone (after the exchange), start the control thread. */
int control_connect(struct runtime *rt, char *err, size_t errlen);
void control_wake(struct runtime *rt);
/* 1 when b's data starts where a's ends (slices of one buffer). Inline:
 * the vote asks it once per tensor per step. */
static inline int entry_follows(const struct entry *a, const struct entry *b)
{
	size_t bytes = a->item.count * dtype_size((enum hvd_dtype)a->item.dtype);
	return (const char *)a->data + bytes == (const char *)b->data;
}
/* Lock held: e becomes the next submission (its position, its tag
 * against the plan cache), last of the pending ones. */
void runtime_queue_entry(struct runtime *rt, struct entry *e);
/* Lock held. 1 when the pending allreduce tensors at first..first+count
 * lie in memory one after another, last first (a bucket of gradients
 * submitted in backward order from one buffer). */
int entries_reversed(const struct runtime *rt, uint64_t first, uint32_t count);
/* Says goodbye (clean = no failure) and joins the control thread. */
int control_stop(struct runtime *rt, int clean);
/* After a failure, before the launcher kills the job: rank 0 gives the
 * workers it told a moment to report; a worker tells rank 0 it has. */
void control_before_launcher_abort(struct runtime *rt);

/* Start-up report (rank 0): the host table and rule warnings. Pure. */
void report_format(const struct host_entry *hosts, int size, const char *backend,
		   char *out, size_t len);
/* "ranks 2,3 (host n2), rank 5 (host n3)": ranks (ascending) by host. */
void report_name_ranks(const struct host_entry *hosts, int size, const int *ranks, int n,
		       char *out, size_t len);
/* One line per broken rule; returns the count. */
int report_warnings(const struct host_entry *hosts, int size, const char *backend,
		    char *out, size_t len);

#endif
