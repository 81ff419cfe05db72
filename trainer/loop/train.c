/* loop/train.c - the training loop on one rank or many (srun --hvd): rank 0's
 * initial parameters and BN buffers broadcast; each rank trains on its own
 * micro-batches (the loader's rank/world layout); `--accumulate K` local
 * micro-batches per optimizer step with one average allreduce of the
 * gradients, submitted layer by layer from the backend's grad_ready
 * callback during the last backward (grad_sync.h); a tiny per-step
 * allreduce agrees on a stop request (SIGTERM, SIGUSR1) and on skipping
 * the step when any rank's fp16 gradients overflowed
 * (train/verdict.h), so every rank stops after the same step, rank 0
 * writes OUT/last and the run exits CHEXNET_EXIT_PREEMPTED (75); after a
 * lost peer the ranks left agree which of them writes OUT/last at the most
 * completed steps (loop/survivors.h) and exit 76. The loss
 * stays on the backend (forward without y, loss(), backward without dy)
 * and is read and averaged over ranks only for each progress line (M3);
 * each micro-batch's successor is fetched and handed to the backend
 * while it computes (gpu: the upload overlaps the step, P4). `--resume DIR` continues
 * from DIR/last (parameters, optimizer moments, schedule, RNG, data
 * position (seed, epoch, step)). BN running statistics stay per rank (as
 * torchvision) and are averaged across ranks before validation and before
 * every checkpoint. Only rank 0 prints progress, writes checkpoints and the
 * tables; every rank prints its own errors. --backend gpu: gradients and
 * the optimizer stay on the device on one rank and with the NCCL runtime,
 * GPU health at start and end (loop/train_gpu.h). Rank 0 records the run
 * (OUT/run.json, loop/run_dir.h) and its metrics at every progress line
 * and validation (metrics.csv, tb/, loop/run_metrics.h). Over 600 lines:
 * the step, epoch, stop and resume paths share the trainer's state and
 * read best in one file.
 * What it does not do: parse or check options (cmd/), evaluate
 * (loop/evaluate.h), start the runtime (cmd/train.c),
 * compute layers (backends) or exchange data itself (dist.h).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eval/auroc.h"
#include "train/checkpoint.h"
#include "train/dist.h"
#include "train/grad_sync.h"
#include "loop/train.h"
#include "loop/session.h"
#include "loop/train_gpu.h"
#include "loop/train_report.h"
#include "train/verdict.h"
#include "train/span.h"
#include "train/stop_signal.h"
#include "train/checkpoint_replace.h"
#include "loop/evaluate.h"
#include "loop/thresholds.h"
#include "loop/diverge.h"
#include "loop/run_dir.h"
#include "loop/run_files.h"
#include "loop/last_error.h"
#include "loop/run_metrics.h"
#include "loop/survivors.h"
#include "train/peer_lost.h"
#include "train/rejoin.h"

enum epoch_result { EPOCH_FAILED = -1, EPOCH_DONE = 0, EPOCH_STEPS_REACHED, EPOCH_STOPPED };

struct trainer {
	struct train_config c;      /* the run's settings, as this rank uses them */
	struct session s;
	struct optim optim;
	struct schedule sched;
	struct train_state state;
	struct grad_sync sync;
	struct train_gpu gpu;       /* device gradients, fp16 verdict, health */
	struct train_clock clock;
	float wp[CHEXNET_CLASSES], wn[CHEXNET_CLASSES];
	struct batch *ahead;        /* the next micro-batch, fetched early (P4) */
	int rank, world, accumulate;
	long total_steps;           /* optimizer steps in this run */
	int stop;                   /* all ranks agreed to stop after this step */
	struct run_settings settings;  /* this session's (run.json, checkpoints) */
	struct run_change changes[2 * RUN_SETTINGS_MAX];  /* --resume: from the checkpoint's */
	int change_count;
	struct run_metrics metrics;   /* rank 0 with --out: metrics.csv, tb/ */
	int recorded;               /* run.json written by this session */
	int best_epoch;             /* 1-based, of best/ (0: none yet) */
	long steps_per_epoch;       /* optimizer steps */
	struct survivors_saved lost;   /* --resume after a lost peer: what was lost */
	struct run_record_pair membership[8];  /* run.json's record of it */
	char membership_text[2][32];
	int membership_count;
};

static int dist_failed(void)
{
	fprintf(stderr, "%s\n", dist_error());
	return -1;
}

static const float *pos_weights(const struct trainer *t)
{
	return t->c.weighted_loss ? t->wp : NULL;
}

static const float *neg_weights(const struct trainer *t)
{
	return t->c.weighted_loss ? t->wn : NULL;
}

/* The next batch: the one looked ahead at, or the source's. */
static int take_batch(struct trainer *t, struct source *src, struct batch **b)
{
	double wait;

	if (t->ahead) {
		*b = t->ahead;
		t->ahead = NULL;
		return 0;
	}
	span_begin("data", "DATA_WAIT");
	int rc = source_next(src, b, &wait);
	span_end("data");
	t->clock.data_wait += wait;
	if (rc == 0)
		fprintf(stderr, "chexnet: train: the input pipeline ended the epoch early\n");
	return rc == 1 ? 0 : -1;
}

/* The following micro-batch, fetched while this one computes and handed
 * to the backend at once, so its upload overlaps this step (P4). */
static int look_ahead(struct trainer *t, struct source *src)
{
	struct batch *b;

	if (take_batch(t, src, &b))
		return -1;
	t->ahead = b;
	return train_gpu_prefetch(&t->gpu, b);
}

static void drop_ahead(struct trainer *t, struct source *src)
{
	source_release(src, t->ahead);
	t->ahead = NULL;
}

/* Micro-batch k of the step: forward, loss (kept on the backend, M3),
 * backward (gradients go to grad_sync as each layer finishes); `more`:
 * another micro-batch of this epoch follows, fetched during this one. */
static int micro_batch(struct trainer *t, struct source *src, int k, int more)
{
	struct session *s = &t->s;
	struct trainer_error err = { "" };
	struct batch *b;

	if (take_batch(t, src, &b))
		return -1;
	struct backend_input in = { .images = b, .count = b->count };
	span_begin("compute", "FORWARD");
	int rc = s->ops->forward(s->backend, &in, 1, NULL, &err);
	if (rc == 0)
		rc = s->ops->loss(s->backend, b->labels, pos_weights(t), neg_weights(t), &err);
	span_end("compute");
	if (rc == 0 && more && look_ahead(t, src)) {
		source_release(src, b);
		return -1;
	}
	if (rc == 0) {
		grad_sync_begin_micro(&t->sync, k);
		span_begin("compute", "BACKWARD");
		rc = s->ops->backward(s->backend, NULL, NULL, grad_sync_ready, &t->sync, &err);
		span_end("compute");
		if (rc == 0)
			train_gpu_after_backward(&t->gpu);
	}
	t->clock.images += b->count;
	source_release(src, b);
	if (rc) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	s->model.batches_tracked++;
	return 0;
}

/* Waits for the gradients and the step's flags [stop, found_inf]
 * (averaged over ranks); sets t->stop when any rank was asked to stop and
 * *skip when any rank's gradients overflowed (fp16). */
static int exchange(struct trainer *t, int *skip)
{
	float stats[TRAIN_STATS];
	struct train_verdict v;
	double t0 = now_seconds();

	train_verdict_pack(stats, stop_signal_received(), train_gpu_found_inf(&t->gpu));
	span_begin("compute", "ALLREDUCE_WAIT");
	int rc = train_gpu_exchange(&t->gpu, &t->sync, stats, TRAIN_STATS);
	span_end("compute");
	t->clock.allreduce_wait += now_seconds() - t0;
	if (rc)
		return -1;
	train_verdict_read(stats, &v);
	t->stop |= v.stop;
	*skip = train_gpu_settle(&t->gpu, &v);
	return 0;
}

/* One optimizer step over K micro-batches; `more`: a step of this epoch
 * follows (its first batch is fetched during this one). */
static int train_step(struct trainer *t, struct source *src, double lr, int more)
{
	int skip = 0;

	train_gpu_step_begin(&t->gpu);
	for (int k = 0; k < t->accumulate; k++)
		if (micro_batch(t, src, k, more || k + 1 < t->accumulate))
			return -1;
	if (exchange(t, &skip))
		return -1;
	if (skip)  /* fp16 overflow on some rank: every rank skips, the scale halved */
		return 0;
	span_begin("compute", "OPTIMIZER");
	int rc = train_gpu_optimize(&t->gpu, &t->optim, lr);
	span_end("compute");
	return rc;
}

/* The mean training loss over every rank since the last call: the only
 * time it leaves the backend (every progress line, M3). Collective. A
 * device backend may still be running the steps queued since the last
 * wait: that time is training time (the run's images/s and shares). */
static int read_loss(struct trainer *t, double *loss)
{
	struct trainer_error err = { "" };
	double sum, t0 = now_seconds();
	long batches;

	int rc = t->s.ops->loss_take(t->s.backend, &sum, &batches, &err);
	t->clock.seconds += now_seconds() - t0;
	if (rc) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	float mean = batches ? (float)(sum / batches) : 0.0f;  /* equal batch counts on every rank */
	if (t->world > 1 && dist_average("train.loss", &mean, 1))
		return dist_failed();
	*loss = mean;
	return 0;
}

static int finite_model(const struct trainer *t);

/* This rank's parameters, moments and BN running statistics on the host. */
static int state_to_host(struct trainer *t)
{
	struct trainer_error err = { "" };

	if (train_gpu_to_host(&t->gpu, &t->optim))  /* device parameters, moments */
		return -1;
	if (t->s.ops->store_state(t->s.backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Every rank: running statistics averaged over ranks, on host and backend;
 * fails (no checkpoint, no validation) when they or the parameters are
 * not finite. */
static int average_bn_state(struct trainer *t)
{
	struct trainer_error err = { "" };
	struct model *m = &t->s.model;

	if (state_to_host(t))
		return -1;
	if (t->world > 1 && dist_average("bn.running", m->state, m->desc.state_count))
		return dist_failed();
	if (t->world > 1 && t->s.ops->load_params(t->s.backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return finite_model(t);
}

/* Every rank (the parameters are the same everywhere): -1 with the line
 * when a parameter or BN statistic is not finite, so no checkpoint and
 * no validation comes from a diverged state. */
static int finite_model(const struct trainer *t)
{
	const struct model *m = &t->s.model;
	struct diverge_at at = { t->state.epoch, t->state.step };
	int loud = t->rank == 0;

	if (diverge_check_array(t->c.lr, &at, "parameters are", m->params, m->desc.param_count, loud) ||
	    diverge_check_array(t->c.lr, &at, "BN running statistics are", m->state,
				m->desc.state_count, loud))
		return -1;
	return 0;
}

/* This rank writes OUT/name. */
static int save_here(struct trainer *t, const char *name)
{
	char dir[4096];
	struct trainer_error err = { "" };

	snprintf(dir, sizeof(dir), "%s/%s", t->c.out, name);
	if (checkpoint_save_run(dir, &t->s.model, &t->optim, &t->sched, &t->state, &t->settings,
				&err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Rank 0 writes OUT/name (call average_bn_state first on every rank). */
static int save(struct trainer *t, const char *name)
{
	return t->c.out && t->rank == 0 ? save_here(t, name) : 0;
}

/* --steps N: the run ends once `total` optimizer steps are done. */
static int steps_reached(const struct trainer *t, long total)
{
	return t->c.steps && total >= t->c.steps;
}

/* A progress line over window w (every rank: the loss read is collective). */
static int progress(struct trainer *t, const struct train_window *w, int epoch, long step,
		    long steps, double lr, int epoch_end)
{
	long remaining = (t->c.epochs - epoch - 1) * steps + (steps - step);
	double loss;

	if (read_loss(t, &loss))
		return -1;
	struct diverge_at at = { epoch, step };
	if (diverge_check(t->c.lr, &at, "training loss is", loss, t->rank == 0))
		return -1;  /* the same mean on every rank: all stop here */
	if (t->c.steps)
		remaining = t->c.steps - t->total_steps;
	train_report_progress(&t->c, w, &t->clock, loss, epoch, step, steps, lr, remaining,
			      epoch_end);
	double ips, data_wait, reduce_wait;
	train_window_rates(w, &t->clock, &ips, &data_wait, &reduce_wait);
	return run_metrics_train(&t->metrics, epoch, epoch * steps + step, loss, lr, ips, data_wait,
				 reduce_wait);
}

/* Steps first..steps-1 of an epoch, up to its end or a stop. */
static enum epoch_result train_steps(struct trainer *t, struct source *src, int epoch, long first)
{
	long steps = source_batches_per_epoch(src) / t->accumulate;
	long global_batch = t->c.session.batch * t->accumulate * t->world;
	struct train_window w;

	train_window_start(&w, &t->clock);
	for (long step = first; step < steps;) {
		double lr = schedule_lr(&t->sched, epoch + (double)step / steps);
		double t0 = now_seconds();
		int last = step + 1 == steps || steps_reached(t, t->total_steps + 1);
		if (train_step(t, src, lr, !last))
			return EPOCH_FAILED;
		t->clock.seconds += now_seconds() - t0;
		step++;
		t->total_steps++;
		t->state.epoch = epoch;
		t->state.step = step;
		train_window_add(&w, global_batch);
		int reached = steps_reached(t, t->total_steps);
		if (step % t->c.progress_every == 0 || step == steps || reached || t->stop) {
			train_gpu_sample(&t->gpu);  /* every rank: utilisation for O1 */
			if (progress(t, &w, epoch, step, steps, lr, step == steps))
				return EPOCH_FAILED;
			train_window_start(&w, &t->clock);
		}
		if (step < steps && (reached || t->stop))
			return t->stop ? EPOCH_STOPPED : EPOCH_STEPS_REACHED;
		if (step < steps && t->c.save_every && t->total_steps % t->c.save_every == 0 &&
		    (average_bn_state(t) || save(t, "last")))
			return EPOCH_FAILED;
	}
	return EPOCH_DONE;
}

/* One epoch from step `first`; a batch looked ahead at and not used
 * (a stop) goes back to the source. */
static enum epoch_result train_epoch(struct trainer *t, struct source *src, int epoch, long first)
{
	enum epoch_result r = train_steps(t, src, epoch, first);

	drop_ahead(t, src);
	if (r != EPOCH_DONE)
		return r;
	struct batch *b;
	double wait;
	int rc = source_next(src, &b, &wait);  /* the loader's end-of-epoch mark */
	if (rc == 1) {
		source_release(src, b);
		fprintf(stderr, "chexnet: train: the input pipeline did not end epoch %d\n", epoch + 1);
	}
	return rc == 0 ? EPOCH_DONE : EPOCH_FAILED;
}

/* A stop during the validation of `epoch`: OUT/last holds the trained
 * weights at the next epoch's start with validate_first set, so --resume
 * redoes this validation, the LR plateau step and the best choice. */
static int stopped_in_validation(struct trainer *t, int epoch, int complete)
{
	if (!complete)  /* --steps ended mid-epoch: the position stays there */
		return save(t, "last") ? -1 : EVAL_STOPPED;
	t->state.epoch = epoch + 1;
	t->state.step = 0;
	t->state.validate_first = 1;
	return save(t, "last") ? -1 : EVAL_STOPPED;
}

/* Validation (all ranks), LR plateau, checkpoints; complete = the epoch
 * ran to its end (else the data position stays mid-epoch). 0, -1, or
 * EVAL_STOPPED (a stop request during validation: OUT/last written). */
static int end_of_epoch(struct trainer *t, struct source *val, int epoch, int complete,
			struct evaluation *ev)
{
	if (average_bn_state(t))
		return -1;
	int rc = evaluate(&t->s, val, pos_weights(t), neg_weights(t), ev);
	if (rc == EVAL_STOPPED)
		return stopped_in_validation(t, epoch, complete);
	if (rc)
		return -1;
	struct diverge_at at = { epoch, 0 };
	if (diverge_check(t->c.lr, &at, "validation scores are",
			  ev->nonfinite ? ev->first_nonfinite : 0, t->rank == 0) ||
	    diverge_check(t->c.lr, &at, "validation loss is", ev->loss, t->rank == 0))
		return -1;  /* before any checkpoint: last/ and best/ stay the finite ones */
	int improved = ev->loss < t->state.best_val_loss;
	train_report_evaluation(&t->c, "validation", epoch, ev);
	long step = complete ? (epoch + 1) * t->steps_per_epoch
			     : epoch * t->steps_per_epoch + t->state.step;
	if (run_metrics_val(&t->metrics, epoch, step, ev))
		return -1;
	if (schedule_epoch_end(&t->sched, ev->loss) && t->c.progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: validation loss has not improved for %ld epochs: lr x0.1\n",
			t->c.patience + 1);
	if (complete) {
		t->state.epoch = epoch + 1;
		t->state.step = 0;
	}
	t->state.validate_first = 0;
	if (improved && t->c.out && t->c.progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: epoch %d: best/ %s: validation loss %.4f, the lowest so far "
			"(best/ is chosen by validation loss)\n", epoch + 1,
			t->best_epoch ? "replaced" : "written", ev->loss);
	if (improved) {
		t->best_epoch = epoch + 1;
		t->state.best_val_loss = ev->loss;
		if (save(t, "best") || eval_train_thresholds(&t->c, t->rank, t->s.model.desc.name, ev))
			return -1;
	}
	return save(t, "last");
}

/* A global batch other than the checkpoint's (fewer ranks after a lost
 * node, --allow-changes): the step within the epoch is moved to about
 * the same share of the epoch's images, rounded down (some images of the
 * epoch are seen twice rather than none skipped). */
static void resume_position(struct trainer *t)
{
	long now = t->c.session.batch * t->accumulate * t->world;

	for (int i = 0; i < t->change_count; i++) {
		if (strcmp(t->changes[i].key, "global_batch") != 0)
			continue;
		long was = strtol(t->changes[i].old_value, NULL, 10), step = t->state.step;
		if (was <= 0 || now <= 0 || step == 0)
			return;
		t->state.step = step * was / now;
		if (t->rank == 0)
			fprintf(stderr, "chexnet: --resume: global batch %ld -> %ld: step %ld of the epoch "
				"becomes step %ld (%ld images in, %ld of them seen again)\n", was, now, step,
				t->state.step, step * was, step * was - t->state.step * now);
		return;
	}
}

/* --resume after a lost peer (DIR/.survivors/saved at the checkpoint's
 * position): the membership change, for run.json and the log. */
static int resume_membership(struct trainer *t, const char *checkpoint)
{
	struct survivors_saved *s = &t->lost;
	int rc = survivors_read_saved(t->c.resume, s);

	if (rc <= 0 || s->epoch != t->state.epoch || s->step != t->state.step)
		return rc < 0 ? -1 : 0;
	snprintf(t->membership_text[0], 32, "%d -> %d", s->ranks, t->world);
	snprintf(t->membership_text[1], 32, "%d -> %d", s->accumulate, t->accumulate);
	int same = (long)s->ranks * s->accumulate == (long)t->world * t->accumulate;
	struct run_record_pair m[] = {
		{ "time", s->time }, { "lost", s->who }, { "hosts", s->hosts },
		{ "ranks", t->membership_text[0] }, { "accumulate", t->membership_text[1] },
		{ "steps_lost", "0" }, { "went_on", s->next },
		{ "runtime_library", dist_runtime_library()[0] ? dist_runtime_library() : "none" },
	};
	memcpy(t->membership, m, sizeof(m));
	t->membership_count = 8;
	if (t->rank == 0)
		fprintf(stderr, "chexnet: --resume: after the loss of %s at %s: %d ranks x %d -> %d "
			"ranks x %d micro-batches per step (%s), no completed step lost (%s)\n", s->who,
			s->time, s->ranks, s->accumulate, t->world, t->accumulate,
			same ? "the same global batch" : "another global batch",
			checkpoint);
	return 0;
}

/* --resume DIR: DIR/last's model, optimizer, schedule and position. */
static int resume(struct trainer *t, struct trainer_error *err)
{
	char dir[4096], last[4096], note[4096 * 2 + 128];

	snprintf(last, sizeof(last), "%s/last", t->c.resume);
	if (checkpoint_find_complete(last, dir, sizeof(dir), note, sizeof(note), err))
		return -1;
	if (note[0] && t->rank == 0)
		fprintf(stderr, "chexnet: --resume: %s\n", note);
	if (run_dir_compare(&t->c, dir, &t->settings, t->changes, &t->change_count, t->rank == 0) ||
	    run_dir_check_record(&t->c, t->rank == 0))
		return -1;
	if (checkpoint_load_model(dir, &t->s.model, CHECKPOINT_STRICT, NULL, err) ||
	    checkpoint_load_training(dir, &t->optim, &t->sched, &t->state, err))
		return -1;
	if (resume_membership(t, dir))
		return -1;
	resume_position(t);
	if (t->rank == 0 && t->c.progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: resuming from %s: epoch %d, step %ld\n", dir,
			t->state.epoch + 1, t->state.step);
	return 0;
}

/* Rank 0's parameters and BN buffers to every rank. */
static int broadcast_model(struct trainer *t, struct trainer_error *err)
{
	struct model *m = &t->s.model;

	if (dist_broadcast("init.params", m->params, m->desc.param_count, 0) ||
	    dist_broadcast("init.running", m->state, m->desc.state_count, 0))
		return dist_failed();
	return t->s.ops->load_params(t->s.backend, err);
}

static int trainer_setup(struct trainer *t, const struct train_config *c)
{
	struct trainer_error err = { "" };
	char note[256] = "";

	memset(t, 0, sizeof(*t));
	t->c = *c;
	t->rank = dist_rank();
	t->world = dist_size();
	t->accumulate = (int)c->accumulate;
	if (t->rank != 0)
		t->c.progress = PROGRESS_QUIET;
	if (!c->session.threads && t->world > 1) {  /* the task's CPUs minus the loader's */
		long loader = c->data.loader_threads;
		t->c.session.threads = dist_compute_threads((int)(loader ? loader
								  : data_loader_default_threads()));
	}
	if (t->rank == 0 && run_files_guard(&t->c))
		return -1;
	if (session_open(&t->s, &t->c.session))
		return -1;
	if (run_dir_settings(&t->c, &t->s, t->world, &t->settings))
		return -1;
	if (c->init && checkpoint_load_model(c->init, &t->s.model, CHECKPOINT_INIT, note, &err))
		goto fail;
	if (note[0] && t->rank == 0)
		fprintf(stderr, "chexnet: %s\n", note);
	if (optim_init(&t->optim, &c->optim, t->s.model.desc.param_count, &err))
		goto fail;
	if (grad_sync_init(&t->sync, &t->s.model, t->accumulate)) {
		fprintf(stderr, "chexnet: train: out of memory\n");
		return -1;
	}
	if (train_gpu_open(&t->gpu, &t->s, &t->optim, &t->sync, t->accumulate,
			   t->c.progress == PROGRESS_QUIET))
		return -1;
	schedule_init(&t->sched, c->lr, c->lr_scale, t->world * t->accumulate, c->warmup_epochs,
		      (int)c->patience);
	t->state.best_val_loss = INFINITY;
	rng_seed(&t->state.rng, c->session.seed);
	if (c->resume && (resume(t, &err) || train_gpu_load_moments(&t->gpu, &t->optim)))
		goto fail;
	if (t->rank == 0 && c->out && survivors_reset(c->out)) {
		fprintf(stderr, "chexnet: --out: '%s/" SURVIVORS_DIR "': cannot clear: %s\n", c->out,
			strerror(errno));
		return -1;
	}
	if (broadcast_model(t, &err))
		goto fail;
	if (t->rank == 0 && c->out && mkdir(c->out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "chexnet: --out: '%s': %s\n", c->out, strerror(errno));
		return -1;
	}
	return class_weights(&c->data, t->wp, t->wn);
fail:
	if (err.msg[0])
		fprintf(stderr, "chexnet: %s\n", err.msg);
	return -1;
}

/* Once the sources are open (steps per epoch known): rank 0's metrics
 * files (checked and cut back on --resume), then run.json (every rank:
 * the hosts are gathered). */
static int trainer_record(struct trainer *t, const struct source *train)
{
	t->steps_per_epoch = source_batches_per_epoch(train) / t->accumulate;
	long at = t->c.resume ? t->state.epoch * t->steps_per_epoch + t->state.step : -1;
	if (t->rank == 0 && t->c.out &&
	    run_metrics_open(&t->metrics, t->c.out, t->c.session.batch * t->accumulate * t->world, at,
			     t->world))
		return -1;
	t->best_epoch = t->metrics.best_epoch;
	if (run_dir_record(&t->c, &t->s, &t->settings, t->changes, t->change_count, t->membership,
			   t->membership_count, t->state.epoch, t->state.step))
		return -1;
	t->recorded = 1;
	return 0;
}

static void trainer_free(struct trainer *t)
{
	run_metrics_close(&t->metrics);
	train_gpu_close(&t->gpu);
	grad_sync_free(&t->sync);
	optim_free(&t->optim);
	session_close(&t->s);
}

/* A stop agreed mid-epoch: checkpoint at this step, say how to go on. */
static int stopped(struct trainer *t)
{
	if (average_bn_state(t) || save(t, "last"))
		return 1;
	train_report_stop(&t->c, stop_signal_received(), t->state.epoch, t->state.step, 0);
	return CHEXNET_EXIT_PREEMPTED;
}

/* A stop during validation: OUT/last is written; say so, exit 75. */
static int stopped_report(struct trainer *t, int in_validation)
{
	train_report_stop(&t->c, stop_signal_received(), t->state.epoch, t->state.step,
			  in_validation);
	return CHEXNET_EXIT_PREEMPTED;
}

/* What the survivors do next: go on in their own processes (--shrink,
 * and no survivor on a lost rank's host: a lost rank on a live host is a
 * crashed or hung process, whose node the driver gives back; NCCL's
 * communicator is then shrunk, runtime/transport/comm_nccl.c), or exit
 * 76 for a relaunch. */
static const char *next_of(const struct trainer *t, const struct peer_lost *lost,
			   const struct survivors_vote *v)
{
	if (!t->c.shrink)
		return "relaunch";
	for (const char *h = v->hosts; *h; h += strcspn(h, ",") + (h[strcspn(h, ",")] != '\0'))
		if (peer_lost_has_host(lost, h, strcspn(h, ",")))
			return "relaunch";
	return "in-process";
}

/* The chosen survivor: OUT/last at its completed step (the next
 * epoch's start, validation first, when the epoch's steps were all done),
 * run.json's end, then OUT/.survivors/saved. */
static int write_for_survivors(struct trainer *t, const struct peer_lost *lost,
			       const struct survivors_vote *v)
{
	char line[2048];

	if (t->state.step == t->steps_per_epoch) {
		t->state.epoch++;
		t->state.step = 0;
		t->state.validate_first = 1;
	}
	if (state_to_host(t) || finite_model(t) || save_here(t, "last"))  /* its own BN statistics */
		return -1;
	snprintf(line, sizeof(line), "peer lost: %s: OUT/last holds epoch %d, step %ld (written by "
		 "rank %d of %d): no completed step is lost", lost->who, t->state.epoch + 1,
		 t->state.step, t->rank, t->world);
	if (t->recorded && run_dir_end(&t->c, CHEXNET_EXIT_PEER_LOST, 0, line,
				       t->state.epoch * t->steps_per_epoch + t->state.step,
				       t->best_epoch, t->state.best_val_loss))
		return -1;
	char saved[2048], when[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	const char *next = next_of(t, lost, v);
	snprintf(saved, sizeof(saved), "time=%s hosts=%s ranks=%d accumulate=%d epoch=%d step=%ld "
		 "writer=%d next=%s members=%s who=%s", when, lost->hosts, t->world, t->accumulate,
		 t->state.epoch, t->state.step, t->rank, next, v->ranks, lost->who);
	if (survivors_mark_saved(t->c.out, saved))
		return -1;
	if (!strcmp(next, "relaunch"))
		fprintf(stderr, "chexnet: %s; exit %d: go on without host(s) %s (--resume %s)\n", line,
			CHEXNET_EXIT_PEER_LOST, lost->hosts, t->c.out);
	else
		fprintf(stderr, "chexnet: %s; ranks %s go on without host(s) %s in their own "
			"processes\n", line, v->ranks, lost->hosts);
	return 0;
}

/* --shrink: the run went on in-process without this rank (a newer
 * generation in OUT/.generation: this is a hung node woken up). It leaves
 * OUT alone and waits for the step to end: to exit would end the step
 * with it (a task that leaves without PMIx_Finalize on a live node,
 * docs/lost-rank.md). 1 once a stop signal came. */
static int superseded(struct trainer *t, long now)
{
	fprintf(stderr, "chexnet: train: rank %d of %d: the run went on without it (generation %ld, "
		"this rank's %ld): %s; OUT/last left alone, waiting for the step to end\n", t->rank,
		t->world, now, t->c.generation, dist_error());
	dist_release();
	while (!stop_signal_received())
		pause();
	return 1;
}

/* Training or validation broken by a lost peer (train/peer_lost.h): the
 * survivors agree which of them holds the most completed steps and it
 * writes OUT/last (loop/survivors.h); every survivor exits
 * CHEXNET_EXIT_PEER_LOST. Any other failure: 1. */
static int survive_lost_peer(struct trainer *t)
{
	struct peer_lost lost;
	struct survivors_vote v;
	long done = t->state.epoch * t->steps_per_epoch + t->state.step, now;

	if (t->c.shrink && t->c.out && (now = rejoin_generation(t->c.out)) > t->c.generation)
		return superseded(t, now);
	if (t->world < 2 || !t->c.out || !peer_lost_parse(dist_error(), &lost) ||
	    lost.count >= t->world)
		return 1;
	if (survivors_choose(t->c.out, t->rank, dist_hostname(), t->world - lost.count, done, &v))
		return 1;
	if (v.writer == t->rank)
		return write_for_survivors(t, &lost, &v) ? 1 : CHEXNET_EXIT_PEER_LOST;
	return survivors_wait_saved(t->c.out, SURVIVORS_SAVE_WAIT_S) ? 1 : CHEXNET_EXIT_PEER_LOST;
}

/* The epochs; returns the exit status. */
static int train_epochs(struct trainer *t, struct source *train, struct source *val,
			struct evaluation *ev, int *trained)
{
	if (t->state.validate_first) {  /* stopped during this validation: redo it */
		int rc = end_of_epoch(t, val, t->state.epoch - 1, 1, ev);
		if (rc == EVAL_STOPPED)
			return stopped_report(t, 1);
		if (rc)
			return survive_lost_peer(t);
		*trained = 1;  /* the table at the end shows this validation */
	}
	for (int epoch = t->state.epoch; epoch < t->c.epochs; epoch++) {
		long first = *trained ? 0 : t->state.step;
		enum epoch_result r = train_epoch(t, train, epoch, first);
		*trained = 1;
		if (r == EPOCH_FAILED)
			return survive_lost_peer(t);
		if (r == EPOCH_STOPPED)
			return stopped(t);
		int end = end_of_epoch(t, val, epoch, r == EPOCH_DONE, ev);
		if (end == EVAL_STOPPED)
			return stopped_report(t, 1);
		if (end)
			return survive_lost_peer(t);
		if (r == EPOCH_STEPS_REACHED || steps_reached(t, t->total_steps))
			break;
		if (t->stop && epoch + 1 < t->c.epochs) {  /* after the last epoch: just finish */
			train_report_stop(&t->c, stop_signal_received(), t->state.epoch, t->state.step, 0);
			return CHEXNET_EXIT_PREEMPTED;
		}
	}
	return 0;
}

/* --test: the test split, gathered over ranks; rank 0 prints the table. */
static int test_split(struct trainer *t, const struct source_layout *l, struct evaluation *ev)
{
	struct source test;
	int rc = source_open(&test, &t->c.data, DATA_TEST, l);

	if (rc == 0)
		rc = evaluate(&t->s, &test, pos_weights(t), neg_weights(t), ev);
	if (rc == 0)
		train_report_evaluation(&t->c, "test", -1, ev);
	if (rc == 0 && t->rank == 0 && t->c.out && t->c.write_test)
		rc = t->c.write_test(t->c.out, ev, (int)t->c.bootstrap, t->c.session.seed);
	source_close(&test);
	return rc;
}

int train_run(const struct train_config *c)
{
	struct trainer t;
	struct source train, val;
	struct evaluation ev = { .keep_outputs = 1 };  /* best epoch: thresholds from val */
	int status = 1, trained = 0;

	memset(&train, 0, sizeof(train));
	memset(&val, 0, sizeof(val));
	if (dist_rank() == 0)
		last_error_capture();   /* run.json's end record names the reason */
	if (trainer_setup(&t, c) == 0) {
		struct source_layout l = { .rank = t.rank, .world = t.world, .accumulate = t.accumulate,
					   .start_epoch = t.state.epoch, .start_step = t.state.step };
		if (source_open(&train, &t.c.data, DATA_TRAIN, &l) == 0 &&
		    source_open(&val, &t.c.data, DATA_VAL, &l) == 0) {
			stop_signal_listen();
			status = trainer_record(&t, &train) || train_gpu_report_start(&t.gpu) ? 1
				 : train_epochs(&t, &train, &val, &ev, &trained);
			if (status == 0 && trained && train_gpu_report_end(&t.gpu))
				status = 1;
			if (status == 0 && trained && train_report_throughput(&t.c, &t.clock))
				status = 1;
			if (status == 0 && trained && c->test_at_end && test_split(&t, &l, &ev))
				status = 1;
			if (status == 0 && trained)
				train_report_table(&t.c, c->test_at_end ? "the test split, final weights"
						   : "the validation split, last epoch", &ev);
		}
	}
	if (t.recorded && t.rank == 0 && status != CHEXNET_EXIT_PEER_LOST &&
	    run_dir_end(c, status, stop_signal_received(), last_error(),
			t.state.epoch * t.steps_per_epoch + t.state.step, t.best_epoch,
			t.state.best_val_loss) && status == 0)
		status = 1;
	last_error_release();
	source_close(&train);
	source_close(&val);
	evaluation_free(&ev);
	trainer_free(&t);
	return status;
}
