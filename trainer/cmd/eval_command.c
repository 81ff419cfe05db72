/* cmd/eval_command.c - eval's options, thresholds chosen or read, and the
 * report and plots of a finished pass. What it does not do: run the model.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/whole_file.h"
#include "cmd/eval_command.h"
#include "loop/thresholds.h"
#include "cmd/eval_report.h"
#include "model/loss.h"
#include "cmd/out_dir.h"
#include "cmd/plot_png.h"
#include "data/sets/fingerprint.h"

/* --data DIR: a directory holding a data set's index or label files,
 * named before start-up. */
static int data_check(const struct settings *o)
{
	struct stat sb;
	DIR *d;
	struct dirent *e;
	int entries = 0;

	if (!o->train.data.dir)
		return 0;
	int bad = stat(o->train.data.dir, &sb) != 0 ? errno : 0;
	if (bad || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "chexnet: %s: --data '%s': %s\n", o->command, o->train.data.dir,
			bad == ENOENT ? "no such directory" : bad ? strerror(bad) : "not a directory");
		return 2;
	}
	if ((d = opendir(o->train.data.dir))) {
		while (!entries && (e = readdir(d)))
			entries = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
		closedir(d);
	}
	if (!entries || !data_has_record_file(o->train.data.dir)) {
		fprintf(stderr, "chexnet: %s: --data '%s': %s (a pack, or a data set's folder: "
			"trainer/DATA.md)\n", o->command, o->train.data.dir,
			entries ? "no index.txt, label or list file" : "empty");
		return 2;
	}
	return 0;
}

int eval_options_check(const struct settings *o)
{
	if (data_check(o))
		return 2;
	if (o->choose_thresholds && strcmp(o->split, "val")) {
		fprintf(stderr, "chexnet: eval: --choose-thresholds: '--split %s': thresholds are "
			"chosen on the validation split only (choosing on test and reporting on test "
			"leaks): use --split val\n", o->split);
		return 2;
	}
	if (o->train.sensitivity > 0 && o->train.specificity > 0) {
		fprintf(stderr, "chexnet: --sensitivity %g --specificity %g: give one threshold rule\n",
			o->train.sensitivity, o->train.specificity);
		return 2;
	}
	if ((o->train.sensitivity > 0 || o->train.specificity > 0) && !o->choose_thresholds &&
	    strcmp(o->command, "eval") == 0) {
		fprintf(stderr, "chexnet: eval: --%s: only with --choose-thresholds (the stored "
			"thresholds are used otherwise)\n", o->train.sensitivity > 0 ? "sensitivity" : "specificity");
		return 2;
	}
	if (o->plots && !plot_png_available()) {
		fprintf(stderr, "chexnet: --plots: '%s': this chexnet was built without cairo "
			"(libcairo2-dev): run make deps and make\n", o->plots);
		return 2;
	}
	return o->plots && out_dir_writable("--plots", o->plots) ? 2 : 0;
}

/* Chosen now (--choose-thresholds), read from the checkpoint, or none:
 * 1 have, 0 none, -1 error (printed). */
static int get_thresholds(const struct settings *o, const char *model,
			  const struct evaluation *ev, struct thresholds *t)
{
	struct trainer_error err = { "" };
	if (o->choose_thresholds) {
		struct threshold_choice rule = eval_threshold_rule(o->train.sensitivity, o->train.specificity);
		if (eval_store_thresholds(o->checkpoint, model, o->split, &rule, ev, t))
			return -1;
		char path[4096];
		thresholds_path(o->checkpoint, path, sizeof(path));
		fprintf(stderr, "chexnet: eval: thresholds (%s) chosen on the val split, written to '%s'\n",
			threshold_rule_name(rule.rule), path);
		return 1;
	}
	int rc = thresholds_load(o->checkpoint, model, t, &err);
	if (rc < 0)
		fprintf(stderr, "chexnet: %s\n", err.msg);
	if (rc == 1 && o->train.progress != PROGRESS_JSON)
		fprintf(stderr, "chexnet: eval: no thresholds stored with '%s' (chexnet eval --split val "
			"--choose-thresholds): no operating points\n", o->checkpoint);
	return rc < 0 ? -1 : rc == 0;
}

int eval_present(const struct settings *o, const char *model, const struct evaluation *ev)
{
	struct thresholds t;
	struct eval_report r;
	struct trainer_error err = { "" };
	int have = get_thresholds(o, model, ev, &t);

	if (have < 0)
		return 1;
	if (eval_report_compute(ev, (int)o->train.bootstrap, o->train.session.seed, have ? &t : NULL, &r, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		eval_report_free(&r);
		return 1;
	}
	if (o->train.progress == PROGRESS_JSON) {
		eval_report_json(stdout, &r, o->checkpoint, o->split, ev->loss);
	} else {
		printf("loss %.6f\n", ev->loss);
		eval_report_print(stdout, &r);
	}
	fflush(stdout);
	int status = 0;
	if (o->plots && plot_png_report(o->plots, &r, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		status = 1;
	} else if (o->plots && o->train.progress != PROGRESS_JSON) {
		fprintf(stderr, "chexnet: eval: plots written to '%s' (roc.png, reliability.png, "
			"auroc.png)\n", o->plots);
	}
	eval_report_free(&r);
	return status;
}

int eval_write_test(const char *out, const struct evaluation *ev, int bootstrap, uint64_t seed)
{
	char path[4200], tmp[4300], last[4200];
	struct eval_report r;
	struct trainer_error err = { "" };

	snprintf(path, sizeof(path), "%s/test.json", out);
	snprintf(last, sizeof(last), "%s/last", out);
	if (eval_report_compute(ev, bootstrap, seed, NULL, &r, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		eval_report_free(&r);
		return -1;
	}
	FILE *f = whole_file_stream(path, tmp, sizeof(tmp));
	if (f)
		eval_report_json(f, &r, last, "test", ev->loss);
	eval_report_free(&r);
	if (!f || whole_file_stream_commit(f, tmp, path)) {
		fprintf(stderr, "chexnet: --test: '%s': %s\n", path, whole_file_why(errno));
		return -1;
	}
	return 0;
}
