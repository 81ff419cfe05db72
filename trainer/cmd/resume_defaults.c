/* cmd/resume_defaults.c - a resumed run's settings from its run.json
 * (resume_defaults.h). What it does not do: check them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/resume_defaults.h"
#include "train/run_record.h"

/* Setting key -> the flag that sets it; "" values and a "0" for a flag
 * that means "not given" (steps, save-every) are skipped. */
static const struct { const char *key, *flag; int zero_unset; } taken[] = {
	{ "model", "--model", 0 }, { "size", "--size", 0 }, { "precision", "--precision", 0 },
	{ "batch", "--batch", 0 }, { "accumulate", "--accumulate", 0 },
	{ "optimizer", "--optimizer", 0 }, { "momentum", "--momentum", 0 },
	{ "weight_decay", "--weight-decay", 0 }, { "lr", "--lr", 0 },
	{ "lr_scale", "--lr-scale", 0 }, { "warmup_epochs", "--warmup-epochs", 0 },
	{ "patience", "--patience", 0 }, { "loss", "--loss", 0 }, { "seed", "--seed", 0 },
	{ "epochs", "--epochs", 0 }, { "steps", "--steps", 1 }, { "save_every", "--save-every", 1 },
	{ "progress_every", "--progress-every", 0 }, { "threads", "--threads", 0 },
	{ "loader_threads", "--loader-threads", 0 },
};

/* The data: a folder, or synthetic:N (the fingerprint holds N). */
static int take_data(struct settings *o, const struct run_settings *s)
{
	const char *data = run_settings_get(s, "data"), *print = run_settings_get(s, "data_fingerprint");

	if (!data || cli_given(o, "--data") || cli_given(o, "--synthetic"))
		return 0;
	if (strcmp(data, "synthetic"))
		return cli_apply(o, "--data", data);
	if (cli_apply(o, "--synthetic", NULL))
		return -1;
	if (print && strncmp(print, "synthetic:", 10) == 0 && !cli_given(o, "--synthetic-images"))
		return cli_apply(o, "--synthetic-images", print + 10);
	return 0;
}

int resume_defaults(struct settings *o)
{
	static struct run_settings s;   /* o points into it */
	static char path[4200];
	struct trainer_error err = { "" };

	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, o->resume);
	if (!o->resume || access(path, F_OK) != 0)
		return 0;   /* a run from before run.json: the flags rule */
	if (run_record_read(path, &s, &err)) {
		fprintf(stderr, "chexnet: --resume: %s\n", err.msg);
		return 1;
	}
	const char *model = run_settings_get(&s, "model");
	if (model && cli_given(o, "--model") && strcmp(model, o->model)) {
		fprintf(stderr, "chexnet: --resume: '%s': model %s -> %s (--model): the run's weights "
			"cannot load into another model; start a new run\n", o->resume, model, o->model);
		return 2;
	}
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		const char *v = run_settings_get(&s, taken[i].key);
		if (!v || !v[0] || (taken[i].zero_unset && strcmp(v, "0") == 0) ||
		    cli_given(o, taken[i].flag))
			continue;
		if (cli_apply(o, taken[i].flag, v))
			return 2;
	}
	const char *mem = run_settings_get(&s, "memory_efficient");
	if (mem && strcmp(mem, "1") == 0 && cli_apply(o, "--memory-efficient", NULL))
		return 2;
	if (!cli_given(o, "--precision"))
		o->precision_auto = 0;   /* the recorded one, already resolved */
	return take_data(o, &s) ? 2 : 0;
}
