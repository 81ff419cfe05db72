/* test_metrics.c - a training run's metrics.csv and TensorBoard event
 * files, checked against TensorBoard's own reader (EventAccumulator from
 * the pinned tensorboard in build/pyenv, made by tests/pyenv.sh; the
 * reference script is tests/tb_read.py): the same series with values
 * equal to the CSV's after rounding to float32; a run SIGKILLed between
 * checkpoints and resumed has, in both, every step once (no gap, no
 * duplicate); a truncated or corrupt metrics.csv or event file is refused
 * in one line naming the file, by the readers and by --resume (which then
 * leaves the run directory byte-identical, as for a truncated run.json); progress lines in a log
 * (stderr not a terminal) start with the time, on a terminal they do not;
 * `chexnet curves` draws one run and two overlaid runs and prints the
 * settings they differ in.
 * What it does not test: run.json (test_run_record.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "cmd/curves_png.h"
#include "cmd/plot_png.h"
#include "data/codec/image_decode.h"
#include "train/metrics_csv.h"
#include "train/tb_events.h"

#define OPTS "--synthetic --synthetic-images 48 --size 32 --seed 7 --batch 8 --threads 1"

static void sh(const char *cmd, int timeout, struct test_proc *p)
{
	char full[8192];

	snprintf(full, sizeof(full), "cd '%s' && export B='%s' && %s", test_tmpdir(), test_build_dir(), cmd);
	CHECK(test_run(full, timeout, p) == 0);
}

/* build/pyenv with tensorboard; 0, or -1 after SKIP. */
static int pyenv(void)
{
	struct test_proc p;
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "'%s/tests/pyenv.sh' '%s'", test_src_dir(), test_build_dir());
	CHECK(test_run(cmd, 600, &p) == 0);
	int ok = p.exit_code == 0;
	if (!ok)
		test_skip("tests/pyenv.sh: %s", test_tail(p.err, 300));
	test_proc_free(&p);
	return ok ? 0 : -1;
}

static char *dup_line(const char *tag, long step, float v)
{
	char *s = NULL;
	if (asprintf(&s, "%s %ld %.9g", tag, step, (double)v) < 0)
		abort();
	return s;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The CSV's values as TensorBoard should report them, one "TAG STEP
 * VALUE" line each, sorted like tb_read.py's output. */
static char *expected(const struct metrics_row *rows, size_t count)
{
	static const char *const classes[] = { "Atelectasis", "Cardiomegaly", "Effusion",
		"Infiltration", "Mass", "Nodule", "Pneumonia", "Pneumothorax", "Consolidation", "Edema",
		"Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia" };
	char **lines = calloc(count * 16 + 1, sizeof(char *)), tag[96];
	size_t n = 0, len = 0;

	for (size_t i = 0; i < count; i++) {
		const struct metrics_row *r = &rows[i];
		const double train[5] = { r->loss, r->lr, r->images_per_s, r->data_wait,
					  r->allreduce_wait };
		static const char *const tt[5] = { "train/loss", "train/lr", "train/images_per_s",
						   "train/data_wait", "train/allreduce_wait" };
		for (int k = 0; r->kind == METRICS_TRAIN && k < 5; k++)
			lines[n++] = dup_line(tt[k], r->step, (float)train[k]);
		if (r->kind != METRICS_VAL)
			continue;
		lines[n++] = dup_line("val/loss", r->step, (float)r->val_loss);
		lines[n++] = dup_line("val/mean_auroc", r->step, (float)r->val_mean_auroc);
		for (int c = 0; c < 14; c++) {
			if (isnan(r->val_auroc[c]))
				continue;
			snprintf(tag, sizeof(tag), "val/auroc/%s", classes[c]);
			lines[n++] = dup_line(tag, r->step, (float)r->val_auroc[c]);
		}
	}
	qsort(lines, n, sizeof(char *), by_text);
	for (size_t i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	char *out = calloc(len + 1, 1);
	for (size_t i = 0; i < n; i++) {
		strcat(strcat(out, lines[i]), "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

/* tb_read.py's lines, sorted the same way. */
static char *tensorboard_says(const char *dir)
{
	char cmd[4400];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "\"$B\"/pyenv/bin/python '%s/tests/tb_read.py' %s | LC_ALL=C sort",
		 test_src_dir(), dir);
	sh(cmd, 120, &p);
	CHECK_MSG(p.exit_code == 0, "tb_read.py: %s", test_tail(p.err, 600));
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

static struct metrics_row *read_csv(const char *rel, size_t *count)
{
	struct metrics_row *rows = NULL;
	struct trainer_error err = { "" };
	char *path = test_path(test_tmpdir(), rel);

	CHECK_MSG(metrics_csv_read(path, &rows, count, &err) == 0, "%s", err.msg);
	free(path);
	return rows;
}

/* Both sources agree, line for line; run/ranks and run/hosts_lost (not
 * CSV columns) have a point at each session's first step: 1 rank, no
 * host lost here. */
static void same_series(const char *run)
{
	char csv[256], tb[256];
	size_t count = 0;

	snprintf(csv, sizeof(csv), "%s/metrics.csv", run);
	snprintf(tb, sizeof(tb), "%s/tb", run);
	struct metrics_row *rows = read_csv(csv, &count);
	if (!rows)
		return;
	char *want = expected(rows, count), *got = tensorboard_says(tb);
	CHECK_MSG(strstr(got, "run/ranks 0 1\n") != NULL, "no run/ranks point at step 0: %.600s", got);
	CHECK_MSG(strstr(got, "run/hosts_lost 0 0\n") != NULL, "no run/hosts_lost point at step 0: "
		  "%.600s", got);
	for (char *r; (r = strstr(got, "run/ranks ")) || (r = strstr(got, "run/hosts_lost "));)
		memmove(r, r + strcspn(r, "\n") + 1, strlen(r + strcspn(r, "\n") + 1) + 1);
	CHECK_MSG(strcmp(want, got) == 0, "CSV says:\n%.1500s\nTensorBoard says:\n%.1500s", want, got);
	free(want);
	free(got);
	free(rows);
}

static void test_tensorboard_reads_the_series_of_metrics_csv(void)
{
	struct test_proc p;
	size_t count = 0;

	if (pyenv())
		return;
	sh("\"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 2 --out run --quiet", 120, &p);
	CHECK_MSG(p.exit_code == 0, "train: %s", test_tail(p.err, 600));
	test_proc_free(&p);
	struct metrics_row *rows = read_csv("run/metrics.csv", &count);
	CHECK_INT(count, 8);   /* 2 x (3 progress rows + 1 validation) */
	if (count == 8) {
		CHECK_INT(rows[2].step, 6);
		CHECK_INT(rows[3].kind, METRICS_VAL);
		CHECK_INT(rows[3].images, 48);
		CHECK_INT(rows[7].epoch, 2);
		CHECK(rows[0].loss > 0 && rows[0].lr == 0.001);
	}
	free(rows);
	same_series("run");
}

/* Every training step 1..last exactly once; validations at each epoch end. */
static void every_step_once(const struct metrics_row *rows, size_t count, long last)
{
	long want = 1, vals = 0;

	for (size_t i = 0; i < count; i++) {
		if (rows[i].kind == METRICS_VAL) {
			CHECK_MSG(rows[i].step == 6 * (vals + 1), "validation at step %ld", rows[i].step);
			vals++;
			continue;
		}
		CHECK_MSG(rows[i].step == want, "row %zu: step %ld, expected %ld", i, rows[i].step, want);
		want = rows[i].step + 1;
	}
	CHECK_INT(want - 1, last);
	CHECK_INT(vals, last / 6);
}

static void test_killed_and_resumed_run_has_every_step_once(void)
{
	struct test_proc p;
	size_t count = 0;

	if (pyenv())
		return;
	sh("(: > err; \"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 1 --save-every 2 --out run "
	   "2> err & pid=$!; until grep -q 'epoch 2/2 step 3/' err; do sleep 0.02; done; "
	   "kill -9 $pid; wait $pid; echo killed $?)", 120, &p);
	CHECK_CONTAINS(p.out, "killed 137");
	test_proc_free(&p);
	sh("\"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 1 --save-every 2 --resume run",
	   120, &p);
	CHECK_MSG(p.exit_code == 0, "resume: %s", test_tail(p.err, 600));
	test_proc_free(&p);
	struct metrics_row *rows = read_csv("run/metrics.csv", &count);
	every_step_once(rows, count, 12);
	free(rows);
	same_series("run");   /* TensorBoard dropped the orphaned steps too */
	sh("ls run/tb | wc -l", 10, &p);
	CHECK_STR(p.out, "2\n");   /* a second event file for the resumed session */
	test_proc_free(&p);
}

/* A short write (a full disk, a node dying mid-append) leaves a torn last
 * record in metrics.csv and in the event file: --resume drops each with
 * one line and goes on, and the run's series are whole and agree. The
 * torn records are what an append cut short writes: a row's first cells
 * without its newline, and an event record's header and first data bytes
 * (its length CRC holds). */
static void test_resume_drops_torn_last_records(void)
{
	struct test_proc p;
	size_t count = 0;

	if (pyenv())
		return;
	sh("\"$B\"/chexnet train " OPTS " --epochs 1 --progress-every 1 --out run --quiet && "
	   "printf '2026-11-28T04:00:00.000Z,2,7,5' >> run/metrics.csv && "
	   "ev=$(ls run/tb/events.out.tfevents.*) && head -c 20 \"$ev\" >> \"$ev\" && "
	   "\"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 1 --resume run --quiet", 120, &p);
	CHECK_MSG(p.exit_code == 0, "resume: %s", test_tail(p.err, 900));
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'run/metrics.csv': its last row was cut short (30 bytes "
		       "after the last newline): dropped\n");
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'run/tb/events.out.tfevents.");
	CHECK_CONTAINS(p.err, "': its last record was cut short at byte ");
	test_proc_free(&p);
	struct metrics_row *rows = read_csv("run/metrics.csv", &count);
	every_step_once(rows, count, 12);
	free(rows);
	same_series("run");
	/* a torn record that is only a header's first bytes, and a file
	 * created but never written: they held nothing whole and go */
	sh("cp -r run r2 && printf 'abcdefgh' > r2/tb/events.out.tfevents.1.h.1 && "
	   ": > r2/tb/events.out.tfevents.2.h.1 && \"$B\"/chexnet train " OPTS
	   " --epochs 3 --progress-every 1 --resume r2 --quiet && ls r2/tb", 120, &p);
	CHECK_MSG(p.exit_code == 0, "resume: %s", test_tail(p.err, 900));
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'r2/tb/events.out.tfevents.1.h.1': its last record was cut "
		       "short at byte 0 of 8: dropped (the file held no whole record)\n");
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'r2/tb/events.out.tfevents.2.h.1': its last record was cut "
		       "short at byte 0 of 0: dropped (the file held no whole record)\n");
	CHECK_MSG(!strstr(p.out, ".1.h.1") && !strstr(p.out, ".2.h.1"), "a torn file is still there: %s", p.out);
	test_proc_free(&p);
}

static void refused_read(int (*reader)(const char *path, struct trainer_error *err),
			 const char *path, const char *why)
{
	struct trainer_error err = { "" };

	CHECK_MSG(reader(path, &err) == -1, "accepted: %s", why);
	CHECK_MSG(strstr(err.msg, path) != NULL, "%s: '%s'", why, err.msg);
	CHECK(!strchr(err.msg, '\n'));
}

static int csv_reader(const char *path, struct trainer_error *err)
{
	struct metrics_row *rows;
	size_t count;
	int rc = metrics_csv_read(path, &rows, &count, err);
	free(rows);
	return rc;
}

static int tb_reader(const char *path, struct trainer_error *err)
{
	return tb_events_read(path, NULL, NULL, err);
}

/* Damages: (offset from the end or the start, the bytes written there). */
static void damage(const char *src, const char *dst, long at, const char *bytes, long keep)
{
	size_t len = 0;
	char *data = test_read_file(src, &len);

	CHECK(data != NULL);
	if (!data)
		return;
	if (keep >= 0)
		len = (size_t)keep;
	if (bytes)
		memcpy(data + (at < 0 ? (long)len + at : at), bytes, strlen(bytes));
	CHECK(test_write_file(dst, data, len) == 0);
	free(data);
}

static void test_bad_metrics_and_event_files_are_refused(void)
{
	struct test_proc p;

	sh("\"$B\"/chexnet train " OPTS " --epochs 1 --progress-every 2 --out run --quiet && "
	   "cp run/tb/events.out.tfevents.* ev", 120, &p);
	CHECK_MSG(p.exit_code == 0, "train: %s", test_tail(p.err, 600));
	test_proc_free(&p);
	char *csv = test_path(test_tmpdir(), "run/metrics.csv"), *ev = test_path(test_tmpdir(), "ev");
	char *bad = test_path(test_tmpdir(), "bad");
	size_t len = 0;
	free(test_read_file(csv, &len));
	damage(csv, bad, 0, NULL, (long)len - 3);
	refused_read(csv_reader, bad, "truncated csv");
	damage(csv, bad, 0, "tim,", -1);
	refused_read(csv_reader, bad, "header");
	damage(csv, bad, -20, "x", -1);
	refused_read(csv_reader, bad, "a cell");
	damage(csv, bad, -2, ",,", -1);
	refused_read(csv_reader, bad, "cell count");
	free(test_read_file(ev, &len));
	damage(ev, bad, 0, NULL, (long)len - 2);
	refused_read(tb_reader, bad, "truncated events");
	damage(ev, bad, -6, "\x55", -1);
	refused_read(tb_reader, bad, "events data CRC");
	damage(ev, bad, 3, "\x01", -1);
	refused_read(tb_reader, bad, "events length CRC");
	damage(ev, bad, 0, NULL, 0);
	refused_read(tb_reader, bad, "empty events");
	/* --resume checks both before changing anything */
	damage(csv, csv, -20, "x", -1);
	sh("find run -type f | sort | xargs cksum > before && \"$B\"/chexnet train " OPTS
	   " --epochs 2 --resume run --quiet; echo exit $?; find run -type f | sort | xargs cksum "
	   "> after; cmp before after && echo same", 120, &p);
	CHECK_CONTAINS(p.out, "exit 1\nsame\n");
	CHECK_CONTAINS(p.err, "chexnet: metrics: 'run/metrics.csv' line ");
	test_proc_free(&p);
	sh("\"$B\"/chexnet train " OPTS " --epochs 1 --out run2 --quiet "
	   "--progress-every 2 && truncate -s 100 run2/run.json && find run2 -type f | sort | "
	   "xargs cksum > before && \"$B\"/chexnet train " OPTS " --epochs 2 --resume run2 "
	   "--quiet; echo exit $?; find run2 -type f | sort | xargs cksum > after; "
	   "cmp before after && echo same", 120, &p);
	CHECK_CONTAINS(p.out, "exit 1\nsame\n");
	CHECK_CONTAINS(p.err, "chexnet: --resume: run record: 'run2/run.json': not JSON");
	test_proc_free(&p);
	free(csv);
	free(ev);
	free(bad);
}

/* "2026-11-23T22:49:31Z " */
static int starts_with_time(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ ";

	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
			return 0;
	return 1;
}

/* Progress lines into a file start with the time; chexnet: lines keep
 * their form; on a terminal (script(1)'s pty) no time. */
static void test_progress_lines_in_a_log_start_with_the_time(void)
{
	struct test_proc p;
	int progress = 0;

	sh("\"$B\"/chexnet train " OPTS " --epochs 1 --progress-every 3 2> log >/dev/null && cat log",
	   120, &p);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	for (const char *l = p.out; *l; l = strchr(l, '\n') + 1) {
		if (strncmp(l, "chexnet: ", 9) == 0 || strncmp(l, "hvd: ", 5) == 0 || l[0] == ' ')
			continue;
		CHECK_MSG(starts_with_time(l), "line without the time: %.120s", l);
		progress += strstr(l, " step ") != NULL;
	}
	CHECK_INT(progress, 2);
	CHECK_CONTAINS(p.out, "\nchexnet: epoch 1: validation loss ");
	test_proc_free(&p);
	sh("script -qec '\"$B\"/chexnet train " OPTS " --epochs 1 --progress-every 3' /dev/null",
	   120, &p);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.out, 600));
	CHECK_CONTAINS(p.out, "\nepoch 1/1 step 3/6 loss ");
	test_proc_free(&p);
}

/* path: a CURVES_W x CURVES_H PNG that is not blank; its checksum. */
static unsigned long curves_png(const char *name)
{
	char path[4096], e[256];
	struct image img = { 0 };
	unsigned long hash = 5381;
	double sum = 0, sq = 0;

	snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), name);
	CHECK_MSG(image_decode_file(path, 0, &img, e, sizeof(e)) == 0, "%s", e);
	CHECK_INT(img.width, CURVES_W);
	CHECK_INT(img.height, CURVES_H);
	size_t n = (size_t)img.width * img.height;
	for (size_t i = 0; i < n && img.pixels; i++) {
		sum += img.pixels[i];
		sq += (double)img.pixels[i] * img.pixels[i];
		hash = hash * 33 + img.pixels[i];
	}
	double var = n ? sq / n - (sum / n) * (sum / n) : 0;
	CHECK_MSG(var > 100, "%s: pixel variance %.1f: blank?", name, var);
	image_free(&img);
	return hash;
}

/* curves of one run and of two overlaid: PNGs of the size, not blank,
 * different; the differing settings printed; a directory without
 * metrics is a clear error. */
static void test_curves_draws_runs_and_their_differences(void)
{
	struct test_proc p;

	if (!plot_png_available())
		SKIP("built without cairo");
	sh("\"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 2 --out a --quiet && "
	   "\"$B\"/chexnet train " OPTS " --epochs 2 --progress-every 2 --out b --quiet --lr 0.003 "
	   "&& \"$B\"/chexnet curves a --out one.png && \"$B\"/chexnet curves a b --out two.png",
	   240, &p);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.out, "lr_effective      0.001 | 0.003\n");
	CHECK(!strstr(p.out, "size "));   /* only what differs */
	CHECK_CONTAINS(p.err, "chexnet: curves: 'two.png' written (2 runs)");
	test_proc_free(&p);
	CHECK(curves_png("one.png") != curves_png("two.png"));
	sh("mkdir -p empty && \"$B\"/chexnet curves empty --out x.png; echo exit $?", 30, &p);
	CHECK_CONTAINS(p.out, "exit 1");
	CHECK_CONTAINS(p.err, "chexnet: curves: 'empty': no metrics.csv");
	test_proc_free(&p);
	sh("\"$B\"/chexnet curves a --out /nonexistent/x.png; echo exit $?", 30, &p);
	CHECK_CONTAINS(p.out, "exit 1");
	CHECK_CONTAINS(p.err, "chexnet: curves: --out: '/nonexistent/x.png': ");
	test_proc_free(&p);
}

const struct test_case metrics_tests[] = {
	{ "tensorboard_reads_the_series_of_metrics_csv",
	  test_tensorboard_reads_the_series_of_metrics_csv },
	{ "resume_drops_torn_last_records", test_resume_drops_torn_last_records },
	{ "killed_and_resumed_run_has_every_step_once",
	  test_killed_and_resumed_run_has_every_step_once },
	{ "bad_metrics_and_event_files_are_refused", test_bad_metrics_and_event_files_are_refused },
	{ "curves_draws_runs_and_their_differences", test_curves_draws_runs_and_their_differences },
	{ "progress_lines_in_a_log_start_with_the_time",
	  test_progress_lines_in_a_log_start_with_the_time },
	{ 0 }
};
