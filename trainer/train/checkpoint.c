/* checkpoint.c - model + training state to a checkpoint directory and
 * back, atomically (temp dir, fsync, then checkpoint_replace.h).
 * What it does not do: decide when to checkpoint (the training loop).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fence.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"
#include "train/checkpoint_replace.h"
#include "train/checkpoint_settings.h"

#define MODEL_FILE "model.safetensors"
#define TRAINING_FILE "training.safetensors"

static void entry_tensor(const struct model *m, const struct state_entry *e, struct st_tensor *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", e->key);
	t->ndim = e->ndim;
	memcpy(t->shape, e->shape, sizeof(e->shape));
	if (e->kind == ENTRY_BATCHES_TRACKED) {
		snprintf(t->dtype, sizeof(t->dtype), "I64");
		t->data = &m->batches_tracked;
		t->bytes = sizeof(int64_t);
		return;
	}
	snprintf(t->dtype, sizeof(t->dtype), "F32");
	t->data = (e->kind == ENTRY_PARAM ? m->params : m->state) + e->offset;
	t->bytes = e->count * sizeof(float);
}

static int write_model(const char *dir, const struct model *m, const struct run_settings *s,
		       struct trainer_error *err)
{
	int n = m->desc.entry_count;
	struct st_tensor *t = calloc((size_t)n, sizeof(*t));
	struct st_meta meta[2 + RUN_SETTINGS_MAX] = { { "format", "pt" }, { "model", m->desc.name } };
	char path[PATH_MAX], keys[RUN_SETTINGS_MAX][48];
	int metas = 2 + checkpoint_settings_meta(s, keys, meta + 2, RUN_SETTINGS_MAX);

	if (!t)
		return trainer_error_set(err, "checkpoint: out of memory");
	for (int i = 0; i < n; i++)
		entry_tensor(m, &m->desc.entries[i], &t[i]);
	snprintf(path, sizeof(path), "%s/%s", dir, MODEL_FILE);
	int rc = st_write(path, t, n, meta, metas, err);
	free(t);
	return rc;
}

static int write_training(const char *dir, const struct optim *o, const struct schedule *s,
			  const struct train_state *st, struct trainer_error *err)
{
	char v[13][48], path[PATH_MAX];
	struct st_tensor t[2];
	int tensors = o->v ? 2 : 1;

	memset(t, 0, sizeof(t));
	for (int i = 0; i < tensors; i++) {
		snprintf(t[i].name, sizeof(t[i].name), i ? "optim.v" : "optim.m");
		snprintf(t[i].dtype, sizeof(t[i].dtype), "F32");
		t[i].ndim = 1;
		t[i].shape[0] = (int64_t)o->count;
		t[i].data = i ? o->v : o->m;
		t[i].bytes = o->count * sizeof(float);
	}
	snprintf(v[0], 48, "%d", st->epoch);
	snprintf(v[1], 48, "%ld", st->step);
	snprintf(v[2], 48, "%.17g", st->best_val_loss);
	for (int i = 0; i < 4; i++)
		snprintf(v[3 + i], 48, "%016" PRIx64, st->rng.s[i]);
	snprintf(v[7], 48, "%s", optim_name(o->cfg.kind));
	snprintf(v[8], 48, "%ld", o->steps);
	snprintf(v[9], 48, "%.17g", s->plateau_mult);
	snprintf(v[10], 48, "%d", s->bad_epochs);
	snprintf(v[11], 48, "%.17g", s->best_loss);
	snprintf(v[12], 48, "%d", st->validate_first);
	struct st_meta meta[13] = {
		{ "epoch", v[0] }, { "step", v[1] }, { "best_val_loss", v[2] },
		{ "rng0", v[3] }, { "rng1", v[4] }, { "rng2", v[5] }, { "rng3", v[6] },
		{ "optimizer", v[7] }, { "optimizer_steps", v[8] }, { "lr_multiplier", v[9] },
		{ "plateau_bad_epochs", v[10] }, { "plateau_best_loss", v[11] },
		{ "validate_first", v[12] },
	};
	snprintf(path, sizeof(path), "%s/%s", dir, TRAINING_FILE);
	return st_write(path, t, tensors, meta, 13, err);
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	int rc = fd >= 0 ? fsync(fd) : -1;

	if (fd >= 0)
		close(fd);
	return rc;
}

int checkpoint_save(const char *dir, const struct model *m, const struct optim *o,
		    const struct schedule *sched, const struct train_state *st,
		    struct trainer_error *err)
{
	return checkpoint_save_run(dir, m, o, sched, st, NULL, err);
}

/* A newer generation went on: dir is left alone. */
static int stale(const char *dir, struct trainer_error *err)
{
	return trainer_error_set(err, "checkpoint: '%s': not written: a newer generation of the "
				 "run (%s/%ld) went on without this process", dir, FENCE_DIR,
				 fence_held() + 1);
}

int checkpoint_save_run(const char *dir, const struct model *m, const struct optim *o,
			const struct schedule *sched, const struct train_state *st,
			const struct run_settings *settings, struct trainer_error *err)
{
	char tmp[PATH_MAX + 64], host[64] = "host", wdir[PATH_MAX];
	const char *slash = strrchr(dir, '/');
	int fenced = fence_writes_dir(dir, wdir, sizeof(wdir));

	if (fence_stale())  /* not even a temporary in OUT */
		return stale(dir, err);
	gethostname(host, sizeof(host) - 1);   /* unique across hosts and generations */
	snprintf(tmp, sizeof(tmp), "%s%s%s.tmp-%s-%ld-%ld", fenced ? wdir : "", fenced ? "/" : "",
		 fenced && slash ? slash + 1 : dir, host, (long)getpid(), fence_held());
	checkpoint_remove_dir(tmp);
	int rc = mkdir(tmp, 0755);
	if (rc != 0 && fenced && errno == ENOENT) {
		/* the writes folder removed, or an NFS client's cached "no such
		 * folder": fence_stale opens .generations, which revalidates it */
		if (fence_stale())
			return stale(dir, err);
		if ((rc = mkdir(tmp, 0755)) != 0 && errno == ENOENT)
			return stale(dir, err);
	}
	if (rc != 0)
		return trainer_error_set(err, "checkpoint: '%s': cannot make its temporary '%s': %s",
					 dir, tmp, strerror(errno));
	rc = write_model(tmp, m, settings, err);
	if (!rc && o && sched && st)
		rc = write_training(tmp, o, sched, st, err);
	if (!rc && fsync_dir(tmp) != 0)
		rc = trainer_error_set(err, "checkpoint: '%s': fsync: %s", tmp, strerror(errno));
	struct stat sb;
	if (rc && fenced && stat(tmp, &sb) != 0)   /* removed by a newer generation's claimant */
		rc = stale(dir, err);
	if (!rc)
		rc = checkpoint_replace(tmp, dir, err);
	if (rc)
		checkpoint_remove_dir(tmp);
	return rc;
}

static void file_of(const char *path, const char *name, char *out, size_t len)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		snprintf(out, len, "%s/%s", path, name);
	else
		snprintf(out, len, "%s", path);
}

static int is_classifier(const struct model *m, const char *key)
{
	const char *name = m->desc.layers[m->desc.layer_count - 1].name;
	size_t len = strlen(name);

	return strncmp(key, name, len) == 0 && key[len] == '.';
}

/* Copies one file tensor into the entry it names; 1 if it was dropped
 * (--init classifier), 0 if copied, -1 on error. */
static int load_one(struct model *m, const struct st_tensor *t, const char *key,
		    enum checkpoint_load_mode mode, const char *path, char *loaded,
		    struct trainer_error *err)
{
	const struct state_entry *e = model_find_entry(&m->desc, key);
	char have[96], want[96];

	if (!e)
		return trainer_error_set(err, "checkpoint: '%s': unexpected key '%s' (not in %s)",
					 path, t->name, m->desc.name);
	st_shape_text(t->shape, t->ndim, have, sizeof(have));
	st_shape_text(e->shape, e->ndim, want, sizeof(want));
	if (strcmp(have, want) != 0) {
		if (mode == CHECKPOINT_INIT && is_classifier(m, key))
			return 1;
		return trainer_error_set(err, "checkpoint: '%s': key '%s': shape %s, model wants %s",
					 path, t->name, have, want);
	}
	const char *dtype = e->kind == ENTRY_BATCHES_TRACKED ? "I64" : "F32";
	if (strcmp(t->dtype, dtype) != 0)
		return trainer_error_set(err, "checkpoint: '%s': key '%s': dtype %s, expected %s",
					 path, t->name, t->dtype, dtype);
	if (e->kind == ENTRY_BATCHES_TRACKED)
		memcpy(&m->batches_tracked, t->data, sizeof(int64_t));
	else
		memcpy((e->kind == ENTRY_PARAM ? m->params : m->state) + e->offset, t->data, t->bytes);
	loaded[e - m->desc.entries] = 1;
	return 0;
}

static int check_missing(const struct model *m, const char *loaded, enum checkpoint_load_mode mode,
			 int dropped, const char *path, struct trainer_error *err)
{
	char want[96];

	for (int i = 0; i < m->desc.entry_count; i++) {
		const struct state_entry *e = &m->desc.entries[i];
		if (loaded[i])
			continue;
		if (mode == CHECKPOINT_INIT &&
		    (e->kind == ENTRY_BATCHES_TRACKED || (dropped && is_classifier(m, e->key))))
			continue;
		st_shape_text(e->shape, e->ndim, want, sizeof(want));
		return trainer_error_set(err, "checkpoint: '%s': missing key '%s' (shape %s)",
					 path, e->key, want);
	}
	return 0;
}

int checkpoint_load_model(const char *path, struct model *m, enum checkpoint_load_mode mode,
			  char *note, struct trainer_error *err)
{
	char file[PATH_MAX];
	struct st_file f;
	int dropped = 0, rc = 0;

	file_of(path, MODEL_FILE, file, sizeof(file));
	if (st_read(file, &f, err))
		return -1;
	char *loaded = calloc((size_t)m->desc.entry_count + 1, 1);
	if (!loaded)
		rc = trainer_error_set(err, "checkpoint: out of memory");
	for (int i = 0; !rc && i < f.count; i++) {
		const char *key = f.tensors[i].name;
		if (mode == CHECKPOINT_INIT && strncmp(key, "module.", 7) == 0)
			key += 7;
		int r = load_one(m, &f.tensors[i], key, mode, file, loaded, err);
		if (r < 0)
			rc = -1;
		else if (r == 1 && !dropped++ && note) {
			char have[96];
			st_shape_text(f.tensors[i].shape, f.tensors[i].ndim, have, sizeof(have));
			snprintf(note, 256, "--init: '%s': dropped %s %s (this model has %d classes; "
				 "its classifier keeps the fresh initialisation)", file,
				 f.tensors[i].name, have, m->desc.classes);
		}
	}
	if (!rc)
		rc = check_missing(m, loaded, mode, dropped, file, err);
	free(loaded);
	st_free(&f);
	return rc;
}

/* Metadata `key` as a whole decimal integer in [lo, hi]. */
static int meta_long(const struct st_file *f, const char *key, long lo, long hi, long *out,
		     const char *path, struct trainer_error *err)
{
	const char *s = st_meta_get(f, key);
	char *end;

	if (!s)
		return trainer_error_set(err, "checkpoint: '%s': metadata '%s': missing", path, key);
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return trainer_error_set(err, "checkpoint: '%s': metadata '%s': '%s': not an integer "
					 "in [%ld, %ld]", path, key, s, lo, hi);
	*out = v;
	return 0;
}

/* Metadata `key` as a number in [lo, hi] (never NaN; hi may be INFINITY). */
static int meta_double(const struct st_file *f, const char *key, double lo, double hi,
		       double *out, const char *path, struct trainer_error *err)
{
	const char *s = st_meta_get(f, key);
	char *end;

	if (!s)
		return trainer_error_set(err, "checkpoint: '%s': metadata '%s': missing", path, key);
	double v = strtod(s, &end);
	if (end == s || *end || isnan(v) || v < lo || v > hi)
		return trainer_error_set(err, "checkpoint: '%s': metadata '%s': '%s': not a number "
					 "in [%g, %g]", path, key, s, lo, hi);
	*out = v;
	return 0;
}

/* rng0..rng3 as 16 hex digits each, not all zero (xoshiro's one bad state). */
static int meta_rng(const struct st_file *f, struct rng *r, const char *path,
		    struct trainer_error *err)
{
	uint64_t any = 0;

	for (int i = 0; i < 4; i++) {
		char key[8];
		snprintf(key, sizeof(key), "rng%d", i);
		const char *s = st_meta_get(f, key);
		char *end;
		errno = 0;
		r->s[i] = s ? strtoull(s, &end, 16) : 0;
		if (!s || errno || end == s || *end || strlen(s) != 16 || s[0] == '-' || s[0] == '+')
			return trainer_error_set(err, "checkpoint: '%s': metadata '%s': missing or not "
						 "16 hex digits", path, key);
		any |= r->s[i];
	}
	if (!any)
		return trainer_error_set(err, "checkpoint: '%s': metadata 'rng0'..'rng3': all zero "
					 "(not a generator state)", path);
	return 0;
}

static int load_moment(const struct st_file *f, const char *name, float *dst, size_t count,
		       const char *path, struct trainer_error *err)
{
	const struct st_tensor *t = st_find(f, name);

	if (!t || strcmp(t->dtype, "F32") != 0 || t->ndim != 1 || (size_t)t->shape[0] != count)
		return trainer_error_set(err, "checkpoint: '%s': key '%s': missing or not F32 [%zu]",
					 path, name, count);
	memcpy(dst, t->data, count * sizeof(float));
	return 0;
}

/* The scalars, each range-checked: a bad value is an error naming it. */
static int load_state(const struct st_file *f, struct optim *o, struct schedule *sched,
		      struct train_state *st, const char *file, struct trainer_error *err)
{
	long epoch, bad, pending = 0;

	if (meta_long(f, "epoch", 0, INT_MAX, &epoch, file, err) ||
	    meta_long(f, "step", 0, LONG_MAX, &st->step, file, err) ||
	    meta_double(f, "best_val_loss", 0, INFINITY, &st->best_val_loss, file, err) ||
	    meta_rng(f, &st->rng, file, err) ||
	    meta_long(f, "optimizer_steps", 0, LONG_MAX, &o->steps, file, err) ||
	    meta_double(f, "lr_multiplier", 0, 1, &sched->plateau_mult, file, err) ||
	    meta_long(f, "plateau_bad_epochs", 0, INT_MAX, &bad, file, err) ||
	    meta_double(f, "plateau_best_loss", 0, INFINITY, &sched->best_loss, file, err))
		return -1;
	/* absent in checkpoints written before it existed: no validation pending */
	if (st_meta_get(f, "validate_first") &&
	    meta_long(f, "validate_first", 0, 1, &pending, file, err))
		return -1;
	st->epoch = (int)epoch;
	sched->bad_epochs = (int)bad;
	st->validate_first = (int)pending;
	return 0;
}

int checkpoint_load_training(const char *dir, struct optim *o, struct schedule *sched,
			     struct train_state *st, struct trainer_error *err)
{
	char file[PATH_MAX];
	struct st_file f;
	int rc;

	file_of(dir, TRAINING_FILE, file, sizeof(file));
	if (st_read(file, &f, err))
		return -1;
	const char *kind = st_meta_get(&f, "optimizer");
	if (!kind || strcmp(kind, optim_name(o->cfg.kind)) != 0)
		rc = trainer_error_set(err, "checkpoint: '%s': written with optimizer '%s', this run uses '%s'",
				       file, kind ? kind : "(none)", optim_name(o->cfg.kind));
	else
		rc = load_moment(&f, "optim.m", o->m, o->count, file, err) ||
		     (o->v && load_moment(&f, "optim.v", o->v, o->count, file, err)) ||
		     load_state(&f, o, sched, st, file, err) ? -1 : 0;
	st_free(&f);
	return rc;
}
