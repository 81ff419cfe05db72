/* train/run_record.c - run.json written and read (run_record.h) with
 * cJSON. What it does not do: decide what a session records.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "base/text_control.h"
#include "base/whole_file.h"
#include "train/run_record.h"
#include "train/settings.h"

#define FORMAT "chexnet-run 1"

/* the first 7 required; "files" optional (a record from before it) */
static const char *const top_keys[] = { "format", "start_time", "command_line", "settings",
					"versions", "hosts", "resumes", "files", "end", "config", NULL };
static const char *const end_keys[] = { "end_time", "outcome", "reason", "steps", "best_epoch",
					"best_metric", "best_value", NULL };
static const char *const resume_keys[] = { "start_time", "command_line", "epoch", "step",
					   "changes", "membership", "config", NULL };
static const char *const config_keys[] = { "path", "sha256", NULL };

static cJSON *string_array(char **v, int n)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static cJSON *settings_object(const struct run_settings *s)
{
	cJSON *o = cJSON_CreateObject();

	for (int i = 0; o && i < s->count; i++) {
		int numeric = 0;
		run_setting_known(s->items[i].key, NULL, NULL, &numeric);
		if (numeric)
			cJSON_AddNumberToObject(o, s->items[i].key, strtod(s->items[i].value, NULL));
		else
			cJSON_AddStringToObject(o, s->items[i].key, s->items[i].value);
	}
	return o;
}

static cJSON *changes_object(const struct run_session *s)
{
	cJSON *o = cJSON_CreateObject();

	for (int i = 0; o && i < s->change_count; i++) {
		char *pair[2] = { (char *)s->changes[i].old_value, (char *)s->changes[i].new_value };
		cJSON_AddItemToObject(o, s->changes[i].key, string_array(pair, 2));
	}
	return o;
}

/* {"path", "sha256"} of the session's --config, or NULL without one. */
static cJSON *config_object(const struct run_session *s)
{
	cJSON *o = s->config_path ? cJSON_CreateObject() : NULL;

	cJSON_AddStringToObject(o, "path", s->config_path);
	cJSON_AddStringToObject(o, "sha256", s->config_sha256 ? s->config_sha256 : "");
	return o;
}

static cJSON *resume_object(const struct run_session *s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "start_time", s->start_time);
	cJSON_AddItemToObject(o, "command_line", string_array(s->argv, s->argc));
	cJSON_AddNumberToObject(o, "epoch", s->epoch);
	cJSON_AddNumberToObject(o, "step", (double)s->step);
	cJSON_AddItemToObject(o, "changes", changes_object(s));
	if (s->membership_count) {
		cJSON *m = cJSON_AddObjectToObject(o, "membership");
		for (int i = 0; m && i < s->membership_count; i++)
			cJSON_AddStringToObject(m, s->membership[i].name, s->membership[i].value);
	}
	if (s->config_path)
		cJSON_AddItemToObject(o, "config", config_object(s));
	return o;
}

static cJSON *new_record(const struct run_session *s)
{
	cJSON *root = cJSON_CreateObject(), *v = cJSON_CreateObject();

	cJSON_AddStringToObject(root, "format", FORMAT);
	cJSON_AddStringToObject(root, "start_time", s->start_time);
	cJSON_AddItemToObject(root, "command_line", string_array(s->argv, s->argc));
	cJSON_AddItemToObject(root, "settings", settings_object(s->settings));
	for (int i = 0; i < s->version_count; i++)
		cJSON_AddStringToObject(v, s->versions[i].name, s->versions[i].value);
	cJSON_AddItemToObject(root, "versions", v);
	cJSON_AddItemToObject(root, "hosts", string_array(s->hosts, s->host_count));
	cJSON_AddItemToObject(root, "resumes", cJSON_CreateArray());
	cJSON_AddItemToObject(root, "files", string_array((char **)s->files, s->file_count));
	if (s->config_path)
		cJSON_AddItemToObject(root, "config", config_object(s));
	return root;
}

/* root as dir/run.json: temporary file, fsync, rename. */
static int write_json(const char *dir, cJSON *root, struct trainer_error *err)
{
	char path[PATH_MAX];
	char *text = cJSON_Print(root);

	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, dir);
	if (!text)
		return trainer_error_set(err, "run record: '%s': out of memory", path);
	int rc = whole_file_put_line(path, text, 0644);
	free(text);
	return rc == 0 ? 0 : trainer_error_set(err, "run record: '%s': %s", path,
					       whole_file_why(errno));
}

int run_record_create(const char *dir, const struct run_session *s, struct trainer_error *err)
{
	cJSON *root = new_record(s);
	int rc = write_json(dir, root, err);

	cJSON_Delete(root);
	return rc;
}

/* The file's text, NUL-terminated (at most RUN_RECORD_MAX_BYTES). */
static char *slurp(const char *path, struct trainer_error *err)
{
	char why[128];
	size_t n = 0;
	char *buf = regular_file_read(path, 0, RUN_RECORD_MAX_BYTES, &n, why, sizeof(why));

	if (buf && memchr(buf, '\0', n)) {
		free(buf);
		buf = NULL;
		snprintf(why, sizeof(why), "unreadable or not text");
	}
	if (!buf)
		trainer_error_set(err, "run record: '%s': %s", path, why);
	return buf;
}

/* Every key of o among allowed, none twice; every one of `required`
 * (a prefix count of allowed) present. */
static int check_keys(const cJSON *o, const char *const *allowed, int required,
		      const char *path, const char *what, struct trainer_error *err)
{
	const cJSON *e;

	if (!cJSON_IsObject(o))
		return trainer_error_set(err, "run record: '%s': %s: not an object", path, what);
	cJSON_ArrayForEach(e, o) {
		int i = 0;
		while (allowed[i] && strcmp(allowed[i], e->string))
			i++;
		if (!allowed[i])
			return trainer_error_set(err, "run record: '%s': %s: unknown field '%.64s'", path,
						 what, e->string);
		for (const cJSON *d = o->child; d != e; d = d->next)
			if (strcmp(d->string, e->string) == 0)
				return trainer_error_set(err, "run record: '%s': %s: field '%.64s' twice",
							 path, what, e->string);
	}
	for (int i = 0; i < required; i++)
		if (!cJSON_GetObjectItemCaseSensitive(o, allowed[i]))
			return trainer_error_set(err, "run record: '%s': %s: missing '%s'", path, what,
						 allowed[i]);
	return 0;
}

static int check_strings(const cJSON *a, int pairs, const char *path, const char *what,
			 struct trainer_error *err)
{
	const cJSON *e;

	if (!cJSON_IsArray(a) || (pairs && cJSON_GetArraySize(a) != 2))
		return trainer_error_set(err, "run record: '%s': %s: not %s", path, what,
					 pairs ? "[old, new]" : "an array of strings");
	cJSON_ArrayForEach(e, a)
		if (!cJSON_IsString(e))
			return trainer_error_set(err, "run record: '%s': %s: not all strings", path, what);
	return 0;
}

static int read_settings(const cJSON *o, struct run_settings *s, const char *path,
			 struct trainer_error *err)
{
	const cJSON *e;
	struct trainer_error why = { "" };

	if (!cJSON_IsObject(o))
		return trainer_error_set(err, "run record: '%s': settings: not an object", path);
	memset(s, 0, sizeof(*s));
	cJSON_ArrayForEach(e, o) {
		char number[40];
		int numeric = 0;
		if (!run_setting_known(e->string, NULL, NULL, &numeric))
			return trainer_error_set(err, "run record: '%s': settings: '%.64s': unknown setting",
						 path, e->string);
		if (run_settings_get(s, e->string))
			return trainer_error_set(err, "run record: '%s': settings: '%s' twice", path,
						 e->string);
		if (numeric ? !cJSON_IsNumber(e) || !isfinite(e->valuedouble) : !cJSON_IsString(e))
			return trainer_error_set(err, "run record: '%s': settings: '%s': not a %s", path,
						 e->string, numeric ? "number" : "string");
		if (numeric)
			option_number(e->valuedouble, number, sizeof(number));
		if (run_settings_set(s, e->string, numeric ? number : e->valuestring, &why))
			return trainer_error_set(err, "run record: '%s': %s", path, why.msg);
	}
	return 0;
}

static int check_string_object(const cJSON *o, const char *path, const char *what,
			       struct trainer_error *err)
{
	const cJSON *e;

	if (!cJSON_IsObject(o))
		return trainer_error_set(err, "run record: '%s': %s: not an object", path, what);
	cJSON_ArrayForEach(e, o)
		if (!cJSON_IsString(e))
			return trainer_error_set(err, "run record: '%s': %s: '%.64s': not a string", path,
						 what, e->string);
	return 0;
}

/* A session's "config", when there: its path and SHA-256, both text. */
static int check_config(const cJSON *o, const char *path, struct trainer_error *err)
{
	if (!o)
		return 0;
	return check_keys(o, config_keys, 2, path, "config", err) ||
	       check_string_object(o, path, "config", err) ? -1 : 0;
}

static int check_resume(const cJSON *r, const char *path, struct trainer_error *err)
{
	const cJSON *e;

	if (check_keys(r, resume_keys, 5, path, "resumes[]", err))
		return -1;
	const cJSON *epoch = cJSON_GetObjectItemCaseSensitive(r, "epoch");
	const cJSON *step = cJSON_GetObjectItemCaseSensitive(r, "step");
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "start_time")) ||
	    !cJSON_IsNumber(epoch) || !cJSON_IsNumber(step) || !(epoch->valuedouble >= 0) ||
	    !(step->valuedouble >= 0))
		return trainer_error_set(err, "run record: '%s': resumes[]: start_time, epoch or step "
					 "of the wrong type", path);
	if (check_strings(cJSON_GetObjectItemCaseSensitive(r, "command_line"), 0, path,
			  "resumes[].command_line", err))
		return -1;
	const cJSON *changes = cJSON_GetObjectItemCaseSensitive(r, "changes");
	if (!cJSON_IsObject(changes))
		return trainer_error_set(err, "run record: '%s': resumes[].changes: not an object", path);
	cJSON_ArrayForEach(e, changes)
		if (check_strings(e, 1, path, "resumes[].changes", err))
			return -1;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "membership");
	if (m && check_string_object(m, path, "resumes[].membership", err))
		return -1;
	return check_config(cJSON_GetObjectItemCaseSensitive(r, "config"), path, err);
}

/* "files", when there: at most RUN_FILES_MAX plain names of the folder. */
static int check_files(const cJSON *a, const char *path, struct trainer_error *err)
{
	const cJSON *e;

	if (!a)
		return 0;
	if (check_strings(a, 0, path, "files", err))
		return -1;
	if (cJSON_GetArraySize(a) > RUN_FILES_MAX)
		return trainer_error_set(err, "run record: '%s': files: more than %d", path,
					 RUN_FILES_MAX);
	cJSON_ArrayForEach(e, a) {
		const char *n = e->valuestring;
		if (!n[0] || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, "..") ||
		    strlen(n) >= RUN_FILE_NAME)
			return trainer_error_set(err, "run record: '%s': files: '%.64s': not a name of "
						 "the run's folder", path, n);
	}
	return 0;
}

/* "end", when there: every field, of its type. */
static int check_end(const cJSON *o, const char *path, struct trainer_error *err)
{
	const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(o, "outcome");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(o, "best_value");

	if (!o)
		return 0;
	if (check_keys(o, end_keys, 7, path, "end", err))
		return -1;
	if (!cJSON_IsString(outcome) || (strcmp(outcome->valuestring, "finished") &&
	    strcmp(outcome->valuestring, "stopped") && strcmp(outcome->valuestring, "failed")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "end_time")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "reason")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "best_metric")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "steps")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "best_epoch")) ||
	    !(cJSON_IsNumber(value) || cJSON_IsNull(value)))
		return trainer_error_set(err, "run record: '%s': end: a field of the wrong type or "
					 "value", path);
	return 0;
}

/* 1 when a key or string anywhere under n holds a control character
 * (no message may print it). */
static int has_control(const cJSON *n)
{
	for (; n; n = n->next) {
		if ((n->string && text_control_at(n->string) >= 0) ||
		    (cJSON_IsString(n) && text_control_at(n->valuestring) >= 0) ||
		    has_control(n->child))
			return 1;
	}
	return 0;
}

static int check_record_fields(const cJSON *root, struct run_settings *s, const char *path,
			struct trainer_error *err)
{
	const cJSON *e, *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	struct run_settings scratch;

	if (has_control(root))
		return trainer_error_set(err, "run record: '%s': a key or string with a control "
					 "character", path);
	if (check_keys(root, top_keys, 7, path, "the record", err))
		return -1;
	if (!cJSON_IsString(format) || strcmp(format->valuestring, FORMAT))
		return trainer_error_set(err, "run record: '%s': format: not '" FORMAT "'", path);
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "start_time")))
		return trainer_error_set(err, "run record: '%s': start_time: not a string", path);
	if (check_strings(cJSON_GetObjectItemCaseSensitive(root, "command_line"), 0, path,
			  "command_line", err) ||
	    check_strings(cJSON_GetObjectItemCaseSensitive(root, "hosts"), 0, path, "hosts", err) ||
	    check_string_object(cJSON_GetObjectItemCaseSensitive(root, "versions"), path, "versions",
				err) ||
	    read_settings(cJSON_GetObjectItemCaseSensitive(root, "settings"), s ? s : &scratch, path,
			  err))
		return -1;
	if (check_files(cJSON_GetObjectItemCaseSensitive(root, "files"), path, err) ||
	    check_end(cJSON_GetObjectItemCaseSensitive(root, "end"), path, err) ||
	    check_config(cJSON_GetObjectItemCaseSensitive(root, "config"), path, err))
		return -1;
	const cJSON *resumes = cJSON_GetObjectItemCaseSensitive(root, "resumes");
	if (!cJSON_IsArray(resumes))
		return trainer_error_set(err, "run record: '%s': resumes: not an array", path);
	cJSON_ArrayForEach(e, resumes)
		if (check_resume(e, path, err))
			return -1;
	return 0;
}

/* The parsed and checked record, or NULL (err). */
static cJSON *parse(const char *path, const char *text, struct run_settings *s,
		    struct trainer_error *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, 1);

	if (!root)
		trainer_error_set(err, "run record: '%s': not JSON (at byte %ld)", path,
				  end ? (long)(end - text) : 0L);
	else if (check_record_fields(root, s, path, err)) {
		cJSON_Delete(root);
		root = NULL;
	}
	return root;
}

static cJSON *load(const char *path, struct run_settings *s, struct trainer_error *err)
{
	char *text = slurp(path, err);
	cJSON *root = text ? parse(path, text, s, err) : NULL;

	free(text);
	return root;
}

int run_record_parse(const char *path, const char *text, struct run_settings *settings,
		     struct trainer_error *err)
{
	cJSON *root = parse(path, text, settings, err);

	cJSON_Delete(root);
	return root ? 0 : -1;
}

int run_record_read(const char *path, struct run_settings *settings, struct trainer_error *err)
{
	cJSON *root = load(path, settings, err);

	cJSON_Delete(root);
	return root ? 0 : -1;
}

int run_record_files(const char *path, struct run_files *files, struct trainer_error *err)
{
	cJSON *root = load(path, NULL, err);
	const cJSON *e, *a = root ? cJSON_GetObjectItemCaseSensitive(root, "files") : NULL;

	memset(files, 0, sizeof(*files));
	files->listed = a != NULL;
	files->ended = root && cJSON_GetObjectItemCaseSensitive(root, "end") != NULL;
	cJSON_ArrayForEach(e, a)
		snprintf(files->name[files->count++], RUN_FILE_NAME, "%s", e->valuestring);
	cJSON_Delete(root);
	return root ? 0 : -1;
}

/* s's files added to root's "files" (made when missing). */
static void add_files(cJSON *root, const struct run_session *s)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "files"), *e;

	if (!a)
		cJSON_AddItemToObject(root, "files", a = cJSON_CreateArray());
	for (int i = 0; a && i < s->file_count; i++) {
		int have = 0;
		cJSON_ArrayForEach(e, a)
			have |= strcmp(e->valuestring, s->files[i]) == 0;
		if (!have && cJSON_GetArraySize(a) < RUN_FILES_MAX)
			cJSON_AddItemToArray(a, cJSON_CreateString(s->files[i]));
	}
}

int run_record_resume(const char *dir, const struct run_session *s, struct trainer_error *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, dir);
	cJSON *root = load(path, NULL, err);
	if (!root)
		return -1;
	add_files(root, s);
	cJSON_DeleteItemFromObjectCaseSensitive(root, "end");
	cJSON_ReplaceItemInObjectCaseSensitive(root, "settings", settings_object(s->settings));
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(root, "resumes"), resume_object(s));
	int rc = write_json(dir, root, err);
	cJSON_Delete(root);
	return rc;
}

int run_record_end(const char *dir, const struct run_end *e, struct trainer_error *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, dir);
	cJSON *root = load(path, NULL, err), *o = cJSON_CreateObject();
	if (!root) {
		cJSON_Delete(o);
		return -1;
	}
	cJSON_AddStringToObject(o, "end_time", e->end_time);
	cJSON_AddStringToObject(o, "outcome", e->outcome);
	cJSON_AddStringToObject(o, "reason", e->reason);
	cJSON_AddNumberToObject(o, "steps", (double)e->steps);
	cJSON_AddNumberToObject(o, "best_epoch", e->best_epoch);
	cJSON_AddStringToObject(o, "best_metric", "val_loss");
	if (isfinite(e->best_value))
		cJSON_AddNumberToObject(o, "best_value", e->best_value);
	else
		cJSON_AddNullToObject(o, "best_value");
	cJSON_DeleteItemFromObjectCaseSensitive(root, "end");
	cJSON_AddItemToObject(root, "end", o);
	int rc = write_json(dir, root, err);
	cJSON_Delete(root);
	return rc;
}
