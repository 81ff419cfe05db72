/* loop/train_device.c - where a training step's gradients and optimizer
 * live (see loop/train_device.h): device or host gradient mode, the step stats through
 * device memory on NCCL, the fp16 verdict fed to the loss scaler, the
 * optimizer where the gradients are, and the GPU health report.
 * What it does not do: CUDA calls (gpu/gpu_train.h) or decide the
 * verdict (train/verdict.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/dist.h"
#include "backend/gpu/gpu_train.h"
#include "loop/train_device.h"
#include "loop/train_health.h"

static int failed(const struct trainer_error *err)
{
	fprintf(stderr, "chexnet: %s\n", err->msg);
	return -1;
}

static int dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

/* Device mode: hooks for grad_sync, the stream for the runtime (the
 * session installed the staging of host collectives). */
static int open_device(struct train_device *tg, const struct optim *o, struct grad_sync *sync,
		       int accumulate)
{
	struct trainer_error err = { "" };

	tg->dev = gpu_train_open(tg->s->backend, o, accumulate, tg->world, &err);
	if (!tg->dev)
		return failed(&err);
	grad_sync_use_device(sync, gpu_train_grad_hooks(tg->dev));
	if (!dist_device_buffers())
		return 0;
	if (dist_set_compute_stream(gpu_train_stream(tg->dev)))
		return dist_failed();
	tg->stats_on_device = 1;
	return 0;
}

int train_device_open(struct train_device *tg, struct session *s, const struct optim *o,
		   struct grad_sync *sync, int accumulate, int quiet)
{
	memset(tg, 0, sizeof(*tg));
	tg->s = s;
	tg->rank = dist_rank();
	tg->world = dist_size();
	tg->quiet = quiet;
	tg->gpu = strcmp(s->ops->name, "gpu") == 0;  /* session_open refused nccl without it */
	if (tg->gpu && tg->world > 1 && !dist_device_buffers() && gpu_train_graphs(s->backend)) {
		fprintf(stderr, "chexnet: --cuda-graph: 'on': %d ranks on a runtime that reduces host "
			"memory: graphs need the NCCL backend (HVD_BACKEND=nccl) or --cuda-graph off\n",
			tg->world);
		return -1;
	}
	if (!tg->gpu || (tg->world > 1 && !dist_device_buffers()))
		return 0;  /* host gradients: the mpi path, unchanged */
	return open_device(tg, o, sync, accumulate);
}

void train_device_close(struct train_device *tg)
{
	if (tg->stats_on_device)
		dist_set_compute_stream(NULL);
	gpu_train_close(tg->dev);
	tg->dev = NULL;
	tg->stats_on_device = 0;
}

int train_device_load_moments(struct train_device *tg, const struct optim *o)
{
	struct trainer_error err = { "" };

	return tg->dev && gpu_train_load_moments(tg->dev, o, &err) ? failed(&err) : 0;
}

int train_device_to_host(struct train_device *tg, struct optim *o)
{
	struct trainer_error err = { "" };

	return tg->dev && gpu_train_sync_host(tg->dev, o, &err) ? failed(&err) : 0;
}

void train_device_step_begin(struct train_device *tg)
{
	tg->found_inf = 0;
}

int train_device_prefetch(struct train_device *tg, const struct batch *b)
{
	struct trainer_error err = { "" };

	if (!tg->gpu)
		return 0;
	return gpu_train_prefetch(tg->s->backend, b, b->count, &err) ? failed(&err) : 0;
}

void train_device_after_backward(struct train_device *tg)
{
	if (tg->gpu)
		tg->found_inf |= gpu_train_found_inf(tg->s->backend);
}

int train_device_found_inf(const struct train_device *tg)
{
	return tg->found_inf;
}

int train_device_exchange(struct train_device *tg, struct grad_sync *sync, float *stats, int count)
{
	struct trainer_error err = { "" };
	struct dist_handle *h = NULL;
	float *buf = stats;

	if (tg->stats_on_device) {
		if (gpu_train_stats_put(tg->dev, stats, count, &err))
			return failed(&err);
		buf = gpu_train_stats_device(tg->dev);
	}
	int rc = dist_allreduce_async("step.stats", buf, (size_t)count, 1, &h);
	rc |= grad_sync_finish(sync);
	rc |= dist_wait(h);
	if (rc)
		return dist_failed();
	if (tg->stats_on_device && gpu_train_stats_get(tg->dev, stats, count, &err))
		return failed(&err);
	return 0;
}

int train_device_settle(struct train_device *tg, const struct train_verdict *v)
{
	if (tg->gpu)
		gpu_train_loss_scale_update(tg->s->backend, v->skip);
	return v->skip;
}

int train_device_optimize(struct train_device *tg, struct optim *o, double lr)
{
	struct trainer_error err = { "" };
	struct model *m = &tg->s->model;

	if (tg->dev)
		return gpu_train_optim_step(tg->dev, o, lr, &err) ? failed(&err) : 0;
	optim_step(o, m->params, m->grads, lr);
	return tg->s->ops->load_params(tg->s->backend, &err) ? failed(&err) : 0;
}

/* Every rank's `mine` (at most len-1 chars) into all[rank * len]. */
static int gather_text(const struct train_device *tg, const char *name, const char *mine,
		       char *all, size_t len)
{
	size_t world = (size_t)tg->world, total = 0;
	float *send = malloc(len * sizeof(float)), *recv = malloc(world * len * sizeof(float));
	int rc = -1;

	if (send && recv) {
		train_health_pack(mine, send, len);
		rc = dist_allgather(name, send, len, recv, world * len, &total);
		if (rc)
			dist_failed();
		else if (total != world * len)
			rc = -1, fprintf(stderr, "chexnet: %s: got %zu of %zu values\n", name, total,
					 world * len);
	}
	for (size_t r = 0; rc == 0 && r < world; r++)
		train_health_unpack(recv + r * len, len, all + r * len);
	free(send);
	free(recv);
	return rc;
}

/* One NVML line for this rank ("no health data" with the reason). */
static void health_line(struct train_device *tg, char *line, size_t len)
{
	struct trainer_error err = { "" };

	if (gpu_train_health_line(tg->s->backend, line, len, &err))
		snprintf(line, len, "gpu %s: no health data (%s)", gpu_train_bus_id(tg->s->backend),
			 err.msg);
}

/* Rank 0 prints every rank's line (unless quiet) and the warnings. */
static void print_lines(const struct train_device *tg, const char *lines, const char *warnings,
			const char *hosts)
{
	for (int r = 0; tg->rank == 0 && r < tg->world; r++) {
		const char *host = hosts + (size_t)r * TRAIN_HEALTH_HOST;
		if (!tg->quiet)
			fprintf(stderr, "chexnet: rank %d (%s): %s\n", r, host,
				lines + (size_t)r * TRAIN_HEALTH_TEXT);
		if (warnings && warnings[(size_t)r * TRAIN_HEALTH_TEXT])
			fprintf(stderr, "chexnet: rank %d (%s): %s\n", r, host,
				warnings + (size_t)r * TRAIN_HEALTH_TEXT);
	}
}

struct health_tables {
	char *hosts, *bus, *lines, *warnings;
};

static int tables_alloc(struct health_tables *t, int world)
{
	t->hosts = calloc((size_t)world, TRAIN_HEALTH_HOST);
	t->bus = calloc((size_t)world, GPU_BUS_ID_LEN);
	t->lines = calloc((size_t)world, TRAIN_HEALTH_TEXT);
	t->warnings = calloc((size_t)world, TRAIN_HEALTH_TEXT);
	if (t->hosts && t->bus && t->lines && t->warnings)
		return 0;
	fprintf(stderr, "chexnet: gpu health: out of memory\n");
	return -1;
}

static void tables_free(struct health_tables *t)
{
	free(t->hosts);
	free(t->bus);
	free(t->lines);
	free(t->warnings);
}

/* Hosts and bus ids of every rank, then rank 0 names each shared GPU. */
static int sharing_warnings(const struct train_device *tg, struct health_tables *t)
{
	char host[TRAIN_HEALTH_HOST] = "";

	gethostname(host, sizeof(host) - 1);
	if (gather_text(tg, "gpu.host", host, t->hosts, TRAIN_HEALTH_HOST) ||
	    gather_text(tg, "gpu.busid", gpu_train_bus_id(tg->s->backend), t->bus, GPU_BUS_ID_LEN))
		return -1;
	for (int r = 0; r < tg->world; r++) {
		int shared = train_health_shared((const char (*)[TRAIN_HEALTH_HOST])t->hosts,
						 (const char (*)[GPU_BUS_ID_LEN])t->bus, tg->world, r);
		gpu_health_sharing_message(shared, t->bus + (size_t)r * GPU_BUS_ID_LEN,
					   t->warnings + (size_t)r * TRAIN_HEALTH_TEXT,
					   TRAIN_HEALTH_TEXT);
	}
	return 0;
}

int train_device_report_start(struct train_device *tg)
{
	struct health_tables t = { 0 };
	char line[TRAIN_HEALTH_TEXT];
	int rc = -1;

	if (!tg->gpu)
		return 0;
	health_line(tg, line, sizeof(line));
	if (!tables_alloc(&t, tg->world) && !sharing_warnings(tg, &t) &&
	    !gather_text(tg, "gpu.health.start", line, t.lines, TRAIN_HEALTH_TEXT)) {
		print_lines(tg, t.lines, t.warnings, t.hosts);
		rc = 0;
	}
	tables_free(&t);
	return rc;
}

void train_device_sample(struct train_device *tg)
{
	char line[TRAIN_HEALTH_TEXT];

	if (tg->gpu)
		health_line(tg, line, sizeof(line));
}

int train_device_report_end(struct train_device *tg)
{
	struct health_tables t = { 0 };
	char line[TRAIN_HEALTH_TEXT], summary[TRAIN_HEALTH_TEXT], host[TRAIN_HEALTH_HOST] = "";
	int rc = -1;

	if (!tg->gpu)
		return 0;
	health_line(tg, line, sizeof(line));
	gpu_train_health_summary(tg->s->backend, summary, sizeof(summary));
	gethostname(host, sizeof(host) - 1);
	if (!tables_alloc(&t, tg->world) &&
	    !gather_text(tg, "gpu.host.end", host, t.hosts, TRAIN_HEALTH_HOST) &&
	    !gather_text(tg, "gpu.health.end", line, t.lines, TRAIN_HEALTH_TEXT) &&
	    !gather_text(tg, "gpu.health.summary", summary, t.warnings, TRAIN_HEALTH_TEXT)) {
		print_lines(tg, t.lines, t.warnings, t.hosts);
		rc = 0;
	}
	tables_free(&t);
	return rc;
}
