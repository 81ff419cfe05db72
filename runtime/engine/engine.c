/* engine/engine.c - the background thread that runs buckets. Rank 0's control
 * thread decides each bucket (positions first..first+count), or, for a
 * repeated step, the engines agree on it among themselves (agree.c);
 * every rank's engine checks a planned bucket's signature against its own
 * tensors (an agreed one matched its cached tensors at submission), runs it
 * (allreduce buckets through the fusion buffer in chunks, pipeline.c:
 * MEMCPY_IN_FUSION_BUFFER, MPI_ALLREDUCE / NCCL_ALLREDUCE,
 * MEMCPY_OUT_FUSION_BUFFER; an agreed bucket in rank 0's pieces, which
 * the vote carried)
 * and completes the handles. f16/bf16 on a host backend travel as f32;
 * HVD_COMPRESSION rounds f32 through fp16 or bf16 (host) before and after
 * the sum. Horovod's design (DIGEST C1, C5).
 * What it does not do: decide bucket boundaries (fusion.c via coord.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/dtype.h"
#include "core/fail.h"
#include "engine/pipeline.h"
#include "engine/runtime.h"

static int ensure_fusion_buffer(struct runtime *rt, size_t bytes, const struct comm_wait *w)
{
	if (bytes <= rt->fusion_cap)
		return 0;
	if (rt->fusion_buf)
		rt->comm.ops->release(rt->comm.ctx, rt->fusion_buf);
	rt->fusion_buf = rt->comm.ops->alloc(rt->comm.ctx, bytes, w->err, w->errlen);
	rt->fusion_cap = rt->fusion_buf ? bytes : 0;
	return rt->fusion_buf ? 0 : HVD_ERR_NOMEM;
}

/* Whether the bucket's tensors lie one after another in memory, in bucket
 * order (slices of one gradient buffer): then the span is the bucket. */
static int adjacent(struct entry **es, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (!entry_follows(es[i], es[i + 1]))
			return 0;
	return 1;
}

static void reverse(struct entry **es, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct entry *t = es[i];
		es[i] = es[n - 1 - i];
		es[n - 1 - i] = t;
	}
}

/* The bucket b of es (n tensors in submission order; reversed: they lie
 * last first, and es is turned to that order): where it is reduced. A
 * bucket that needs no conversion and whose tensors are adjacent (one
 * tensor, or slices of one buffer) is reduced in place, copying nothing:
 * the span has the fusion buffer's layout, and a bucket of several
 * tensors goes in the same chunks as on a rank that copies (pipeline.c),
 * so every rank makes the same calls on the same elements (an average is
 * the backend's, comm.h: no pass here). Anything else goes through the
 * fusion buffer (ensured here). */
static int lay_out_bucket(struct runtime *rt, struct entry **es, size_t n, int reversed,
			  struct pipeline_bucket *b, const struct comm_wait *w)
{
	const struct comm_ops *ops = rt->comm.ops;
	if (reversed) /* the buffer's layout: last tensor first */
		reverse(es, n);
	*b = (struct pipeline_bucket){ .es = es, .n = n, .t = (enum hvd_dtype)es[0]->item.dtype };
	for (size_t i = 0; i < n; i++)
		b->total += es[i]->item.count;
	b->op = (enum hvd_op)es[0]->item.op;
	b->squeeze = b->t; /* HVD_COMPRESSION rounds f32 on a host backend */
	if (b->t == HVD_F32 && !ops->device_memory && rt->set.compression != HVD_COMPRESS_NONE)
		b->squeeze = rt->set.compression == HVD_COMPRESS_FP16 ? HVD_F16 : HVD_BF16;
	int half = b->t == HVD_F16 || b->t == HVD_BF16;
	b->wire = ops->widens_halves && half ? HVD_F32 : b->t;
	b->in_place = b->wire == b->t && b->squeeze == b->t && adjacent(es, n);
	int rc = b->in_place ? 0 : ensure_fusion_buffer(rt, b->total * dtype_size(b->wire), w);
	b->buf = b->in_place ? es[0]->data : rt->fusion_buf;
	return rc;
}

/* One tensor in place is one piece on every rank: no copies to overlap. */
static int run_allreduce(struct runtime *rt, const struct exec_cmd *cmd, struct entry **es,
			 size_t n, const struct comm_wait *w)
{
	struct pipeline_bucket b;
	int rc = lay_out_bucket(rt, es, n, cmd->reversed, &b, w);
	if (rc)
		return rc;
	size_t chunk = cmd->agreed ? cmd->chunk_bytes /* rank 0's, agree.c */ : rt->set.fusion_chunk_bytes;
	return pipeline_allreduce(rt, &b, b.in_place && n == 1 ? 0 : chunk, w);
}

static int run_allgather(struct runtime *rt, struct entry *e, const struct comm_wait *w)
{
	size_t esize = dtype_size((enum hvd_dtype)e->item.dtype);
	int size = rt->boot.size;
	size_t *bytes = calloc((size_t)size, sizeof(*bytes));
	if (!bytes)
		return HVD_ERR_NOMEM;
	int rc = rt->comm.ops->allgatherv(rt->comm.ctx, e->send, e->item.count * esize, e->recv,
					  e->recv_capacity * esize, bytes, w);
	if (rc == HVD_ERR_USAGE && !w->err[0])
		snprintf(w->err, w->errlen, "hvd: allgatherv: '%s': the receive buffer of %zu "
			 "elements is too small", e->item.name, e->recv_capacity);
	for (int r = 0; !rc && e->counts && r < size; r++)
		e->counts[r] = bytes[r] / esize;
	free(bytes);
	return rc;
}

/* A barrier: one f32 summed in the fusion buffer (backend memory),
 * whatever it holds, which no rank's reduction finishes before every
 * rank has started it; every backend's allreduce is its barrier. */
static int run_barrier(struct runtime *rt, const struct comm_wait *w)
{
	struct pipeline_bucket b = { .t = HVD_F32, .wire = HVD_F32, .squeeze = HVD_F32,
				     .op = HVD_SUM, .total = 1, .in_place = 1 };
	int rc = ensure_fusion_buffer(rt, sizeof(float), w);
	b.buf = rt->fusion_buf;
	return rc ? rc : pipeline_allreduce(rt, &b, 0, w);
}

static int check_signature(struct runtime *rt, const struct exec_cmd *cmd, struct entry **es,
			   size_t n, char *err, size_t errlen)
{
	uint64_t sig = FUSION_HASH_START;
	for (size_t i = 0; i < n; i++)
		sig = fusion_sign(sig, &es[i]->item);
	if (sig == cmd->signature)
		return 0;
	return fail_msg(HVD_ERR_ABORTED, err, errlen, "hvd: bucket signature: '%s' and %zu more: "
			"differs from rank 0's plan (tensors submitted in a different order?)",
			es[0]->item.name, n - 1);
}

/* started: when execute() took the bucket (the deadline counts from it). */
static int run_bucket(struct runtime *rt, const struct exec_cmd *cmd, struct entry **es,
		      size_t n, double started, char *err, size_t errlen)
{
	int rc = cmd->agreed ? 0 : check_signature(rt, cmd, es, n, err, errlen);
	if (rc)
		return rc;
	struct comm_wait w = {
		.deadline = started + rt->set.timeout_s + 2 * rt->set.heartbeat_s,
		.abort = &rt->aborted, .naming_until = &rt->naming_until, .what = es[0]->item.name,
		.err = err, .errlen = errlen,
	};
	const struct comm_ops *ops = rt->comm.ops;
	enum fusion_kind kind = (enum fusion_kind)es[0]->item.kind;
	for (size_t i = 0; (rt->tl || ops->wait_ready) && i < n; i++) { /* per tensor: only if asked */
		if (es[i]->ready_mark && ops->wait_ready)
			rc = ops->wait_ready(rt->comm.ctx, es[i]->ready_mark, &w);
		if (rc)
			return rc;
		timeline_end(rt->tl, es[i]->item.name, NULL); /* QUEUE */
		timeline_begin(rt->tl, es[i]->item.name, fusion_kind_name(kind));
	}
	struct entry *e = es[0];
	size_t esize = dtype_size((enum hvd_dtype)e->item.dtype);
	if (kind == FUSION_ALLREDUCE) {
		rc = run_allreduce(rt, cmd, es, n, &w);
	} else if (kind != FUSION_BARRIER) { /* one tensor: broadcast or allgather */
		int bcast = kind == FUSION_BROADCAST;
		timeline_begin(rt->tl, e->item.name, bcast ? ops->broadcast_phase : ops->allgather_phase);
		rc = bcast ? ops->broadcast(rt->comm.ctx, e->data, e->item.count * esize, e->item.root, &w)
			   : run_allgather(rt, e, &w);
		timeline_end(rt->tl, e->item.name, NULL);
	} else if (!cmd->barrier_voted) { /* else the vote was the barrier (agree.c) */
		rc = run_barrier(rt, &w);
	}
	for (size_t i = 0; i < n && rt->tl; i++) {
		char args[200];
		snprintf(args, sizeof(args), "\"dtype\": \"%s\", \"shape\": \"[%llu]\"",
			 dtype_name((enum hvd_dtype)es[i]->item.dtype), (unsigned long long)es[i]->item.count);
		timeline_end(rt->tl, es[i]->item.name, args);
	}
	return rc;
}

/* Room for n entries in the engine's array of a bucket's entries (grown,
 * kept): the array, or NULL when there is none (it stays as it was). */
static struct entry **exec_room(struct runtime *rt, size_t n)
{
	if (n > rt->exec_cap) {
		struct entry **grown = realloc(rt->exec_es, n * sizeof(*grown));
		if (!grown)
			return NULL;
		rt->exec_es = grown;
		rt->exec_cap = n;
	}
	return rt->exec_es;
}

/* Detaches the bucket's entries (the oldest pending ones). Lock held. */
static size_t take_entries(struct runtime *rt, const struct exec_cmd *cmd, struct entry **es)
{
	size_t n = 0;
	while (rt->pending && n < cmd->count && rt->pending->seq == cmd->first + n) {
		es[n++] = rt->pending;
		rt->pending = rt->pending->next;
	}
	if (!rt->pending)
		rt->pending_tail = NULL;
	return n;
}

static void fail_everything(struct runtime *rt)
{
	while (rt->pending) {
		struct entry *e = rt->pending;
		rt->pending = e->next;
		runtime_complete(rt, &e, 1, rt->error_code);
	}
	rt->pending_tail = NULL;
	while (rt->execs) {
		struct exec_cmd *x = rt->execs;
		rt->execs = x->next;
		free(x);
	}
	rt->execs_tail = NULL;
}

/* Lock held (dropped while it runs): runs cmd, completes its handles. */
static void execute(struct runtime *rt, struct exec_cmd *cmd)
{
	char err[2048] = "";
	/* control_loop.c checked count against what this rank submitted;
	 * a zero count still never reaches run_bucket's es[0] */
	/* the engine's scratch: one thread holds the engine at a time (engine_busy) */
	struct entry **es = cmd->count ? exec_room(rt, cmd->count) : NULL;
	size_t n = es ? take_entries(rt, cmd, es) : 0;
	pthread_mutex_unlock(&rt->lock);
	double started = runtime_now();
	int rc = !cmd->count ? HVD_ERR_COMM : !es ? HVD_ERR_NOMEM : n != cmd->count ? HVD_ERR_ABORTED
		 : run_bucket(rt, cmd, es, n, started, err, sizeof(err));
	if (!cmd->count)
		snprintf(err, sizeof(err), "hvd: engine: 'position %llu': empty bucket",
			 (unsigned long long)cmd->first);
	else if (rc && n != cmd->count && es)
		snprintf(err, sizeof(err), "hvd: engine: 'position %llu': rank 0 planned a "
			 "tensor this rank has not submitted", (unsigned long long)cmd->first);
	runtime_fail_collective(rt, rc, err[0] ? err : "hvd: engine: 'bucket': failed");
	pthread_mutex_lock(&rt->lock);
	runtime_complete(rt, es, n, rc ? rt->error_code : 0);
	if (cmd->fast_after && !rc) { /* rank 0: the engines agree from here on */
		rt->fast = 1;
		rt->fast_pos = cmd->first + cmd->count;
	}
	free(cmd);
}

void engine_sleep(struct runtime *rt, pthread_cond_t *cv, double wake_at)
{
	if (wake_at <= 0) {
		pthread_cond_wait(cv, &rt->lock);
		return;
	}
	double dt = wake_at - runtime_now();
	if (dt <= 0)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long ns = ts.tv_nsec + (long long)(dt * 1e9);
	ts.tv_sec += (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	pthread_cond_timedwait(cv, &rt->lock, &ts);
}

/* Lock held: this thread, as the engine (engine_busy), runs the next
 * bucket, from rank 0's EXECs or agreed by the engines (agree_next, with
 * by_waiter and now): 1, or 0 when there was none (*wake_at: when to
 * look again). */
static int run_next(struct runtime *rt, int by_waiter, double now, double *wake_at)
{
	struct exec_cmd *cmd = rt->execs;
	*wake_at = 0;
	rt->engine_busy = 1;
	if (cmd) {
		rt->execs = cmd->next;
		if (!rt->execs)
			rt->execs_tail = NULL;
	} else if (rt->fast) {
		cmd = agree_next(rt, by_waiter, now, wake_at);
	}
	int ran = cmd != NULL;
	if (ran)
		execute(rt, cmd);
	rt->engine_busy = 0;
	return ran;
}

int engine_lend(struct runtime *rt, double now, double *wake_at)
{
	*wake_at = 0;
	if (!rt->fast || rt->engine_busy || rt->execs || rt->aborted)
		return 0;
	int ran = run_next(rt, 1, now, wake_at); /* an agreed one: no EXEC is queued */
	pthread_cond_broadcast(&rt->cond); /* other waiters may lend now */
	if (rt->pending || rt->execs || rt->aborted) /* what the engine thread may have missed */
		pthread_cond_signal(&rt->work);
	return ran || !rt->fast || rt->aborted;
}

static void *engine_main(void *arg)
{
	struct runtime *rt = arg;
	pthread_mutex_lock(&rt->lock);
	for (;;) {
		/* a caller of hvd_wait runs a bucket (engine_lend), and may read
		 * pending tensors unlocked (agree.c): fail them once it is back */
		if (rt->engine_busy) {
			pthread_cond_wait(&rt->work, &rt->lock);
			continue;
		}
		if (rt->aborted) {
			fail_everything(rt);
			break;
		}
		if (!rt->execs && !rt->fast && rt->stopping && !rt->pending)
			break;
		int was_fast = rt->fast;
		double wake_at;
		if (!run_next(rt, 0, 0, &wake_at) && !rt->aborted && rt->fast == was_fast)
			engine_sleep(rt, &rt->work, wake_at);
	}
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

int engine_start(struct runtime *rt, char *err, size_t errlen)
{
	if (pthread_create(&rt->engine_thread, NULL, engine_main, rt))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: engine: 'thread': cannot start");
	rt->engine_started = 1;
	return 0;
}

void engine_stop(struct runtime *rt)
{
	if (!rt->engine_started)
		return;
	pthread_mutex_lock(&rt->lock);
	rt->stopping = 1;
	pthread_cond_broadcast(&rt->work);
	pthread_mutex_unlock(&rt->lock);
	pthread_join(rt->engine_thread, NULL);
	rt->engine_started = 0;
	free(rt->exec_es);
	rt->exec_es = NULL;
	rt->exec_cap = 0;
	if (rt->fusion_buf)
		rt->comm.ops->release(rt->comm.ctx, rt->fusion_buf);
	rt->fusion_buf = NULL;
	rt->fusion_cap = 0;
}
