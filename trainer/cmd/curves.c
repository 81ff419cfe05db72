/* cmd/curves.c - `chexnet curves RUN [RUN...] [--out FILE.png]`: the
 * training curves of one or more runs (each RUN a directory `chexnet
 * train --out` wrote: its metrics.csv, and its run.json when there) drawn
 * into one PNG (curves_png.h; default curves.png), and on stdout the
 * settings in which the runs differ, one line each. A RUN without a
 * readable metrics.csv, or with a run.json that does not read back, is an
 * error naming it.
 * What it does not do: draw (curves_png.c) or parse the files (train/).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/option_table.h"
#include "cmd/curves.h"
#include "cmd/curves_png.h"
#include "train/run_record.h"

struct curves_options {
	const char *out;
};

static const struct setting curves_rows[] = {
	{ "--out", .type = SETTING_TEXT, .commands = 1, .fallback = "curves.png",
	  .offset = offsetof(struct curves_options, out),
	  .help = "the PNG: loss, mean validation AUROC and learning rate against the optimizer "
		  "step of each RUN" },
	{ "--help", .type = SETTING_HELP, .commands = 1, .help = "this help" },
};

const struct option_table curves_options = {
	.rows = curves_rows, .count = sizeof(curves_rows) / sizeof(curves_rows[0]),
};

#define OPERANDS " RUN...   (each a chexnet train --out directory)"

/* RUN's rows and settings (count 0 without run.json). 0, or 1 (printed). */
static int load(const char *dir, struct curves_run *run, struct run_settings *s)
{
	char path[4200];
	struct trainer_error err = { "" };
	struct metrics_row *rows;
	size_t count;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/" METRICS_FILE, dir);
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "chexnet: curves: '%s': no " METRICS_FILE " (not a directory chexnet "
			"train --out wrote)\n", dir);
		return 1;
	}
	if (metrics_csv_read(path, &rows, &count, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	if (count == 0) {
		fprintf(stderr, "chexnet: curves: '%s': no rows yet\n", path);
		free(rows);
		return 1;
	}
	run->name = dir;
	run->rows = rows;
	run->count = count;
	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, dir);
	if (access(path, F_OK) == 0 && run_record_read(path, s, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	return 0;
}

/* "KEY  v1 | v2 | ..." for every setting not the same in every run. */
static void print_differences(const struct run_settings *s, int count)
{
	int printed = 0;

	for (int r = 0; r < count; r++)
		for (int i = 0; i < s[r].count; i++) {
			const char *key = s[r].items[i].key;
			int seen = 0, differ = 0;
			for (int q = 0; q < r && !seen; q++)
				seen = run_settings_get(&s[q], key) != NULL;
			for (int q = 0; q < count; q++) {
				const char *v = run_settings_get(&s[q], key);
				differ |= !v || strcmp(v, s[r].items[i].value) != 0;
			}
			if (seen || !differ)
				continue;
			printf("%-18s", key);
			for (int q = 0; q < count; q++) {
				const char *v = run_settings_get(&s[q], key);
				printf("%s%s", q ? " | " : "", v ? v : "(none)");
			}
			printf("\n");
			printed++;
		}
	if (count > 1 && !printed)
		printf("the runs' recorded settings are the same\n");
}

int run_curves(int argc, char **argv)
{
	static struct run_settings settings[CURVES_RUNS_MAX];
	struct curves_run runs[CURVES_RUNS_MAX];
	struct curves_options o = { 0 };
	char **names = calloc((size_t)argc, sizeof(char *));
	int count = 0, named = 0, status = 0;
	struct trainer_error err = { "" };

	if (!names || option_defaults(&curves_options, 1, &o, &err)) {
		fprintf(stderr, "chexnet: curves: %s\n", names ? err.msg : "out of memory");
		free(names);
		return 2;
	}
	int rc = option_parse(&curves_options, 1, OPERANDS, argc, argv, &o, names, &named);
	if (rc || named == 0 || named > CURVES_RUNS_MAX) {
		if (rc == 0 && named == 0)
			fprintf(stderr, "chexnet: curves: no RUN given (chexnet curves --help)\n");
		else if (rc == 0)
			fprintf(stderr, "chexnet: curves: %d runs: at most %d in one picture\n", named,
				CURVES_RUNS_MAX);
		free(names);
		return rc > 0 ? 0 : 2;
	}
	for (int i = 0; i < named && !status; i++)
		if ((status = load(names[i], &runs[count], &settings[count])) == 0)
			count++;
	free(names);
	if (!status && curves_png_write(o.out, runs, count, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		status = 1;
	}
	if (!status) {
		print_differences(settings, count);
		fprintf(stderr, "chexnet: curves: '%s' written (%d run%s)\n", o.out, count,
			count == 1 ? "" : "s");
	}
	for (int r = 0; r < count; r++)
		free((void *)runs[r].rows);
	return status;
}
