/* loop/run_metrics.c - metrics.csv rows and TensorBoard events of a run
 * (run_metrics.h). What it does not do: compute the values.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/classes.h"
#include "base/fence.h"
#include "base/whole_file.h"
#include "loop/run_metrics.h"
#include "train/metrics_csv.h"
#include "train/tb_events.h"

static void fail(const char *msg)
{
	fprintf(stderr, "chexnet: %s\n", msg);
}

/* The torn last record of the event file path (tear) cut off: the file
 * is truncated to its whole records, or removed when it has none. */
static int drop_torn_events(const char *path, const struct tb_tear *tear)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	int rc = fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (off_t)tear->size != sb.st_size ||
		 (tear->complete ? ftruncate(fd, (off_t)tear->complete) : unlink(path));

	if (fd >= 0)
		close(fd);
	if (rc) {
		fprintf(stderr, "chexnet: --resume: '%s': cannot drop its torn last record: %s\n", path,
			errno ? strerror(errno) : "it changed while being read");
		return -1;
	}
	fprintf(stderr, "chexnet: --resume: '%s': its last record was cut short at byte %zu of %zu: "
		"dropped%s\n", path, tear->complete, tear->size, tear->complete ? "" : " (the file held no whole record)");
	return 0;
}

/* Every event file in dir reads back, but for a torn last record, which
 * drop removes (else it is only checked); 0, or -1 (printed). */
static int check_events(const char *dir, int drop)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct trainer_error err = { "" };
	int rc = 0;

	while (d && rc == 0 && (de = readdir(d))) {
		char path[4200];
		struct tb_tear tear;
		if (strncmp(de->d_name, "events.out.tfevents.", 20) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		errno = 0;
		if ((rc = tb_events_read_torn(path, NULL, NULL, &tear, &err)))
			fail(err.msg);
		else if (drop && tear.torn)
			rc = drop_torn_events(path, &tear);
	}
	if (d)
		closedir(d);
	return rc;
}

/* rows[0..keep) to path, through a temporary file and rename. */
static int rewrite_csv(const char *path, const struct metrics_row *rows, size_t keep)
{
	char tmp[4400], cells[METRICS_COLUMNS][32];
	FILE *f;

	if (!(f = whole_file_stream(path, tmp, sizeof(tmp)))) {
		fprintf(stderr, "chexnet: metrics: '%s': %s\n", path, strerror(errno));
		return -1;
	}
	metrics_csv_header(f);
	for (size_t i = 0; i < keep; i++)
		metrics_csv_row(f, &rows[i], cells);
	if (whole_file_stream_commit(f, tmp, path)) {
		fprintf(stderr, "chexnet: metrics: '%s': %s\n", path, whole_file_why(errno));
		return -1;
	}
	return 0;
}

/* The epoch of the lowest validation loss among rows[0..n), or 0. */
static int best_epoch(const struct metrics_row *rows, size_t n)
{
	double best = INFINITY;
	int epoch = 0;

	for (size_t i = 0; i < n; i++)
		if (rows[i].kind == METRICS_VAL && rows[i].val_loss < best) {
			best = rows[i].val_loss;
			epoch = rows[i].epoch;
		}
	return epoch;
}

/* --resume: metrics.csv up to resume_step, once it and tb/'s event files
 * were checked; a torn last record of either is dropped and said. */
static int resume_csv(struct run_metrics *m, const char *path, const char *tb, long resume_step)
{
	struct metrics_row *rows;
	struct trainer_error err = { "" };
	size_t count, keep = 0;

	if (access(path, F_OK) != 0)
		return check_events(tb, 1) || rewrite_csv(path, NULL, 0);
	size_t torn = 0;
	if (metrics_csv_read_torn(path, &rows, &count, &torn, &err)) {
		fail(err.msg);
		return -1;
	}
	while (keep < count && rows[keep].step <= resume_step)
		keep++;
	m->best_epoch = best_epoch(rows, keep);
	int rc = check_events(tb, 1) || rewrite_csv(path, rows, keep);
	free(rows);
	if (rc == 0 && torn)
		fprintf(stderr, "chexnet: --resume: '%s': its last row was cut short (%zu bytes after the "
			"last newline): dropped\n", path, torn);
	return rc;
}

int run_metrics_check(const char *out, long resume_step)
{
	char csv[4200], tb[4200];
	struct metrics_row *rows = NULL;
	struct trainer_error err = { "" };
	size_t count = 0, torn = 0;

	if (resume_step < 0)
		return 0;
	snprintf(csv, sizeof(csv), "%s/" METRICS_FILE, out);
	snprintf(tb, sizeof(tb), "%s/tb", out);
	if (check_events(tb, 0))
		return -1;
	if (access(csv, F_OK) == 0 && metrics_csv_read_torn(csv, &rows, &count, &torn, &err)) {
		fail(err.msg);
		return -1;
	}
	free(rows);
	return 0;
}

void run_metrics_fence(void)
{
	static const char *const appended[] = { METRICS_FILE, "tb" };
	fence_appended(appended, 2);
}

int run_metrics_open(struct run_metrics *m, const char *out, long global_batch,
		     long resume_step, int ranks, int hosts_lost)
{
	char csv[4200], tb[4200], path[4400], host[64] = "";
	struct trainer_error err = { "" };

	memset(m, 0, sizeof(*m));
	run_metrics_fence();
	m->global_batch = global_batch;
	snprintf(m->out, sizeof(m->out), "%s", out);
	snprintf(csv, sizeof(csv), "%s/" METRICS_FILE, out);
	snprintf(tb, sizeof(tb), "%s/tb", out);
	if (resume_step >= 0 && (check_events(tb, 0) || resume_csv(m, csv, tb, resume_step)))
		return -1;
	if (resume_step < 0 && rewrite_csv(csv, NULL, 0))
		return -1;
	if (!(m->csv = fopen(csv, "a"))) {
		fprintf(stderr, "chexnet: metrics: '%s': %s\n", csv, strerror(errno));
		return -1;
	}
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, "./")] = '\0';
	m->tb = tb_events_create(tb, host[0] ? host : "host", path, sizeof(path), &err);
	struct tb_event start = { .step = resume_step + 1, .session_start = 1 };
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	start.wall_time = ts.tv_sec + ts.tv_nsec * 1e-9;
	struct tb_event size = { .wall_time = start.wall_time, .step = resume_step + 1, .count = 2,
				 .values = { { "run/ranks", (float)ranks },
					     { "run/hosts_lost", (float)hosts_lost } } };
	if (!m->tb || (resume_step >= 0 && tb_events_write(m->tb, &start, &err)) ||
	    tb_events_write(m->tb, &size, &err)) {
		fail(err.msg);
		run_metrics_close(m);
		return -1;
	}
	return 0;
}

/* Row r to the CSV and its values (cells from `first`, tagged) as one event. */
static int emit(struct run_metrics *m, struct metrics_row *r, const char *const *tags, int first,
		int count)
{
	char cells[METRICS_COLUMNS][32];
	struct trainer_error err = { "" };
	struct timespec ts;
	struct tm tm;
	char stamp[24];

	if (fence_stale()) {   /* a newer generation owns metrics.csv and tb/ */
		fprintf(stderr, "chexnet: metrics: '%s': %s\n", m->out, whole_file_why(ESTALE));
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", gmtime_r(&ts.tv_sec, &tm));
	snprintf(r->time, sizeof(r->time), "%s.%03ldZ", stamp, ts.tv_nsec / 1000000);
	r->images = r->step * m->global_batch;
	metrics_csv_row(m->csv, r, cells);
	if (fflush(m->csv)) {
		fprintf(stderr, "chexnet: metrics: '" METRICS_FILE "': %s\n", strerror(errno));
		return -1;
	}
	struct tb_event e = { .wall_time = ts.tv_sec + ts.tv_nsec * 1e-9, .step = r->step };
	for (int i = 0; i < count; i++) {
		if (!cells[first + i][0])
			continue;   /* no value (an AUROC without positives or negatives) */
		snprintf(e.values[e.count].tag, TB_TAG_MAX, "%s", tags[i]);
		e.values[e.count++].value = strtof(cells[first + i], NULL);
	}
	if (tb_events_write(m->tb, &e, &err)) {
		fail(err.msg);
		return -1;
	}
	return 0;
}

int run_metrics_train(struct run_metrics *m, int epoch, long step, double loss, double lr,
		      double images_per_s, double data_wait, double allreduce_wait)
{
	static const char *const tags[] = { "train/loss", "train/lr", "train/images_per_s",
					     "train/data_wait", "train/allreduce_wait" };
	struct metrics_row r = {
		.kind = METRICS_TRAIN, .epoch = epoch + 1, .step = step, .loss = loss, .lr = lr,
		.images_per_s = images_per_s, .data_wait = data_wait,
		.allreduce_wait = allreduce_wait, .val_loss = NAN, .val_mean_auroc = NAN,
	};

	if (!m->csv)
		return 0;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		r.val_auroc[c] = NAN;
	return emit(m, &r, tags, 4, 5);
}

int run_metrics_val(struct run_metrics *m, int epoch, long step, const struct evaluation *ev)
{
	static char names[CHEXNET_CLASSES][TB_TAG_MAX];
	const char *tags[2 + CHEXNET_CLASSES] = { "val/loss", "val/mean_auroc" };
	struct metrics_row r = {
		.kind = METRICS_VAL, .epoch = epoch + 1, .step = step, .loss = NAN, .lr = NAN,
		.images_per_s = NAN, .data_wait = NAN, .allreduce_wait = NAN,
		.val_loss = ev->loss, .val_mean_auroc = ev->mean_auroc,
	};

	if (!m->csv)
		return 0;
	for (int c = 0; c < CHEXNET_CLASSES; c++) {
		snprintf(names[c], sizeof(names[c]), "val/auroc/%s", data_class_names[c]);
		tags[2 + c] = names[c];
		r.val_auroc[c] = ev->why[c] == AUROC_DEFINED ? ev->auroc[c] : NAN;
	}
	return emit(m, &r, tags, 9, 2 + CHEXNET_CLASSES);
}

void run_metrics_close(struct run_metrics *m)
{
	if (m->csv)
		fclose(m->csv);
	if (m->tb)
		fclose(m->tb);
	m->csv = m->tb = NULL;
}
