/* train/run_record.h - OUT/run.json, the record of a training run:
 *   {"format": "chexnet-run 1",
 *    "start_time": ISO-8601 UTC, "command_line": [argv...],
 *    "settings": {key: value...}   (run_settings.h; numbers as numbers),
 *    "versions": {name: text...}, "hosts": [one per rank...],
 *    "resumes": [{"start_time", "command_line", "epoch", "step",
 *                 "changes": {key: [old, new]...},
 *                 "membership": {"time", "lost", "hosts", "ranks",
 *                   "accumulate", "steps_lost": strings}  (only after a
 *                   lost peer: chexnet-elastic's relaunch)}...],
 *    "config": {"path", "sha256"}   (the first session's --config FILE,
 *                           absent without one; a resume's own in its entry),
 *    "files": [name...],   (the run's own entries of its folder: the
 *                           only ones `train` deletes or replaces; absent
 *                           in a record from before it)
 *    "end": {"end_time", "outcome": "finished" | "stopped" | "failed",
 *            "reason", "steps", "best_epoch", "best_metric": "val_loss",
 *            "best_value": number or null}}   (the latest session's end;
 *                           absent while one runs, or it was killed)
 * "settings" is the latest session's; each --resume appends to
 * "resumes". Written whole to a temporary file, fsynced and renamed over
 * run.json. Reading is strict: anything else (a missing or unknown field,
 * a wrong type, an unknown setting, bad JSON, more than 1 MiB) is one
 * line naming the file.
 * What this is not: choosing the values (loop/run_dir.c).
 */
#ifndef HVD_TRAINER_RUN_RECORD_H
#define HVD_TRAINER_RUN_RECORD_H

#include "base/error.h"
#include "train/run_settings.h"

#define RUN_RECORD_FILE "run.json"
#define RUN_RECORD_MAX_BYTES (1 << 20)

struct run_record_pair {
	const char *name, *value;
};

/* What one session contributes. */
struct run_session {
	const char *start_time;         /* "2026-11-23T22:49:31Z" */
	int argc;
	char **argv;                    /* the full command line */
	const struct run_settings *settings;
	const struct run_record_pair *versions;
	int version_count;
	char **hosts;                   /* one per rank */
	int host_count;
	int epoch;                      /* resumed at (resume only) */
	long step;
	const struct run_change *changes;  /* resume only */
	int change_count;
	const struct run_record_pair *membership;  /* resume after a lost peer */
	int membership_count;
	const char *config_path;        /* --config FILE, or NULL */
	const char *config_sha256;      /* its bytes' SHA-256, hex */
	const char *const *files;       /* the entries of dir this session writes */
	int file_count;
};

#define RUN_FILES_MAX 16
#define RUN_FILE_NAME 64

/* "files" of a record: names without '/', never "." or "..". */
struct run_files {
	int listed;                     /* 0: a record from before "files" */
	int ended;                      /* the record has an "end" */
	int count;
	char name[RUN_FILES_MAX][RUN_FILE_NAME];
};

/* How a session ended. */
struct run_end {
	const char *end_time, *outcome, *reason;
	long steps;                     /* optimizer steps from the run's start */
	int best_epoch;                 /* 1-based; 0: no validation yet */
	double best_value;              /* its validation loss; NaN: none */
};

/* dir/run.json for a new run. 0 or -1 (err). */
int run_record_create(const char *dir, const struct run_session *s, struct trainer_error *err);
/* Reads dir/run.json, appends s to its "resumes", sets "settings" to
 * s's, adds s's files to "files", drops the last session's "end" and
 * writes it back. 0 or -1 (err; the file unchanged). */
int run_record_resume(const char *dir, const struct run_session *s, struct trainer_error *err);
/* Sets dir/run.json's "end". 0 or -1 (err; the file unchanged). */
int run_record_end(const char *dir, const struct run_end *e, struct trainer_error *err);
/* Reads and checks path; settings (may be NULL) gets its "settings". */
int run_record_read(const char *path, struct run_settings *settings, struct trainer_error *err);
/* As run_record_read, of a record's text already read from path. */
int run_record_parse(const char *path, const char *text, struct run_settings *settings,
		     struct trainer_error *err);
/* Reads and checks path; files gets its "files" (and whether it has an
 * "end"). 0 or -1 (err). */
int run_record_files(const char *path, struct run_files *files, struct trainer_error *err);

#endif
