/* loop/run_dir.c - the run directory at the start of `chexnet train`
 * (run_dir.h): settings, resume comparison, run.json.
 * What it does not do: train, or write checkpoints.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "data/sets/fingerprint.h"
#include "data/codec/image_decode.h"
#include "data/image/image_resize.h"
#include "data/pack/shard_index_read.h"
#include "loop/run_dir.h"
#include "loop/run_files.h"
#include "model/input_norm.h"
#include "train/checkpoint_replace.h"
#include "train/checkpoint_settings.h"
#include "train/dist.h"
#include "train/run_record.h"
#include "train/settings.h"
#include "train/stop_signal.h"

#define HOST_CHARS 64

/* Stored side, fingerprint, pixel and aspect rules of the data: a pack's
 * index size, `pixels` line (an older pack has none: PNGs' high byte) and
 * `aspect` line (none: squashed), or the side images are resized to
 * before the crop and this build's rules. */
static int data_settings(const struct train_config *c, char *stored, size_t stored_len,
			 char *print, size_t print_len, char *pixels, size_t pixels_len,
			 enum image_aspect *aspect)
{
	*aspect = IMAGE_ASPECT_PAD;
	char err[512];
	struct shard_index ix;

	if (!c->data.dir) {
		snprintf(stored, stored_len, "%ld", c->session.size);
		snprintf(print, print_len, "synthetic:%ld", c->data.synthetic_images);
		snprintf(pixels, pixels_len, "synthetic");
		return 0;
	}
	if (data_fingerprint(c->data.dir, print, print_len, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	char index[4200];
	snprintf(index, sizeof(index), "%s/index.txt", c->data.dir);
	if (access(index, F_OK) != 0) {
		snprintf(stored, stored_len, "%d", image_stored_side((int)c->session.size));
		snprintf(pixels, pixels_len, "%s", IMAGE_PIXEL_RULE);
		return 0;
	}
	if (shard_index_read(c->data.dir, &ix, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	snprintf(stored, stored_len, "%d", ix.size);
	*aspect = ix.aspect;
	snprintf(pixels, pixels_len, "%s", ix.pixels[0] ? ix.pixels : "png16=high-byte (a pack older than its pixels line)");
	shard_index_free(&ix);
	return 0;
}

static int set_text(struct run_settings *r, const char *key, const char *v, int rc)
{
	struct trainer_error err = { "" };

	if (rc == 0 && run_settings_set(r, key, v, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return rc;
}

static int set_long(struct run_settings *r, const char *key, long v, int rc)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld", v);
	return set_text(r, key, text, rc);
}

static int set_double(struct run_settings *r, const char *key, double v, int rc)
{
	char text[40];

	option_number(v, text, sizeof(text));
	return set_text(r, key, text, rc);
}

/* What the run derives: the backend's detail, the view of the data and
 * its fingerprint, the rank count, the global batch and the learning
 * rate in effect. */
static int derived_settings(const struct train_config *c, const struct session *s, int world,
			    struct run_settings *r)
{
	char stored[32], print[64], crop[96], pixels[160];
	enum image_aspect aspect;
	double lr = c->lr * (c->lr_scale == LR_SCALE_LINEAR ? world * c->accumulate : 1);

	if (data_settings(c, stored, sizeof(stored), print, sizeof(print), pixels, sizeof(pixels),
			  &aspect))
		return -1;
	snprintf(crop, sizeof(crop), "train: random %ld of %s, flipped; eval: centre", c->session.size,
		 stored);
	int rc = set_text(r, "backend_detail", s->backend_what, 0);
	rc = set_text(r, "runtime_backend", dist_backend_name(), rc);
	rc = set_text(r, "stored_size", stored, rc);
	rc = set_text(r, "pixels", pixels, rc);
	rc = set_text(r, "aspect", image_aspect_name(aspect), rc);
	rc = set_text(r, "crop", crop, rc);
	rc = set_text(r, "normalise", INPUT_NORM_RULE, rc);
	rc = set_text(r, "data", c->data.dir ? c->data.dir : "synthetic", rc);
	rc = set_text(r, "data_fingerprint", print, rc);
	rc = set_long(r, "ranks", world, rc);
	rc = set_long(r, "global_batch", c->session.batch * c->accumulate * world, rc);
	rc = set_long(r, "micro_batches_kept", c->micro_batches_kept ? c->micro_batches_kept
		      : c->accumulate * world, rc);
	return set_double(r, "lr_effective", lr, rc);
}

int run_dir_settings(const struct train_config *c, const struct session *s, int world,
		     struct run_settings *out)
{
	static struct run_settings derived;
	struct trainer_error err = { "" };

	memset(&derived, 0, sizeof(derived));
	if (derived_settings(c, s, world, &derived))
		return -1;
	if (run_settings_join(&derived, c->record, out, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Two recorded values the same: as text, or as numbers for a numeric key
 * (a file's 1e-3 is run.json's 0.001). */
static int same_value(const char *key, const char *a, const char *b)
{
	int numeric = 0;

	run_setting_known(key, NULL, NULL, &numeric);
	return strcmp(a, b) == 0 || (numeric && strtod(a, NULL) == strtod(b, NULL));
}

void run_dir_config_check(const struct train_config *c, const struct run_settings *now, int loud)
{
	const struct run_settings *want = c->config_derived;
	char text[2048];
	size_t used = 0;

	for (int i = 0; want && i < want->count && used < sizeof(text); i++) {
		const char *key = want->items[i].key, *v = run_settings_get(now, key);
		const char *flag = "";
		if (v && same_value(key, want->items[i].value, v))
			continue;
		run_setting_known(key, NULL, &flag, NULL);
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s %s -> %s (%s)",
					 used ? ", " : "", key, want->items[i].value, v ? v : "(none)",
					 flag);
	}
	if (used && loud)
		fprintf(stderr, "chexnet: --config: '%s': this run derives otherwise than the file "
			"says (the file's -> this run's): %s\n", c->config, text);
}

/* "size 64 -> 128 (--size), ..." of the changes of one kind. */
static void describe(const struct run_change *c, int n, enum run_setting_kind kind, char *out,
		     size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		if (c[i].kind == kind)
			used += (size_t)snprintf(out + used, len - used, "%s%s %s -> %s (%s)",
						 used ? ", " : "", c[i].key, c[i].old_value,
						 c[i].new_value, c[i].flag);
}

int run_dir_compare(const struct train_config *c, const char *checkpoint,
		    const struct run_settings *now, struct run_change *changes, int *count,
		    int loud)
{
	static struct run_settings old;
	struct trainer_error err = { "" };
	char model[64], text[2048];

	*count = 0;
	if (checkpoint_read_settings(checkpoint, model, sizeof(model), &old, &err)) {
		if (loud)
			fprintf(stderr, "chexnet: --resume: %s\n", err.msg);
		return -1;
	}
	if (old.count == 0)
		return 0;
	*count = run_settings_changes(&old, now, changes, 2 * RUN_SETTINGS_MAX);
	for (int i = 0; i < *count; i++)
		if (strcmp(changes[i].key, "model") == 0) {  /* its weights never load: no offer */
			if (loud)
				fprintf(stderr, "chexnet: --resume: '%s': model %s -> %s (--model): the "
					"checkpoint's weights cannot load into another model; start a new "
					"run (--init takes weights of the same model)\n", c->resume,
					changes[i].old_value, changes[i].new_value);
			return -1;
		}
	describe(changes, *count, RUN_SETTING_MEANING, text, sizeof(text));
	if (text[0] && !c->allow_changes) {
		if (loud)
			fprintf(stderr, "chexnet: --resume: '%s': this session changes the run: %s; "
				"--allow-changes accepts that\n", c->resume, text);
		return -1;
	}
	char free_text[2048];
	describe(changes, *count, RUN_SETTING_FREE, free_text, sizeof(free_text));
	if (loud && (text[0] || free_text[0]) && c->progress != PROGRESS_QUIET)
		fprintf(stderr, "chexnet: --resume: '%s': changed (recorded in run.json): %s%s%s\n",
			c->resume, text, text[0] && free_text[0] ? ", " : "", free_text);
	return 0;
}

int run_dir_check_record(const struct train_config *c, int loud)
{
	char path[4200];
	struct trainer_error err = { "" };

	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, c->out);
	if (!c->resume || access(path, F_OK) != 0 || run_record_read(path, NULL, &err) == 0)
		return 0;
	if (loud)
		fprintf(stderr, "chexnet: --resume: %s\n", err.msg);
	return -1;
}

/* Every rank's host name into hosts[r] (collective). */
static char **gather_hosts(int world)
{
	float mine[HOST_CHARS] = { 0 }, *all = calloc((size_t)world * HOST_CHARS, sizeof(float));
	char name[HOST_CHARS] = "";
	char **hosts = calloc((size_t)world, sizeof(char *));
	size_t got = 0;

	gethostname(name, sizeof(name) - 1);
	for (int i = 0; i < HOST_CHARS; i++)
		mine[i] = (unsigned char)name[i];
	int rc = !all || !hosts ? -1 : world == 1 ? (memcpy(all, mine, sizeof(mine)), 0)
		 : dist_allgather("run.hosts", mine, HOST_CHARS, all, (size_t)world * HOST_CHARS, &got);
	for (int r = 0; rc == 0 && r < world; r++) {
		hosts[r] = calloc(HOST_CHARS, 1);
		for (int i = 0; hosts[r] && i < HOST_CHARS - 1; i++)
			hosts[r][i] = (char)all[r * HOST_CHARS + i];
		rc = hosts[r] ? 0 : -1;
	}
	free(all);
	if (rc == 0)
		return hosts;
	fprintf(stderr, "%s\n", hosts && all ? dist_error() : "chexnet: out of memory");
	for (int r = 0; hosts && r < world; r++)
		free(hosts[r]);
	free(hosts);
	return NULL;
}

int run_dir_record(const struct train_config *c, const struct session *session,
		   const struct run_settings *now,
		   const struct run_change *changes, int change_count,
		   const struct run_record_pair *membership, int membership_count, int epoch,
		   long step)
{
	int world = dist_size();
	char **hosts = gather_hosts(world), start[32];
	struct trainer_error err = { "" };
	time_t t = time(NULL);
	struct tm tm;
	char *argv[512];
	int argc = 0, rc = 0;

	if (!hosts)
		return -1;
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	argv[argc++] = "chexnet";
	for (int i = 0; i < c->argc && argc < 512; i++)
		argv[argc++] = c->argv[i];
	char backend[RUN_SETTING_VALUE + 32];
	snprintf(backend, sizeof(backend), "%s (%s)", run_settings_get(now, "backend"),
		 run_settings_get(now, "backend_detail"));
	char libraries[128] = "none";
	if (session->ops->libraries)
		session->ops->libraries(libraries, sizeof(libraries));
	struct run_record_pair versions[] = {
		{ "chexnet", HVD_VERSION }, { "libhvd", dist_runtime_version() },
		{ "backend", backend }, { "backend_libraries", libraries },
		{ "runtime_library", dist_runtime_library()[0] ? dist_runtime_library() : "none" },
	};
	struct run_session s = {
		.start_time = start, .argc = argc, .argv = argv, .settings = now,
		.versions = versions, .version_count = 5, .hosts = hosts, .host_count = world,
		.epoch = epoch, .step = step, .changes = changes, .change_count = change_count,
		.membership = membership, .membership_count = membership_count,
		.config_path = c->config, .config_sha256 = c->config_sha256,
	};
	s.files = run_files_written(c, &s.file_count);
	char path[4200];
	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, c->out ? c->out : ".");
	int append = c->resume && access(path, F_OK) == 0;  /* a run from before run.json: new */
	if (dist_rank() == 0 && c->out)
		rc = append ? run_record_resume(c->out, &s, &err) : run_record_create(c->out, &s, &err);
	if (rc)
		fprintf(stderr, "chexnet: %s\n", err.msg);
	for (int r = 0; r < world; r++)
		free(hosts[r]);
	free(hosts);
	return rc;
}

int run_dir_end(const struct train_config *c, int status, int sig, const char *error,
		long steps, int best_epoch, double best_value)
{
	char when[32], reason[600];
	struct trainer_error err = { "" };
	time_t t = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	if (status == 0)
		snprintf(reason, sizeof(reason), "%s", c->steps ? "--steps reached" : "every epoch ran");
	else if (status == CHEXNET_EXIT_PREEMPTED)
		snprintf(reason, sizeof(reason), "%s", sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1
			 ? "SIGUSR1" : sig == SIGINT ? "SIGINT" : "stop requested on another rank");
	else if (error && error[0]) {
		snprintf(reason, sizeof(reason), "%s", error);
		for (char *p = reason; *p; p++)   /* run.json refuses control characters */
			if ((unsigned char)*p < 32 || *p == 127)
				*p = ' ';
	}
	else
		snprintf(reason, sizeof(reason), "exit %d", status);
	struct run_end e = {
		.end_time = when, .reason = reason, .steps = steps, .best_epoch = best_epoch,
		.outcome = status == 0 ? "finished" : status == CHEXNET_EXIT_PREEMPTED ? "stopped"
			   : "failed",
		.best_value = best_epoch ? best_value : NAN,
	};
	if (!c->out || run_record_end(c->out, &e, &err) == 0)
		return 0;
	fprintf(stderr, "chexnet: %s\n", err.msg);
	return -1;
}
