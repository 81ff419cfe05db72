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
#include "cmd/cli.h"
#include "data/codec/image_decode.h"
#include "data/pack/shard_index_read.h"
#include "model/input_norm.h"
#include "train/checkpoint_settings.h"

/* A pack given to eval that cannot give exactly the recorded view. */
static void note_pack(const struct settings *o)
{
	const struct data_config *d = &o->train.data;
	const char *dir = d->dir;
	struct shard_index ix;
	char err[512];

	if (!dir || !shard_dir_is_pack(dir) || shard_index_read(dir, &ix, err, sizeof(err)))
		return;   /* a folder replays the view; a bad pack is refused where it is read */
	if (d->stored_size && ix.size != d->stored_size)
		fprintf(stderr, "chexnet: %s: note: the pack '%s' stores %d px images, the checkpoint "
			"saw %ld px ones: each is area-resized to %ld (not exactly the training view: "
			"give the image folder, or a pack made with --size %ld)\n", o->command, dir,
			ix.size, d->stored_size, d->stored_size, d->stored_size);
	if ((int)ix.aspect != d->aspect)
		fprintf(stderr, "chexnet: %s: note: the pack '%s' %s non-square images, the checkpoint "
			"saw them %s: give the image folder for the training view\n", o->command,
			dir, ix.aspect == IMAGE_ASPECT_PAD ? "pads" : "squashes",
			d->aspect == IMAGE_ASPECT_PAD ? "padded" : "squashed");
	shard_index_free(&ix);
}

/* The recorded view (stored size, aspect, normalisation) into o, or
 * the rule of older chexnet with a note; 0 or 1 (refused). */
static int view_defaults(struct settings *o, const struct run_settings *s, long trained)
{
	const char *aspect = run_settings_get(s, "aspect"), *stored = run_settings_get(s, "stored_size");
	const char *norm = run_settings_get(s, "normalise");
	enum image_aspect a;

	if (!aspect || !stored) {
		fprintf(stderr, "chexnet: %s: note: the checkpoint '%s' records no image view (written "
			"before views were): images are area-resized to 8/7 of %ld px (a pack: its own "
			"size), squashed when not square, and centre-cropped, as before\n", o->command,
			o->checkpoint, o->train.session.size);
		o->train.data.aspect = IMAGE_ASPECT_SQUASH;
		return 0;
	}
	if (image_aspect_parse(aspect, &a) || (norm && strcmp(norm, INPUT_NORM_RULE) != 0)) {
		fprintf(stderr, "chexnet: %s: the checkpoint '%s' records the view aspect '%s', "
			"normalise '%s': this build knows aspect pad|squash, normalise '%s'\n", o->command,
			o->checkpoint, aspect, norm ? norm : "(none)", INPUT_NORM_RULE);
		return 1;
	}
	o->train.data.aspect = a;
	const char *pixels = run_settings_get(s, "pixels");
	int from_files = !o->train.data.dir || !shard_dir_is_pack(o->train.data.dir);
	if (from_files && pixels && strcmp(pixels, "synthetic") && strcmp(pixels, IMAGE_PIXEL_RULE))
		fprintf(stderr, "chexnet: %s: note: the checkpoint '%s' saw images made 8-bit by '%s'; "
			"this build decodes files by '%s' (DATA.md)\n", o->command, o->checkpoint,
			pixels, IMAGE_PIXEL_RULE);
	if (o->train.session.size == trained)   /* another --size: that size's own stored side */
		o->train.data.stored_size = strtol(stored, NULL, 10);
	return 0;
}

/* --checkpoint RUN (a run folder, no model.safetensors of its own):
 * RUN/best, said in a line; without best/, a line naming RUN/last. 0 or 2. */
static int run_folder(struct settings *o)
{
	static char best[4200];
	char file[4300];

	snprintf(file, sizeof(file), "%s/model.safetensors", o->checkpoint);
	if (access(file, F_OK) == 0)
		return 0;
	snprintf(file, sizeof(file), "%s/best/model.safetensors", o->checkpoint);
	if (access(file, F_OK) == 0) {
		snprintf(best, sizeof(best), "%s/best", o->checkpoint);
		if (o->train.progress != PROGRESS_JSON)
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

int checkpoint_defaults(struct settings *o)
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
	if (SETTING_GIVEN(o, train.session.model) && strcmp(o->train.session.model, model) != 0) {
		fprintf(stderr, "chexnet: %s: --model '%s': the checkpoint '%s' holds '%s' (leave "
			"--model out to use it)\n", o->command, o->train.session.model, o->checkpoint, model);
		return 2;
	}
	o->train.session.model = model;
	const char *size = run_settings_get(&s, "size");
	long trained = size ? strtol(size, NULL, 10) : o->train.session.size;
	if (!SETTING_GIVEN(o, train.session.size))
		o->train.session.size = trained;
	else if (o->train.session.size != trained)
		fprintf(stderr, "chexnet: %s: --size %ld: the checkpoint '%s' was trained at %ld px\n",
			o->command, o->train.session.size, o->checkpoint, trained);
	if (view_defaults(o, &s, trained))
		return 1;
	note_pack(o);
	return 0;
}
