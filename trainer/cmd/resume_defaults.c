/* cmd/resume_defaults.c - a resumed run's settings from its run.json
 * (resume_defaults.h): every row of the settings table that --resume
 * takes, unless this command line gave it. What it does not do: check
 * them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "train/settings.h"
#include "cmd/resume_defaults.h"
#include "recover/survivors.h"
#include "train/run_record.h"

/* The resumed record's rank count and the micro-batches per step the
 * run keeps to, 0 when it names none. */
static long recorded_ranks, recorded_kept;

/* The data: a folder, or synthetic:N (the fingerprint holds N). */
static int take_data(struct settings *o, const struct run_settings *s)
{
	const char *data = run_settings_get(s, "data"), *print = run_settings_get(s, "data_fingerprint");

	struct trainer_error err = { "" };
	const struct setting *images = SETTING_OF(train.data.synthetic_images);

	if (!data || SETTING_GIVEN(o, train.data.dir) || SETTING_GIVEN(o, synthetic))
		return 0;
	if (strcmp(data, "synthetic")) {
		o->train.data.dir = data;
		return 0;
	}
	o->synthetic = 1;
	if (print && strncmp(print, "synthetic:", 10) == 0 && !settings_given(o, images) &&
	    settings_set(o, images, print + 10, 0, &err))
		return fprintf(stderr, "chexnet: --resume: %s: %s\n", o->train.resume, err.msg), -1;
	return 0;
}

/* A recorded value a row takes: not given here, and not the unset zero
 * of a row without a default (steps 0: whole epochs). */
static int taken(const struct settings *o, const struct setting *row, const char *v)
{
	if (!row->flag || !v || settings_given(o, row))
		return 0;
	if (row->resume != RESUME_FREE && row->resume != RESUME_MEANING && row->resume != RESUME_KEPT)
		return 0;
	return !settings_recorded_unset(row, v);
}

int resume_defaults(struct settings *o)
{
	static struct run_settings s;   /* o points into it */
	static char path[4200];
	struct trainer_error err = { "" };

	recorded_ranks = recorded_kept = 0;
	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, o->train.resume);
	if (!o->train.resume || access(path, F_OK) != 0)
		return 0;   /* a run from before run.json: the flags rule */
	if (run_record_read(path, &s, &err)) {
		fprintf(stderr, "chexnet: --resume: %s\n", err.msg);
		return 1;
	}
	const char *model = run_settings_get(&s, "model"), *ranks = run_settings_get(&s, "ranks");
	const char *kept = run_settings_get(&s, "micro_batches_kept");
	recorded_ranks = ranks ? strtol(ranks, NULL, 10) : 0;
	recorded_kept = kept ? strtol(kept, NULL, 10) : 0;
	if (model && SETTING_GIVEN(o, train.session.model) && strcmp(model, o->train.session.model)) {
		fprintf(stderr, "chexnet: --resume: '%s': model %s -> %s (--model): the run's weights "
			"cannot load into another model; start a new run\n", o->train.resume, model,
			o->train.session.model);
		return 2;
	}
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		const char *v = row->key ? run_settings_get(&s, row->key) : NULL;
		if (taken(o, row, v) && settings_set(o, row, v, 0, &err)) {
			fprintf(stderr, "chexnet: --resume: %s: %s: %s\n", path, row->key, err.msg);
			return 2;
		}
	}
	return take_data(o, &s) ? 2 : 0;
}

int resume_keep_global_batch(struct settings *o, int ranks, int say, long *kept)
{
	struct trainer_error err = { "" };
	int exact = 0;

	*kept = 0;
	if (!o->train.resume || recorded_ranks <= 0 || SETTING_GIVEN(o, train.accumulate))
		return 0;
	long want = recorded_kept > 0 ? recorded_kept : recorded_ranks * o->train.accumulate;
	*kept = want;
	if (recorded_ranks == ranks)
		return 0;
	long k = survivors_accumulate(want, ranks, &exact);
	if (settings_set_long(o, SETTING_OF(train.accumulate), k, 0, &err)) {
		fprintf(stderr, "chexnet: --resume: '%s': %s\n", o->train.resume, err.msg);
		return 2;
	}
	if (say && exact)
		fprintf(stderr, "chexnet: --resume: '%s': %d rank%s, %ld when it stopped: --accumulate "
			"%ld keeps its global batch (%ld micro-batches per step)\n", o->train.resume, ranks,
			ranks == 1 ? "" : "s", recorded_ranks, k, want);
	else if (say)
		fprintf(stderr, "chexnet: --resume: '%s': %d rank%s, %ld when it stopped: no "
			"--accumulate keeps its %ld micro-batches per step; %ld gives %ld, the nearest "
			"(a change of the global batch: --allow-changes)\n", o->train.resume, ranks,
			ranks == 1 ? "" : "s", recorded_ranks, want, k, k * ranks);
	return 0;
}
