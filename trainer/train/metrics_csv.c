/* train/metrics_csv.c - metrics.csv written and read (metrics_csv.h).
 * What it does not do: open the file for writing or decide the rows.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/classes.h"
#include "base/regular_file.h"
#include "train/metrics_csv.h"

static const char *const fixed[11] = {
	"time", "epoch", "step", "images", "loss", "lr", "images_per_s", "data_wait",
	"allreduce_wait", "val_loss", "val_mean_auroc",
};

void metrics_csv_header(FILE *f)
{
	for (int i = 0; i < 11; i++)
		fprintf(f, "%s%s", i ? "," : "", fixed[i]);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		fprintf(f, ",val_auroc_%s", data_class_names[c]);
	fputc('\n', f);
}

static void cell(char *out, double v)
{
	if (isnan(v))
		out[0] = '\0';
	else
		snprintf(out, 32, "%.9g", v);
}

void metrics_csv_row(FILE *f, const struct metrics_row *r, char cells[][32])
{
	const double v[8] = { r->loss, r->lr, r->images_per_s, r->data_wait, r->allreduce_wait,
			      r->val_loss, r->val_mean_auroc };

	snprintf(cells[0], 32, "%s", r->time);
	snprintf(cells[1], 32, "%d", r->epoch);
	snprintf(cells[2], 32, "%ld", r->step);
	snprintf(cells[3], 32, "%ld", r->images);
	for (int i = 0; i < 7; i++)
		cell(cells[4 + i], v[i]);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		cell(cells[11 + c], r->val_auroc[c]);
	for (int i = 0; i < METRICS_COLUMNS; i++)
		fprintf(f, "%s%s", i ? "," : "", cells[i]);
	fputc('\n', f);
}

/* "2026-11-23T22:49:31.123Z" */
static int is_time(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";

	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return 0;
	return 1;
}

/* A whole finite number, or NAN for an empty cell; -1 for anything else. */
static int number(const char *s, double *out)
{
	char *end;

	if (!*s) {
		*out = NAN;
		return 0;
	}
	if (!(isdigit((unsigned char)s[0]) || s[0] == '-'))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return *end || errno || !isfinite(*out) ? -1 : 0;
}

static int whole(const char *s, long lo, long *out)
{
	double d;

	if (number(s, &d) || isnan(d) || d != floor(d) || d < lo || d > 1e15)
		return -1;
	*out = (long)d;
	return 0;
}

/* Splits line (NUL-terminated, no newline) at commas into cells. */
static int split(char *line, char **cells)
{
	int n = 0;

	for (char *p = line;; p++) {
		if (n == METRICS_COLUMNS)
			return -1;
		cells[n++] = p;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p = '\0';
	}
}

/* Cells 4..24 into r; the kind from which are filled. 0 or a message. */
static const char *values(char **cells, struct metrics_row *r)
{
	double v[METRICS_COLUMNS];
	int train = 0, val = 0;

	for (int i = 4; i < METRICS_COLUMNS; i++) {
		if (number(cells[i], &v[i]))
			return "not a number";
		if (!isnan(v[i]))
			*(i < 9 ? &train : &val) += 1;
	}
	if (train && val)
		return "both training and validation values";
	if (train ? train != 5 : isnan(v[9]))
		return train ? "a training value missing" : "neither training nor validation values";
	r->kind = train ? METRICS_TRAIN : METRICS_VAL;
	r->loss = v[4], r->lr = v[5], r->images_per_s = v[6];
	r->data_wait = v[7], r->allreduce_wait = v[8];
	r->val_loss = v[9], r->val_mean_auroc = v[10];
	memcpy(r->val_auroc, v + 11, sizeof(r->val_auroc));
	return NULL;
}

static const char *parse_row(char *line, struct metrics_row *r, long prev_step)
{
	char *cells[METRICS_COLUMNS];
	long epoch;

	if (split(line, cells) != METRICS_COLUMNS)
		return "not 25 cells";
	if (!is_time(cells[0]))
		return "time: not YYYY-MM-DDTHH:MM:SS.mmmZ";
	if (whole(cells[1], 1, &epoch) || epoch > 1000000 || whole(cells[2], 0, &r->step) ||
	    whole(cells[3], 0, &r->images))
		return "epoch, step or images: not a whole number in range";
	if (r->step < prev_step)
		return "step smaller than the row before";
	snprintf(r->time, sizeof(r->time), "%s", cells[0]);
	r->epoch = (int)epoch;
	return values(cells, r);
}

static char *slurp(const char *path, size_t *len, struct trainer_error *err)
{
	char why[128];
	FILE *f = regular_fopen(path, 0, why, sizeof(why));
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		trainer_error_set(err, "metrics: '%s': %s", path, why);
		return NULL;
	}
	for (;;) {
		if (n + 65536 + 1 > cap) {
			char *more = cap < (size_t)METRICS_MAX_BYTES ? realloc(buf, cap = cap * 2 + 65536 * 2)
								     : NULL;
			if (!more) {
				trainer_error_set(err, "metrics: '%s': %s", path,
						  buf ? "larger than 256 MiB or out of memory" : "out of memory");
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
		}
		size_t got = fread(buf + n, 1, 65536, f);
		n += got;
		if (got < 65536)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		trainer_error_set(err, "metrics: '%s': read error", path);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int parse_all(char *text, size_t len, const char *path, struct metrics_row *rows,
		     size_t *count, struct trainer_error *err)
{
	char *line = text, *nl;
	long number = 1;

	if (memchr(text, '\0', len))
		return trainer_error_set(err, "metrics: '%s': not text (a NUL byte)", path);
	if (len == 0 || text[len - 1] != '\n')
		return trainer_error_set(err, "metrics: '%s': truncated (no newline at the end)", path);
	nl = strchr(line, '\n');
	*nl = '\0';
	char want[1024];
	FILE *h = fmemopen(want, sizeof(want), "w");
	if (!h)
		return trainer_error_set(err, "metrics: out of memory");
	metrics_csv_header(h);
	fclose(h);
	want[strcspn(want, "\n")] = '\0';
	if (strcmp(line, want))
		return trainer_error_set(err, "metrics: '%s' line 1: not the header '%.40s...'", path,
					 want);
	for (line = nl + 1; *line; line = nl + 1) {
		number++;
		nl = strchr(line, '\n');
		*nl = '\0';
		const char *why = parse_row(line, &rows[*count], *count ? rows[*count - 1].step : 0);
		if (why)
			return trainer_error_set(err, "metrics: '%s' line %ld: %s", path, number, why);
		(*count)++;
	}
	return 0;
}

int metrics_csv_read(const char *path, struct metrics_row **rows, size_t *count,
		     struct trainer_error *err)
{
	return metrics_csv_read_torn(path, rows, count, NULL, err);
}

int metrics_csv_read_torn(const char *path, struct metrics_row **rows, size_t *count,
			  size_t *torn_bytes, struct trainer_error *err)
{
	size_t len = 0, lines = 0;
	char *text = slurp(path, &len, err);

	*rows = NULL;
	*count = 0;
	if (!text)
		return -1;
	if (torn_bytes) {
		size_t whole = len;
		while (whole > 0 && text[whole - 1] != '\n')
			whole--;
		*torn_bytes = len - whole;
		len = whole;
		text[len] = '\0';
	}
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	*rows = calloc(lines + 1, sizeof(**rows));
	int rc = !*rows ? trainer_error_set(err, "metrics: '%s': out of memory", path)
	       : len == 0 && torn_bytes ? 0 : parse_all(text, len, path, *rows, count, err);
	free(text);
	if (rc) {
		free(*rows);
		*rows = NULL;
		*count = 0;
	}
	return rc;
}
