/* submit.c - the collective calls of hvd.h: validate, tag a named entry
 * against the plan cache and queue it for the control thread to announce
 * (or, while the engines agree among themselves, agree.c, for the engine
 * alone) and the engine to run, hand back a handle, wait on it (a waiting
 * caller runs an agreed bucket itself when the engine is idle). HVD_SYNC=1
 * waits inside every submission (practice C3: the synchronous-allreduce
 * switch, for diagnosis and comparison).
 * What it does not do: talk to other ranks or move data.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "plan/wire.h"
#include "api/error.h"
#include "engine/runtime.h"

static int refuse(const char *call, const char *value, const char *reason)
{
	char text[600];
	snprintf(text, sizeof(text), "hvd: %s: '%s': %s", call, value, reason);
	return api_set_error(HVD_ERR_USAGE, text);
}

/* The call's entry e (the caller's copy, until enqueue makes the one it
 * queues), once the checks every collective shares pass. Formats nothing
 * unless refusing, and reads the name once. */
static int new_entry(struct runtime *rt, const char *call, const char *name, enum fusion_kind kind,
		     enum hvd_dtype t, size_t count, struct entry *e)
{
	*e = (struct entry){ .item = { .kind = (uint8_t)kind, .dtype = (uint8_t)t, .count = count } };
	if (!rt)
		return refuse(call, "not initialised", "call hvd_init first");
	if (rt->aborted)
		return api_set_error(rt->error_code, rt->error);
	if (!name || !*name)
		return refuse(call, "", "every collective needs a tensor name");
	/* rank 0 refuses others' names that wire_name_ok refuses */
	size_t len = wire_name_span(name, HVD_NAME_MAX);
	if (len == HVD_NAME_MAX || (name[len] && strnlen(name, HVD_NAME_MAX) == HVD_NAME_MAX)) {
		char shown[48]; /* its start, escaped: the message stays one line */
		wire_sanitize(name, strnlen(name, 4 * HVD_NAME_MAX), shown, sizeof(shown));
		return refuse(call, shown, "tensor name longer than 127 bytes");
	}
	if (name[len])
		return refuse(call, "(not printable)", "tensor names are printable ASCII");
	if ((unsigned)t >= HVD_DTYPE_COUNT)
		return refuse(call, name, "unknown dtype");
	memcpy(e->item.name, name, len + 1);
	return 0;
}

static int wait_done(struct runtime *rt, const hvd_handle *h)
{
	pthread_mutex_lock(&rt->lock);
	double now = agree_note_waiter(rt); /* the first look's clock (0: none read) */
	while (!h->done) {
		double wake_at;
		if (!engine_lend(rt, now, &wake_at)) /* an agreed bucket runs on this thread */
			engine_sleep(rt, &rt->cond, wake_at);
		now = 0;
	}
	int status = h->status;
	pthread_mutex_unlock(&rt->lock);
	return status;
}

_Static_assert(offsetof(struct entry, h) == 0, "hvd_wait frees an entry through its handle");

/* Queues a copy of proto and returns its handle in *out; out NULL:
 * waits for it (the blocking calls). */
static int enqueue(struct runtime *rt, const struct entry *proto, hvd_handle **out)
{
	struct entry *e = malloc(sizeof(*e));
	if (!e)
		return api_set_error(HVD_ERR_NOMEM, "hvd: submit: out of memory");
	*e = *proto;
	hvd_handle *h = &e->h; /* at offset 0: freeing it frees e */
	char why[256] = "";
	int rc = 0;
	if (rt->comm.ops->record_ready && rt->compute_stream) /* GPU: the engine's stream waits */
		rc = rt->comm.ops->record_ready(rt->comm.ctx, rt->compute_stream, &e->ready_mark, why,
						sizeof(why));
	if (rc) {
		free(e);
		return api_set_error(rc, why);
	}
	pthread_mutex_lock(&rt->lock);
	if (rt->aborted) {
		pthread_mutex_unlock(&rt->lock);
		free(e);
		return api_set_error(rt->error_code, rt->error);
	}
	runtime_queue_entry(rt, e);
	/* the engines agree on cached buckets themselves: wake ours when this
	 * may let it vote; else the control thread announces it to rank 0 */
	int fast = rt->fast, wake_engine = agree_wants_wake(rt, e);
	pthread_mutex_unlock(&rt->lock);
	if (wake_engine) /* after unlocking: it does not wake into our lock */
		pthread_cond_signal(&rt->work);
	if (!fast)
		control_wake(rt);
	if (!out)
		return hvd_wait(h);
	*out = h;
	if (rt->set.sync)
		wait_done(rt, h);
	return HVD_OK;
}

int hvd_allreduce_async(const char *name, void *data, size_t count,
			enum hvd_dtype dtype, enum hvd_op op, hvd_handle **handle)
{
	struct runtime *rt = runtime_rt;
	struct entry e;
	int rc = new_entry(rt, "hvd_allreduce", name, FUSION_ALLREDUCE, dtype, count, &e);
	if (rc)
		return rc;
	if (op != HVD_SUM && op != HVD_AVERAGE)
		return refuse("hvd_allreduce", name, "op must be HVD_SUM or HVD_AVERAGE");
	if (op == HVD_AVERAGE && !dtype_is_float(dtype))
		return refuse("hvd_allreduce", name,
			      "HVD_AVERAGE needs a float dtype (f32, f16, bf16); use HVD_SUM");
	if (!handle || (!data && count))
		return refuse("hvd_allreduce", name, "NULL data or handle");
	e.item.op = (uint8_t)op;
	e.data = data;
	return enqueue(rt, &e, handle);
}

/* done is the engine's last write, a release store (runtime_complete):
 * no lock needed to read it. */
int hvd_poll(const hvd_handle *handle)
{
	return !runtime_rt || !handle || __atomic_load_n(&handle->done, __ATOMIC_ACQUIRE);
}

int hvd_wait(hvd_handle *handle)
{
	struct runtime *rt = runtime_rt;
	if (!rt || !handle)
		return refuse("hvd_wait", "handle", "NULL handle or not initialised");
	/* a handle its bucket completed needs no lock (runtime_complete, state.c) */
	int status = __atomic_load_n(&handle->done, __ATOMIC_ACQUIRE) ? handle->status
									 : wait_done(rt, handle);
	free((struct entry *)handle); /* the handle is the entry's first member */
	if (status)
		api_set_error(status, rt->error);
	return status;
}

int hvd_allreduce(const char *name, void *data, size_t count, enum hvd_dtype dtype, enum hvd_op op)
{
	hvd_handle *h = NULL;
	int rc = hvd_allreduce_async(name, data, count, dtype, op, &h);
	return rc ? rc : hvd_wait(h);
}

int hvd_broadcast(const char *name, void *data, size_t count, enum hvd_dtype dtype, int root)
{
	struct runtime *rt = runtime_rt;
	struct entry e;
	int rc = new_entry(rt, "hvd_broadcast", name, FUSION_BROADCAST, dtype, count, &e);
	if (rc)
		return rc;
	if (root < 0 || root >= rt->boot.size)
		return refuse("hvd_broadcast", name, "root is not a rank of this job");
	if (!data && count)
		return refuse("hvd_broadcast", name, "NULL data");
	e.item.root = root;
	e.data = data;
	return enqueue(rt, &e, NULL);
}

int hvd_allgatherv(const char *name, const void *send, size_t send_count, void *recv,
		   size_t recv_capacity, size_t *counts, enum hvd_dtype dtype)
{
	struct runtime *rt = runtime_rt;
	struct entry e;
	int rc = new_entry(rt, "hvd_allgatherv", name, FUSION_ALLGATHER, dtype, send_count, &e);
	if (rc)
		return rc;
	if ((!send && send_count) || (!recv && recv_capacity))
		return refuse("hvd_allgatherv", name, "NULL buffer");
	e.send = send;
	e.recv = recv;
	e.recv_capacity = recv_capacity;
	e.counts = counts;
	return enqueue(rt, &e, NULL);
}

int hvd_barrier(void)
{
	struct runtime *rt = runtime_rt;
	static const char name[HVD_NAME_MAX] = "barrier"; /* whole: the check may look past "barrier" */
	struct entry e;
	int rc = new_entry(rt, "hvd_barrier", name, FUSION_BARRIER, HVD_F32, 0, &e);
	return rc ? rc : enqueue(rt, &e, NULL);
}
