/* cmd/checkpoint_defaults.c - model and size from the checkpoint
 * (checkpoint_defaults.h). What it does not do: check the weights.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/checkpoint_defaults.h"
#include "train/checkpoint_settings.h"

/* --checkpoint RUN (a run folder, no model.safetensors of its own):
 * RUN/best, said in a line; without best/, a line naming RUN/last. 0 or 2. */
static int run_folder(struct cli_options *o)
{
	static char best[4200];
	char file[4300];

	snprintf(file, sizeof(file), "%s/model.safetensors", o->checkpoint);
	if (access(file, F_OK) == 0)
		return 0;
	snprintf(file, sizeof(file), "%s/best/model.safetensors", o->checkpoint);
	if (access(file, F_OK) == 0) {
		snprintf(best, sizeof(best), "%s/best", o->checkpoint);
		if (o->progress != PROGRESS_JSON)
			fprintf(stderr, "chexnet: %s: --checkpoint '%s' is a run: using '%s' (its lowest "
				"validation loss; '%s/last' for the final weights)\n", o->command,
				o->checkpoint, best, o->checkpoint);
		o->checkpoint = best;
		return 0;
	}
	snprintf(file, sizeof(file), "%s/last/model.safetensors", o->checkpoint);
	if (access(file, F_OK) != 0)
		return 0;   /* not a run: loading it says what is wrong */
	fprintf(stderr, "chexnet: %s: --checkpoint '%s' is a run without best/ (no validation "
		"yet): use --checkpoint %s/last\n", o->command, o->checkpoint, o->checkpoint);
	return 2;
}

int checkpoint_defaults(struct cli_options *o)
{
	static char model[64];
	static struct run_settings s;
	struct trainer_error err = { "" };

	char file[4200];
	struct stat sb;
	if (stat(o->checkpoint, &sb) != 0) {   /* before start-up, as every usage error */
		fprintf(stderr, "chexnet: %s: --checkpoint '%s': %s\n", o->command, o->checkpoint,
			strerror(errno));
		return 2;
	}
	if (run_folder(o))
		return 2;
	snprintf(file, sizeof(file), "%s/model.safetensors", o->checkpoint);
	if (stat(o->checkpoint, &sb) != 0 || (S_ISDIR(sb.st_mode) && access(file, F_OK) != 0))
		return 0;   /* nothing to read: loading the weights says so, as before */
	if (checkpoint_read_settings(o->checkpoint, model, sizeof(model), &s, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	if (!model[0])   /* no "model" metadata: not written by chexnet train; the flags rule */
		return 0;
	if (o->model_given && strcmp(o->model, model) != 0) {
		fprintf(stderr, "chexnet: %s: --model '%s': the checkpoint '%s' holds '%s' (leave "
			"--model out to use it)\n", o->command, o->model, o->checkpoint, model);
		return 2;
	}
	o->model = model;
	const char *size = run_settings_get(&s, "size");
	if (!size)
		return 0;
	long trained = strtol(size, NULL, 10);
	if (!o->size_given)
		o->size = trained;
	else if (o->size != trained)
		fprintf(stderr, "chexnet: %s: --size %ld: the checkpoint '%s' was trained at %ld px\n",
			o->command, o->size, o->checkpoint, trained);
	return 0;
}
