/* engine/runtime.h - the state shared by the threads of a running
 * runtime: callers of hvd.h (api/), the engine thread that runs buckets
 * and votes (engine/), and the control thread (control/: negotiation,
 * heartbeats, abort broadcast, stall inspector). Fields the engine alone
 * touches are marked so; the rest are under `lock` unless said.
 * What it does not do: declare anything a user of libhvd may call (hvd.h).
 */
#ifndef HVD_RUNTIME_H
#define HVD_RUNTIME_H

#include <pthread.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hosts.h"
#include "engine/mailbox.h"
#include "transport/comm.h"
#include "vote/vote.h"
#include "core/dtype.h"
#include "plan/fusion.h"
#include "hvd.h"
#include "plan/plan_cache.h"
#include "core/settings.h"
#include "observe/timeline.h"

struct hvd_handle {
	int done;
	int status;
};

/* A submitted collective waiting for (or in) its bucket. One allocation
 * with its handle (first, so hvd_wait's free(handle) frees both): it
 * lives until the caller has waited. */
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
};

struct exec_cmd {
	uint64_t first;
	uint32_t count;
	uint64_t signature;
	int reversed;            /* the buffer holds the tensors last first */
	int fast_after;          /* rank 0 said: the engines agree from first + count on */
	int agreed;              /* agreed by the engines: every tensor matched its cached
				  * item at submission, so the signature holds already */
	int barrier_voted;       /* an agreed barrier: every rank voted for it, so it is done */
	uint64_t chunk_bytes;    /* agreed: rank 0's piece size (the vote), else the setting */
	struct exec_cmd *next;
};

struct control;

struct runtime {
	/* Set by hvd_init before any other thread starts; read-only after. */
	struct hvd_settings set;
	struct bootstrap boot;
	struct comm comm;
	char comm_library[96];      /* comm.ops->library's text, "" if none */
	struct vote_plane vote;     /* how the plan cache's votes travel (vote/vote.h) */
	struct timeline *tl;        /* its own lock (timeline.c) */
	struct host_entry *hosts;   /* boot.size rows */
	struct control *ctl;
	int ctl_wake[2];            /* the control thread's wake-up pipe (control_wake) */
	pthread_t engine_thread;    /* engine_start/engine_stop's (the caller of hvd_init) */
	int engine_started;

	/* Atomics, read without the lock. */
	volatile int aborted;       /* first failure seen (written under the lock) */
	volatile double naming_until; /* control: a peer going silent is named by then (0: none) */
	int ctl_woken;              /* a byte is in ctl_wake (control_wake writes one at most) */
	void *compute_stream;       /* hvd_set_compute_stream's, read at submission */

	pthread_mutex_t lock;       /* every field below */
	pthread_cond_t cond;        /* handle completion, an engine lent or handed back */
	pthread_cond_t work;        /* the engine thread: something for it to look at */
	int error_code;
	char error[2048];
	int fail_pending_send;      /* control: tell the others about our failure */
	uint64_t next_seq;          /* next local submission position */
	struct entry *pending;      /* submitted, not yet executed (by seq) */
	struct entry *pending_tail;
	struct exec_cmd *execs;     /* buckets to run, in order */
	struct exec_cmd *execs_tail;
	int stopping;               /* engine: leave when idle */
	int engine_busy;            /* a thread runs the engine's work: the engine thread, or
				     * a caller of hvd_wait lent to it (engine_lend) */
	struct plan_cache cache;    /* every rank: the same buckets, learnt from EXECs in order */
	struct plan_cursor cursor;  /* submissions against the cache (tags) */
	int fast;                   /* positions from fast_pos on are agreed among the
				     * engines (agree.c), not planned by rank 0 */
	uint64_t fast_pos;
	struct mailbox mail;        /* engine <-> control thread requests (engine/mailbox.h) */
	uint64_t fast_buckets;      /* buckets agreed by the engines (agree.c) */
	double run_completed_at;    /* agree.c: a submission completed a cached run then */
	int waiter_comes;           /* agree.c: the last waiter came right after it */

	/* The engine's own, used by whichever thread holds engine_busy. */
	void *fusion_buf;           /* the fusion buffer (backend memory) */
	size_t fusion_cap;
	struct entry **exec_es;     /* the bucket being run */
	size_t exec_cap;
};

/* state.c, lock held: queues a mail (engine/mailbox.h) and wakes its
 * reader: the control thread (MAIL_TO_CONTROL) or the engine. */
void runtime_post(struct runtime *rt, enum mail_kind kind, uint64_t pos);
/* state.c, unlocked: runtime_post under the lock. */
void runtime_mail(struct runtime *rt, enum mail_kind kind, uint64_t pos);
/* Lock held: completes n entries with status (their waiters may free
 * them from then on) and wakes the waiters. */
void runtime_complete(struct runtime *rt, struct entry **es, size_t n, int status);

/* Records the first failure (later ones are dropped), wakes every waiter.
 * fmt is the message without the [rank R/S host] suffix, which is added. */
void runtime_fail(struct runtime *rt, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, with a message that already carries its origin; remote = it came
 * from another rank (so it is not sent back); lost (may be NULL): the
 * ranks it lost, recorded with it. */
void runtime_fail_text(struct runtime *rt, int code, const char *text, int remote,
		       const struct hvd_lost *lost);
/* runtime_fail that lost ranks[0..n) in the way kind says. */
void runtime_fail_lost(struct runtime *rt, int code, enum hvd_lost_kind kind, const int *ranks,
		       int n, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The process's record for hvd_lost_ranks: written with the first
 * failure under rt->lock, or by start-up (no other thread yet), kept
 * past the runtime until the next hvd_init. runtime_lost_of fills one
 * from ranks (ascending) with their hosts in rt's table. */
extern struct hvd_lost runtime_lost;
void runtime_lost_of(const struct runtime *rt, enum hvd_lost_kind kind, const int *ranks, int n,
		     struct hvd_lost *out);
/* The initialised runtime (NULL before hvd_init / after hvd_shutdown);
 * state.c holds it, api.c sets it. */
extern struct runtime *runtime_rt;
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
/* state.c, unlocked, after a collective or a vote returned rc: fails the
 * runtime with err unless it has failed already (rc 0: nothing). A
 * failure on the wire (HVD_ERR_COMM) first gives the control plane up to
 * a second to name the rank that caused it before this rank's own,
 * vaguer, reason is taken. */
void runtime_fail_collective(struct runtime *rt, int rc, const char *err);
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
/* Says goodbye (a worker, without a failure) and joins the control thread. */
void control_stop(struct runtime *rt);
/* After a failure, before the launcher kills the job: rank 0 gives the
 * workers it told a moment to report; a worker tells rank 0 it has. */
void control_before_launcher_abort(struct runtime *rt);

#endif
