/* loop/train.c - the training loop on one rank or many (srun --hvd), on
 * the state of loop/trainer.h: each rank trains on its own micro-batches
 * (the loader's rank/world layout); `--accumulate K` local micro-batches
 * per optimizer step with one average allreduce of the gradients,
 * submitted layer by layer from the backend's grad_ready callback during
 * the last backward (grad_sync.h); a tiny per-step allreduce agrees on a
 * stop request (SIGTERM, SIGUSR1) and on skipping the step when any
 * rank's fp16 gradients overflowed (train/verdict.h), so every rank stops
 * after the same step, rank 0 writes OUT/last and the run exits
 * CHEXNET_EXIT_PREEMPTED (75); a lost peer goes to train_config's recovery. The
 * loss stays on the backend and is read and averaged over ranks only for
 * each progress line (M3); each micro-batch's successor is fetched and
 * handed to the backend while it computes (P4). BN running statistics
 * stay per rank (as torchvision) and are averaged across ranks before
 * validation and before every checkpoint. Only rank 0 prints progress,
 * writes checkpoints and the tables; every rank prints its own errors.
 * What it does not do: start a session or resume (loop/train_setup.c),
 * parse options (cmd/), evaluate (loop/evaluate.h), start the runtime
 * (cmd/train.c), compute layers (backends) or exchange data (dist.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/auroc.h"
#include "loop/diverge.h"
#include "loop/evaluate.h"
#include "loop/last_error.h"
#include "loop/run_dir.h"
#include "loop/thresholds.h"
#include "loop/train.h"
#include "loop/trainer.h"
#include "train/checkpoint.h"
#include "train/peer_lost.h"
#include "train/span.h"
#include "train/stop_signal.h"
#include "train/verdict.h"


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
	return train_device_prefetch(&t->device, b);
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
			train_device_after_backward(&t->device);
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

	train_verdict_pack(stats, stop_signal_received(), train_device_found_inf(&t->device));
	span_begin("compute", "ALLREDUCE_WAIT");
	int rc = train_device_exchange(&t->device, &t->sync, stats, TRAIN_STATS);
	span_end("compute");
	t->clock.allreduce_wait += now_seconds() - t0;
	if (rc)
		return -1;
	train_verdict_read(stats, &v);
	t->stop |= v.stop;
	*skip = train_device_settle(&t->device, &v);
	return 0;
}

/* One optimizer step over K micro-batches; `more`: a step of this epoch
 * follows (its first batch is fetched during this one). */
static int train_step(struct trainer *t, struct source *src, double lr, int more)
{
	int skip = 0;

	train_device_step_begin(&t->device);
	for (int k = 0; k < t->accumulate; k++)
		if (micro_batch(t, src, k, more || k + 1 < t->accumulate))
			return -1;
	if (exchange(t, &skip))
		return -1;
	if (skip)  /* fp16 overflow on some rank: every rank skips, the scale halved */
		return 0;
	span_begin("compute", "OPTIMIZER");
	int rc = train_device_optimize(&t->device, &t->optim, lr);
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
		return trainer_dist_failed();
	*loss = mean;
	return 0;
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
			train_device_sample(&t->device);  /* every rank: utilisation for O1 */
			if (progress(t, &w, epoch, step, steps, lr, step == steps))
				return EPOCH_FAILED;
			train_window_start(&w, &t->clock);
		}
		if (step < steps && (reached || t->stop))
			return t->stop ? EPOCH_STOPPED : EPOCH_STEPS_REACHED;
		if (step < steps && t->c.save_every && t->total_steps % t->c.save_every == 0 &&
		    (trainer_average_bn(t) || trainer_save(t, "last")))
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
		return trainer_save(t, "last") ? -1 : EVAL_STOPPED;
	t->state.epoch = epoch + 1;
	t->state.step = 0;
	t->state.validate_first = 1;
	return trainer_save(t, "last") ? -1 : EVAL_STOPPED;
}

/* Validation (all ranks), LR plateau, checkpoints; complete = the epoch
 * ran to its end (else the data position stays mid-epoch). 0, -1, or
 * EVAL_STOPPED (a stop request during validation: OUT/last written). */
static int end_of_epoch(struct trainer *t, struct source *val, int epoch, int complete,
			struct evaluation *ev)
{
	if (trainer_average_bn(t))
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
		if (trainer_save(t, "best") || eval_train_thresholds(&t->c, t->rank, t->s.model.desc.name, ev))
			return -1;
	}
	return trainer_save(t, "last");
}

/* A stop agreed mid-epoch: checkpoint at this step, say how to go on. */
static int stopped(struct trainer *t)
{
	if (trainer_average_bn(t) || trainer_save(t, "last"))
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

/* Training or validation failed: a lost peer's recovery, or 1. */
static int failed(struct trainer *t)
{
	return t->c.recovery ? t->c.recovery->survive(t) : 1;
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
			return failed(t);
		*trained = 1;  /* the table at the end shows this validation */
	}
	for (int epoch = t->state.epoch; epoch < t->c.epochs; epoch++) {
		long first = *trained ? 0 : t->state.step;
		enum epoch_result r = train_epoch(t, train, epoch, first);
		*trained = 1;
		if (r == EPOCH_FAILED)
			return failed(t);
		if (r == EPOCH_STOPPED)
			return stopped(t);
		int end = end_of_epoch(t, val, epoch, r == EPOCH_DONE, ev);
		if (end == EVAL_STOPPED)
			return stopped_report(t, 1);
		if (end)
			return failed(t);
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
	int rc = source_open(&test, &t->c.session, &t->c.data, DATA_TEST, l);

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
		if (source_open(&train, &t.c.session, &t.c.data, DATA_TRAIN, &l) == 0 &&
		    source_open(&val, &t.c.session, &t.c.data, DATA_VAL, &l) == 0) {
			stop_signal_listen();
			status = trainer_record(&t, &train) || train_device_report_start(&t.device) ? 1
				 : train_epochs(&t, &train, &val, &ev, &trained);
			if (status == 0 && trained && train_device_report_end(&t.device))
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
