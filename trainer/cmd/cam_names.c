/* cam_names.c - distinct names for predict --cam's pictures
 * (cam_names.h).
 * What it does not do: check the folder or write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/classes.h"
#include "cmd/cam_names.h"

#define CAM_NAME_MAX 300

/* The image's file name without folders and extension. */
static void stem_of(const char *path, char *stem, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
	snprintf(stem, len, "%.*s", (int)n, base);
}

void cam_names_free(char **bases)
{
	for (int i = 0; bases && bases[i]; i++)
		free(bases[i]);
	free(bases);
}

struct cam_file { char name[CAM_NAME_MAX]; int input; };

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cam_file *)a)->name, ((const struct cam_file *)b)->name);
}

/* -1 + err when two of the pictures the bases give share a name. */
static int distinct(char *const *inputs, char **bases, int count, struct trainer_error *err)
{
	size_t n = (size_t)count * CHEXNET_CLASSES;
	struct cam_file *f = calloc(n, sizeof(*f));
	int rc = 0;

	if (!f)
		return trainer_error_set(err, "--cam: out of memory");
	for (int i = 0; i < count; i++)
		for (int c = 0; c < CHEXNET_CLASSES; c++) {
			struct cam_file *e = &f[(size_t)i * CHEXNET_CLASSES + c];
			snprintf(e->name, sizeof(e->name), "%s_%s.png", bases[i], data_class_names[c]);
			e->input = i;
		}
	qsort(f, n, sizeof(*f), by_name);
	for (size_t k = 1; k < n && !rc; k++)
		if (!strcmp(f[k - 1].name, f[k].name)) {
			int a = f[k - 1].input < f[k].input ? f[k - 1].input : f[k].input;
			int b = f[k - 1].input < f[k].input ? f[k].input : f[k - 1].input;
			rc = trainer_error_set(err, "--cam: '%s': its picture '%s' would have the name "
					       "of one of '%s''s: rename one of them", inputs[b],
					       f[k].name, inputs[a]);
		}
	free(f);
	return rc;
}

struct cam_stem { char stem[256]; int input; };

static int by_stem(const void *a, const void *b)
{
	const struct cam_stem *x = a, *y = b;
	int c = strcmp(x->stem, y->stem);
	return c ? c : x->input - y->input;
}

/* shared[i]: another input has input i's stem (sorted, not pairwise:
 * predict takes thousands of images). */
static int *shared_stems(char *const *inputs, int count)
{
	struct cam_stem *s = calloc((size_t)count, sizeof(*s));
	int *shared = calloc((size_t)count + 1, sizeof(int));

	if (!s || !shared) {
		free(s);
		free(shared);
		return NULL;
	}
	for (int i = 0; i < count; i++) {
		stem_of(inputs[i], s[i].stem, sizeof(s[i].stem));
		s[i].input = i;
	}
	qsort(s, (size_t)count, sizeof(*s), by_stem);
	for (int k = 1; k < count; k++)
		if (!strcmp(s[k - 1].stem, s[k].stem))
			shared[s[k - 1].input] = shared[s[k].input] = 1;
	free(s);
	return shared;
}

char **cam_names_plan(char *const *inputs, int count, struct trainer_error *err)
{
	char **bases = calloc((size_t)count + 1, sizeof(char *));
	int *shared = shared_stems(inputs, count);
	char stem[256], name[CAM_NAME_MAX];

	if (!bases || !shared) {
		free(bases);
		free(shared);
		return trainer_error_set(err, "--cam: out of memory"), NULL;
	}
	for (int i = 0; i < count && bases; i++) {
		stem_of(inputs[i], stem, sizeof(stem));
		if (shared[i])
			snprintf(name, sizeof(name), "%s-%d", stem, i + 1);
		else
			snprintf(name, sizeof(name), "%s", stem);
		if (!(bases[i] = strdup(name))) {
			cam_names_free(bases);
			bases = NULL;
			trainer_error_set(err, "--cam: out of memory");
		}
	}
	free(shared);
	if (bases && distinct(inputs, bases, count, err)) {
		cam_names_free(bases);
		bases = NULL;
	}
	return bases;
}
