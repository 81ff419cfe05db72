/* fuzz_records.c - libFuzzer target for the readers of a run directory's
 * own files: run.json (train/run_record.c), metrics.csv
 * (train/metrics_csv.c), TensorBoard event files (train/tb_events.c) and
 * the survivors' summary after a lost peer (recover/survivors.c).
 * The first input byte picks the reader, the rest is the file. Each must
 * accept it or refuse it with one line naming the file; what it accepts
 * must hold up: settings that are known keys, metrics rows of one kind
 * with non-decreasing steps, events with at most TB_VALUES_MAX
 * NUL-terminated tags, a summary's members ascending and in range. The readers --resume uses (a torn last record
 * left out) accept whatever the strict ones accept, whole. Seeds: a valid file of each kind (written by the
 * writers themselves).
 * What it does not do: run a training.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "fuzz_files.h"
#include "recover/survivors.h"
#include "train/metrics_csv.h"
#include "train/run_record.h"
#include "train/tb_events.h"

static void one_line(const struct trainer_error *err, const char *path)
{
	if (!err->msg[0] || strchr(err->msg, '\n') || !strstr(err->msg, path))
		abort();
}

static void run_json(const char *path)
{
	struct run_settings s;
	struct trainer_error err = { "" };

	if (run_record_read(path, &s, &err)) {
		one_line(&err, path);
		return;
	}
	for (int i = 0; i < s.count; i++)
		if (!run_setting_known(s.items[i].key, NULL, NULL, NULL) ||
		    !memchr(s.items[i].value, 0, sizeof(s.items[i].value)))
			abort();
}

static void check_rows(const struct metrics_row *rows, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if ((i && rows[i].step < rows[i - 1].step) ||
		    (rows[i].kind == METRICS_TRAIN ? isnan(rows[i].loss) : isnan(rows[i].val_loss)))
			abort();
}

/* The strict reader, then the one --resume uses (a torn last row left
 * out): what the strict one accepts the other accepts whole. */
static void metrics(const char *path, size_t size)
{
	struct metrics_row *rows;
	size_t count, torn_count, torn = 0;
	struct trainer_error err = { "" };

	int strict = metrics_csv_read(path, &rows, &count, &err);
	if (strict)
		one_line(&err, path);
	else
		check_rows(rows, count);
	free(rows);
	err.msg[0] = '\0';
	if (metrics_csv_read_torn(path, &rows, &torn_count, &torn, &err)) {
		one_line(&err, path);
		if (!strict)
			abort();
		return;
	}
	check_rows(rows, torn_count);
	if (torn > size || (!strict && (torn || torn_count != count)))
		abort();
	free(rows);
}

static int check_event(const struct tb_event *e, void *user)
{
	(void)user;
	if (e->count < 0 || e->count > TB_VALUES_MAX)
		abort();
	for (int i = 0; i < e->count; i++)
		if (!memchr(e->values[i].tag, 0, TB_TAG_MAX))
			abort();
	return 0;
}

/* Strict, then as --resume reads (a torn last record left out). */
static void events(const char *path, size_t size)
{
	struct trainer_error err = { "" };
	struct tb_tear tear;

	int strict = tb_events_read(path, check_event, NULL, &err);
	if (strict)
		one_line(&err, path);
	err.msg[0] = '\0';
	if (tb_events_read_torn(path, check_event, NULL, &tear, &err)) {
		one_line(&err, path);
		if (!strict)
			abort();
		return;
	}
	if (tear.size != size || tear.complete > size || (tear.torn ? tear.complete == size && size
		: tear.complete != size) || (!strict && tear.torn))
		abort();
}

/* OUT/.survivors/saved: refused (its own line), or members that hold. */
static void survivors_summary(void)
{
	struct survivors_saved s;
	if (survivors_read_saved(fuzz_dir(), &s) != 1)
		return;
	if (s.member_count < 1 || s.member_count > SURVIVORS_MAX || s.members[0] < 0 ||
	    !memchr(s.who, 0, sizeof(s.who)) || !memchr(s.member_hosts, 0, sizeof(s.member_hosts)) ||
	    (strcmp(s.next, "in-process") && strcmp(s.next, "relaunch")))
		abort();
	for (int i = 1; i < s.member_count; i++)
		if (s.members[i] <= s.members[i - 1])
			abort();
}

static const char *summary_path(void)
{
	static char dir[1100];
	snprintf(dir, sizeof(dir), "%s/" SURVIVORS_DIR, fuzz_dir());
	mkdir(dir, 0755);
	return SURVIVORS_DIR "/saved";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		run_json(fuzz_write("run.json", data + 1, size - 1));
		break;
	case 1:
		metrics(fuzz_write("metrics.csv", data + 1, size - 1), size - 1);
		break;
	case 2:
		events(fuzz_write("events.out.tfevents.1.h.1", data + 1, size - 1), size - 1);
		break;
	default:
		fuzz_write(summary_path(), data + 1, size - 1);
		survivors_summary();
	}
	return 0;
}

/* dir/name <- kind byte + the bytes of file. */
static void seed_from(const char *dir, const char *name, uint8_t kind, const char *file)
{
	FILE *f = fopen(file, "rb");
	static uint8_t buf[1 << 16];
	size_t n = f ? fread(buf + 1, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[0] = kind;
	fuzz_seed(dir, name, buf, n + 1);
}

static void seed_run_json(const char *dir)
{
	struct run_settings s = { 0 };
	struct trainer_error err = { "" };
	char *argv[] = { "chexnet", "train", "--size", "64" };
	char *hosts[] = { "n1", "n2" };
	struct run_record_pair versions[] = { { "chexnet", "0.1.0" } };
	struct run_change change = { "epochs", "1", "2", "--epochs", RUN_SETTING_FREE };
	struct run_session ses = { .start_time = "2026-01-01T00:00:00Z", .argc = 4, .argv = argv,
		.settings = &s, .versions = versions, .version_count = 1, .hosts = hosts,
		.host_count = 2, .epoch = 1, .step = 3, .changes = &change, .change_count = 1 };
	char path[1024];

	run_settings_set(&s, "model", "densenet121", &err);
	run_settings_set_long(&s, "size", 64, &err);
	run_settings_set_double(&s, "lr_effective", 0.002, &err);
	run_record_create(fuzz_dir(), &ses, &err);
	run_record_resume(fuzz_dir(), &ses, &err);
	snprintf(path, sizeof(path), "%s/run.json", fuzz_dir());
	seed_from(dir, "seed-run-json", 0, path);
}

static void seed_metrics(const char *dir)
{
	char path[1024], cells[METRICS_COLUMNS][32];
	struct metrics_row r = { .time = "2026-01-01T00:00:00.000Z", .kind = METRICS_TRAIN,
		.epoch = 1, .step = 2, .images = 32, .loss = 0.25, .lr = 1e-3, .images_per_s = 90,
		.data_wait = 0.01, .allreduce_wait = 0.02, .val_loss = NAN, .val_mean_auroc = NAN };
	snprintf(path, sizeof(path), "%s/seed-metrics.csv", fuzz_dir());
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		r.val_auroc[c] = NAN;
	metrics_csv_header(f);
	metrics_csv_row(f, &r, cells);
	r.kind = METRICS_VAL;
	r.loss = r.lr = r.images_per_s = r.data_wait = r.allreduce_wait = NAN;
	r.val_loss = 0.3, r.val_mean_auroc = 0.7;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		r.val_auroc[c] = c == 3 ? NAN : 0.5 + c * 0.01;
	metrics_csv_row(f, &r, cells);
	fclose(f);
	seed_from(dir, "seed-metrics", 1, path);
}

static void seed_events(const char *dir)
{
	char path[1024];
	struct trainer_error err = { "" };
	FILE *f = tb_events_create(fuzz_dir(), "h", path, sizeof(path), &err);
	struct tb_event e = { .wall_time = 1.5, .step = 3, .count = 2,
			      .values = { { "train/loss", 0.25f }, { "train/lr", 1e-3f } } };
	struct tb_event start = { .wall_time = 2, .step = 4, .session_start = 1 };

	if (!f)
		return;
	tb_events_write(f, &e, &err);
	tb_events_write(f, &start, &err);
	fclose(f);
	seed_from(dir, "seed-events", 2, path);
}

static void seed_summary(const char *dir)
{
	char path[1100];
	survivors_mark_saved(fuzz_dir(), "time=2026-01-01T00:00:00Z hosts=n2 epoch=0 step=3 "
			     "writer=0 next=in-process members=0,1,5 member_hosts=n1,n1,n3 joiners=2 "
			     "join_nodes=1 who=ranks 2,3 (host n2)");
	snprintf(path, sizeof(path), "%s/" SURVIVORS_DIR "/saved", fuzz_dir());
	seed_from(dir, "seed-summary", 3, path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);

	if (!dir)
		return 0;
	seed_run_json(dir);
	seed_metrics(dir);
	seed_events(dir);
	seed_summary(dir);
	return 0;
}
