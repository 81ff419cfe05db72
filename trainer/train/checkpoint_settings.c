/* train/checkpoint_settings.c - a run's settings to and from a
 * checkpoint's metadata (checkpoint_settings.h).
 * What it does not do: check the values against a run (loop/).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "train/checkpoint_settings.h"
#include "train/settings.h"

int checkpoint_settings_meta(const struct run_settings *s, char keys[][48], struct st_meta *meta,
			     int max)
{
	int n = 0;

	for (int i = 0; s && i < s->count && n < max; i++) {
		const struct setting *row = settings_of_key(s->items[i].key);
		if (row && row->resume == RESUME_SESSION)
			continue;   /* where and how this session ran: not how the weights came */
		snprintf(keys[n], 48, RUN_SETTINGS_META_PREFIX "%s", s->items[i].key);
		meta[n].key = keys[n];
		meta[n].value = s->items[i].value;
		n++;
	}
	return n;
}

static void model_file(const char *path, char *out, size_t len)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		snprintf(out, len, "%s/model.safetensors", path);
	else
		snprintf(out, len, "%s", path);
}

static int read_meta(const struct st_file *f, const char *file, char *model, size_t model_len,
		     struct run_settings *s, struct trainer_error *err)
{
	const size_t plen = strlen(RUN_SETTINGS_META_PREFIX);
	const char *name = st_meta_get(f, "model");

	snprintf(model, model_len, "%s", name ? name : "");  /* none: a file not written here */
	for (int i = 0; i < f->meta_count; i++) {
		const char *key = f->meta[i].key;
		if (strncmp(key, RUN_SETTINGS_META_PREFIX, plen) != 0)
			continue;
		struct trainer_error why = { "" };
		if (run_settings_set(s, key + plen, f->meta[i].value, &why))
			return trainer_error_set(err, "checkpoint: '%s': metadata '%s': %s", file, key,
						 why.msg);
	}
	const char *recorded = run_settings_get(s, "model");
	if (recorded && name && strcmp(recorded, name) != 0)
		return trainer_error_set(err, "checkpoint: '%s': metadata 'setting.model' '%s' differs "
					 "from 'model' '%s'", file, recorded, name);
	return 0;
}

int checkpoint_read_settings(const char *path, char *model, size_t model_len,
			     struct run_settings *s, struct trainer_error *err)
{
	char file[PATH_MAX];
	struct st_file f;

	memset(s, 0, sizeof(*s));
	model_file(path, file, sizeof(file));
	if (st_read(file, &f, err))
		return -1;
	int rc = read_meta(&f, file, model, model_len, s, err);
	st_free(&f);
	return rc;
}
