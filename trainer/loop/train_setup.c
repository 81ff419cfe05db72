/* loop/train_setup.c - a training session's start on each rank
 * (loop/trainer.h): the session and model, --init weights, the
 * optimizer, gradient exchange and schedule, --resume DIR/last (its
 * settings compared, its position moved when the global batch changed,
 * the membership change after a lost peer), rank 0's parameters to
 * every rank; then the metrics files and run.json; and the end.
 * What it does not do: train (loop/train.c) or write checkpoints
 * (loop/train_save.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fence.h"
#include "loop/run_dir.h"
#include "loop/run_files.h"
#include "loop/trainer.h"
#include "train/checkpoint.h"
#include "train/checkpoint_replace.h"

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

/* The checkpoint's recorded value of key (its change, run_dir_compare's),
 * else now: the value the session that wrote it ran with. */
static long recorded(const struct trainer *t, const char *key, long now)
{
	for (int i = 0; i < t->change_count; i++)
		if (strcmp(t->changes[i].key, key) == 0)
			return atol(t->changes[i].old_value);
	return now;
}

/* --resume after a lost peer (DIR/.survivors/saved at the checkpoint's
 * position): the membership change, for run.json and the log; the
 * ranks and --accumulate before it are those the checkpoint records. */
static int resume_membership(struct trainer *t, const char *checkpoint)
{
	struct survivors_saved *s = &t->lost;
	int rc = t->c.recovery ? t->c.recovery->read_saved(t->c.resume, s) : 0;

	if (rc <= 0 || s->epoch != t->state.epoch || s->step != t->state.step)
		return rc < 0 ? -1 : 0;
	long ranks = recorded(t, "ranks", t->world), k = recorded(t, "accumulate", t->accumulate);
	snprintf(t->membership_text[0], 32, "%ld -> %d", ranks, t->world);
	snprintf(t->membership_text[1], 32, "%ld -> %d", k, t->accumulate);
	int same = ranks * k == (long)t->world * t->accumulate;
	struct run_record_pair m[] = {
		{ "time", s->time }, { "lost", s->who }, { "hosts", s->hosts },
		{ "ranks", t->membership_text[0] }, { "accumulate", t->membership_text[1] },
		{ "steps_lost", "0" }, { "went_on", s->next },
		{ "runtime_library", dist_runtime_library()[0] ? dist_runtime_library() : "none" },
	};
	memcpy(t->membership, m, sizeof(m));
	t->membership_count = 8;
	if (s->joiners) {   /* the last ranks came from spare nodes */
		int members = t->world - s->joiners;
		snprintf(t->membership_text[2], 32, "ranks %d-%d", members, t->world - 1);
		t->membership[t->membership_count++] = (struct run_record_pair){ "joined",
										 t->membership_text[2] };
	}
	if (t->rank == 0)
		fprintf(stderr, "chexnet: --resume: after the loss of %s at %s: %ld ranks x %ld -> %d "
			"ranks x %d micro-batches per step (%s), no completed step lost (%s)\n", s->who,
			s->time, ranks, k, t->world, t->accumulate,
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

/* Rank 0 claims this session's generation of OUT (base/fence.h) once the
 * run's folder passed its guard: from now on a process of an older one
 * writes nothing there. Its text is the session's record, key=value
 * words that contrib/chexnet-elastic reads: "session ranks=R
 * accumulate=K micro_batches_kept=M host=H pid=P". -1 (a line). */
static int claim_generation(struct trainer *t, float *generation)
{
	char text[256], host[64] = "host";

	*generation = 0;
	if (t->rank != 0 || !t->c.out)
		return 0;
	gethostname(host, sizeof(host) - 1);
	snprintf(text, sizeof(text), "session ranks=%d accumulate=%ld micro_batches_kept=%ld host=%s "
		 "pid=%ld\n", t->world, t->c.accumulate, t->c.micro_batches_kept ?
		 t->c.micro_batches_kept : t->c.accumulate * t->world, host, (long)getpid());
	long g = fence_claim_next(t->c.out, text);   /* OUT made by trainer_setup */
	if (g < 0 || g > (1L << 24)) {   /* travels as a float */
		fprintf(stderr, "chexnet: --out: '%s/%s': cannot claim a generation of the run: %s\n",
			t->c.out, FENCE_DIR, g < 0 ? strerror(errno) : "more than 2^24");
		return -1;
	}
	*generation = (float)g;
	return 0;
}

/* Rank 0's parameters and BN buffers to every rank. */
static int broadcast_model(struct trainer *t, struct trainer_error *err)
{
	struct model *m = &t->s.model;

	if (dist_broadcast("init.params", m->params, m->desc.param_count, 0) ||
	    dist_broadcast("init.running", m->state, m->desc.state_count, 0))
		return trainer_dist_failed();
	return t->s.ops->load_params(t->s.backend, err);
}

int trainer_setup(struct trainer *t, const struct train_config *c)
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
	/* --resume loads every parameter strictly; other ranks get rank 0's
	 * (broadcast_model) */
	t->c.session.params_given = c->resume || t->rank != 0;
	if (session_open(&t->s, &t->c.session))
		return -1;
	if (run_dir_settings(&t->c, &t->s, t->world, &t->settings))
		return -1;
	run_dir_config_check(&t->c, &t->settings, t->rank == 0);
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
	if (train_device_open(&t->device, &t->s, &t->optim, &t->sync, t->accumulate,
			   t->c.progress == PROGRESS_QUIET))
		return -1;
	schedule_init(&t->sched, c->lr, c->lr_scale, t->world * t->accumulate, c->warmup_epochs,
		      (int)c->patience);
	t->state.best_val_loss = INFINITY;
	rng_seed(&t->state.rng, c->session.seed);
	if (c->resume && (resume(t, &err) || train_device_load_moments(&t->device, &t->optim)))
		goto fail;
	if (t->rank == 0 && c->out && c->recovery && c->recovery->reset(c->out)) {
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

/* How many hosts a list names ("n2,n3": 2). */
static int hosts_in(const char *list)
{
	int n = *list != '\0';
	for (; *list; list++)
		n += *list == ',';
	return n;
}

/* Once the sources are open (steps per epoch known): rank 0's metrics
 * files checked on --resume, the session's generation (every rank holds
 * rank 0's claim; claimed before the metrics files are opened, as the
 * claim copies them afresh), rank 0's metrics files (cut back on
 * --resume), then run.json (every rank: the hosts are gathered). */
int trainer_record(struct trainer *t, const struct source *train)
{
	t->steps_per_epoch = source_batches_per_epoch(train) / t->accumulate;
	long at = t->c.resume ? t->state.epoch * t->steps_per_epoch + t->state.step : -1;
	int hosts_lost = t->membership_count ? hosts_in(t->lost.hosts) : 0;
	float generation;
	if (t->rank == 0 && t->c.out && run_metrics_check(t->c.out, at))
		return -1;   /* refused before the claim: the folder as it was */
	run_metrics_fence();   /* copied afresh by every claim */
	if (claim_generation(t, &generation))
		return -1;
	if (dist_broadcast("init.generation", &generation, 1, 0))
		return trainer_dist_failed();
	fence_hold(t->c.out, (long)generation);
	if (t->rank == 0 && t->c.out &&
	    run_metrics_open(&t->metrics, t->c.out, t->c.session.batch * t->accumulate * t->world, at,
			     t->world, hosts_lost))
		return -1;
	t->best_epoch = t->metrics.best_epoch;
	if (run_dir_record(&t->c, &t->s, &t->settings, t->changes, t->change_count, t->membership,
			   t->membership_count, t->state.epoch, t->state.step))
		return -1;
	t->recorded = 1;
	return 0;
}

void trainer_free(struct trainer *t)
{
	run_metrics_close(&t->metrics);
	train_device_close(&t->device);
	grad_sync_free(&t->sync);
	optim_free(&t->optim);
	session_close(&t->s);
}
