/* test_run_record.c - the run's record and the guards around the run
 * directory: a short `chexnet train` writes OUT/run.json with the resolved
 * backend and precision and every effective setting, and the same
 * settings in each checkpoint's metadata; run.json reads back, and a
 * truncated, corrupt or unexpected one is refused in one line naming the
 * file; `train --out` on a run without --resume is refused (--overwrite
 * replaces it), so is one on the records of a run that ended (no
 * checkpoint left), while one killed before its first checkpoint starts
 * again; --resume refuses a change of meaning naming each and
 * --allow-changes, records allowed changes, refuses another --out; every
 * refusal leaves the run directory byte-identical; eval and predict take
 * the model and size from the checkpoint. Links and FIFOs in a run (or a
 * FIFO checkpoint file) are refused at once; foreign files are set aside
 * beside a run's record, never where there is none.
 * What it does not test: the metrics files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "runner.h"
#include "train/checkpoint_settings.h"
#include "train/run_record.h"
#include "train/run_settings.h"
#include "train/settings.h"

#define OPTS "--size 32 --seed 7 --batch 8 --threads 1 --quiet"
#define DATA "--synthetic --synthetic-images 32"

static void chexnet(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && B='%s' && \"$B\"/chexnet %s", test_tmpdir(),
		 test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

/* A one-epoch run in `dir`; 0 or -1 (recorded). */
static int train_run(const char *dir, const char *extra)
{
	struct test_proc p;
	char args[1024];

	snprintf(args, sizeof(args), "train " DATA " --epochs 1 --out %s " OPTS " %s", dir, extra);
	chexnet(args, &p, 120);
	int ok = p.exit_code == 0;
	CHECK_MSG(ok, "train: exit %d: %s", p.exit_code, test_tail(p.err, 800));
	test_proc_free(&p);
	return ok ? 0 : -1;
}

/* Every file under dir with its checksum: equal strings = byte-identical. */
static char *listing(const char *dir)
{
	char cmd[4200];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find '%s' | sort && find '%s' -type f | sort | "
		 "xargs cksum", test_tmpdir(), dir, dir);
	CHECK(test_run(cmd, 60, &p) == 0);
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

static double refused_seconds;   /* the last refused() command's */
static int refused_exit;

/* The last chexnet line on stderr holds every needle, exit non-zero, dir unchanged. */
static void refused(const char *args, const char *dir, const char *const *needles)
{
	char *before = listing(dir);
	struct test_proc p;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	chexnet(args, &p, 120);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	refused_seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	refused_exit = p.exit_code;
	CHECK_MSG(p.exit_code != 0, "exit 0 for: %s", args);
	const char *line = strncmp(p.err, "chexnet: ", 9) == 0 ? p.err : NULL;
	for (const char *h = p.err; (h = strstr(h, "\nchexnet: ")); h++)
		line = h + 1;   /* the last chexnet line: the verdict */
	CHECK_MSG(line, "no chexnet line: %s", test_tail(p.err, 600));
	for (int i = 0; line && needles[i]; i++) {
		const char *end = strchr(line, '\n');
		const char *hit = strstr(line, needles[i]);
		CHECK_MSG(hit && (!end || hit < end), "'%s' not in the line: %s", needles[i], line);
	}
	char *after = listing(dir);
	CHECK_MSG(strcmp(before, after) == 0, "run directory changed:\n%s\n---\n%s", before, after);
	free(before);
	free(after);
	test_proc_free(&p);
}

static void test_numbers_read_back_exactly(void)
{
	char text[40];
	double v[] = { 0.001, 1e-3 * 3, 0.1 + 0.2, 64, 1e300, -2.5e-7 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		option_number(v[i], text, sizeof(text));
		CHECK_MSG(strtod(text, NULL) == v[i], "%s", text);
	}
	option_number(0.001, text, sizeof(text));
	CHECK_STR(text, "0.001");
}

static void test_changes_are_classified(void)
{
	struct run_settings a = { 0 }, b = { 0 };
	struct trainer_error err = { "" };
	struct run_change c[8];

	CHECK(run_settings_set(&a, "size", "64", &err) == 0);
	CHECK(run_settings_set(&a, "epochs", "1", &err) == 0);
	CHECK(run_settings_set(&b, "size", "64", &err) == 0);
	CHECK(run_settings_set(&b, "epochs", "3", &err) == 0);
	CHECK(run_settings_set(&b, "loss", "bce", &err) == 0);
	CHECK(run_settings_set(&b, "nonsense", "1", &err) == -1);
	CHECK_CONTAINS(err.msg, "'nonsense': unknown setting");
	CHECK(run_settings_set(&b, "size", "64px", &err) == -1);
	CHECK_CONTAINS(err.msg, "not a number");
	int n = run_settings_changes(&a, &b, c, 8);
	CHECK_INT(n, 2);
	CHECK_STR(c[0].key, "loss");
	CHECK_STR(c[0].old_value, "(none)");
	CHECK_INT(c[0].kind, RUN_SETTING_MEANING);
	CHECK_STR(c[1].key, "epochs");
	CHECK_INT(c[1].kind, RUN_SETTING_FREE);
}

/* A safetensors file not written by chexnet train (no metadata): no
 * model, no settings, not an error (eval's flags then rule). */
static void test_checkpoint_without_metadata_has_no_settings(void)
{
	static const float w[2] = { 1, 2 };
	struct st_tensor t = { .name = "a.weight", .dtype = "F32", .ndim = 1, .shape = { 2 },
			       .data = w, .bytes = 8 };
	struct trainer_error err = { "" };
	struct run_settings s;
	char model[64] = "x", *path = test_path(test_tmpdir(), "w.safetensors");

	CHECK_MSG(st_write(path, &t, 1, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(checkpoint_read_settings(path, model, sizeof(model), &s, &err) == 0, "%s", err.msg);
	CHECK_STR(model, "");
	CHECK_INT(s.count, 0);
	free(path);
}

static void test_train_writes_run_json_and_checkpoint_settings(void)
{
	struct run_settings rec, ck;
	struct trainer_error err = { "" };
	char model[64];

	if (train_run("run", "--precision auto --backend auto --test --bootstrap 20"))
		return;
	char *path = test_path(test_tmpdir(), "run/run.json");
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	const char *backend = run_settings_get(&rec, "backend");
	CHECK(backend && strcmp(backend, "auto") != 0);   /* the resolved one */
	const char *precision = run_settings_get(&rec, "precision");
	CHECK(precision && strcmp(precision, "auto") != 0);
	CHECK_STR(run_settings_get(&rec, "size"), "32");
	CHECK_STR(run_settings_get(&rec, "global_batch"), "8");
	CHECK_STR(run_settings_get(&rec, "lr_effective"), "0.001");
	CHECK_STR(run_settings_get(&rec, "data_fingerprint"), "synthetic:32");
	CHECK_STR(run_settings_get(&rec, "pixels"), "synthetic");
	CHECK_STR(run_settings_get(&rec, "seed"), "7");
	char *text = test_read_file(path, NULL);
	CHECK(text && strstr(text, "\"command_line\":\t[\"chexnet\", \"train\""));
	CHECK(text && strstr(text, "\"libhvd\""));
	CHECK(text && strstr(text, "\"backend_libraries\""));
	CHECK(text && strstr(text, "\"runtime_library\":\t\"none\""));   /* one process: self */
	CHECK(text && strstr(text, "\"hosts\""));
	CHECK_CONTAINS(text, "\"end\":\t{");
	CHECK_CONTAINS(text, "\"outcome\":\t\"finished\"");
	CHECK_CONTAINS(text, "\"best_epoch\":\t1");
	CHECK_CONTAINS(text, "\"best_metric\":\t\"val_loss\"");
	CHECK_CONTAINS(text, "\"files\":\t[\"run.json\", \"metrics.csv\", \"tb\", \"last\", \"best\", "
		       "\".generations\", \"test.json\"]");
	free(text);
	char *test = test_path(test_tmpdir(), "run/test.json");
	text = test_read_file(test, NULL);
	CHECK_CONTAINS(text, "\"split\":\"test\"");
	CHECK_CONTAINS(text, "\"mean_auroc_ci95\":[");
	CHECK_CONTAINS(text, "\"bootstrap_resamples\":20");
	free(text);
	free(test);
	char *last = test_path(test_tmpdir(), "run/last");
	CHECK_MSG(checkpoint_read_settings(last, model, sizeof(model), &ck, &err) == 0, "%s", err.msg);
	CHECK_STR(model, "densenet121");
	struct run_change c[2 * RUN_SETTINGS_MAX];
	CHECK_INT(run_settings_changes(&rec, &ck, c, 2 * RUN_SETTINGS_MAX), 0);
	int recorded = 0;   /* the checkpoint leaves out one session's own (out, test, ...) */
	for (int i = 0; i < rec.count; i++)
		recorded += settings_of_key(rec.items[i].key)->resume != RESUME_SESSION;
	CHECK(recorded < rec.count);
	CHECK_INT(ck.count, recorded);
	free(last);
	free(path);
}

/* A valid record, then each damage: refused naming the file. */
static void test_bad_run_json_is_refused_naming_the_file(void)
{
	static const char *const bad[] = {
		"", "{", "{\"format\": \"chexnet-run 1\"}", "[1, 2]",
		"{\"format\": \"chexnet-run 2\", \"start_time\": \"x\", \"command_line\": [], "
		"\"settings\": {}, \"versions\": {}, \"hosts\": [], \"resumes\": []}",
		"{\"format\": \"chexnet-run 1\", \"start_time\": \"x\", \"command_line\": [], "
		"\"settings\": {\"size\": \"64\"}, \"versions\": {}, \"hosts\": [], \"resumes\": []}",
		"{\"format\": \"chexnet-run 1\", \"start_time\": \"x\", \"command_line\": [], "
		"\"settings\": {\"colour\": \"red\"}, \"versions\": {}, \"hosts\": [], \"resumes\": []}",
		"{\"format\": \"chexnet-run 1\", \"start_time\": \"x\", \"command_line\": [1], "
		"\"settings\": {}, \"versions\": {}, \"hosts\": [], \"resumes\": []}",
		"{\"format\": \"chexnet-run 1\", \"start_time\": \"x\", \"command_line\": [], "
		"\"settings\": {}, \"versions\": {}, \"hosts\": [], \"resumes\": [{}]}",
		/* fuzz-records found this one echoed into the message: a newline in a key */
		"{\"format\": \"chexnet-run 1\", \"ver\\nsions\": {}}",
		"{\"format\": \"chexnet-run 1\", \"format\": \"chexnet-run 1\", \"start_time\": \"x\", "
		"\"command_line\": [], \"settings\": {}, \"versions\": {}, \"hosts\": [], \"resumes\": []}",
		NULL,
	};
	struct trainer_error err = { "" };
	char *path = test_path(test_tmpdir(), "run.json");
	const char *good = "{\"format\": \"chexnet-run 1\", \"start_time\": \"x\", \"command_line\": [], "
			   "\"settings\": {\"size\": 64}, \"versions\": {}, \"hosts\": [], \"resumes\": []}";

	CHECK(test_write_file(path, good, strlen(good)) == 0);
	CHECK_MSG(run_record_read(path, NULL, &err) == 0, "%s", err.msg);
	for (int i = 0; bad[i]; i++) {
		CHECK(test_write_file(path, bad[i], strlen(bad[i])) == 0);
		err.msg[0] = '\0';
		CHECK_MSG(run_record_read(path, NULL, &err) == -1, "accepted: %s", bad[i]);
		CHECK_CONTAINS(err.msg, path);
		CHECK(!strchr(err.msg, '\n'));
	}
	CHECK(test_write_file(path, good, strlen(good) / 2) == 0);   /* truncated */
	CHECK(run_record_read(path, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "not JSON");
	free(path);
}

/* The record at path without its "end", as a run killed before it
 * ended leaves it. 0 or -1. */
static int drop_end(const char *path)
{
	char *text = test_read_file(path, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	char *out = NULL;
	int rc = -1;

	if (root && cJSON_GetObjectItemCaseSensitive(root, "end")) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, "end");
		out = cJSON_Print(root);
		rc = out ? test_write_file(path, out, strlen(out)) : -1;
	}
	free(out);
	cJSON_Delete(root);
	free(text);
	return rc;
}

static void test_second_train_into_a_run_is_refused(void)
{
	if (train_run("run", ""))
		return;
	static const char *const needles[] = { "'run'", "holds a run", "--resume run", "--overwrite",
						NULL };
	refused("train " DATA " --epochs 1 --out run " OPTS, "run", needles);
	if (train_run("run", "--overwrite --seed 9"))
		return;
	struct run_settings rec;
	struct trainer_error err = { "" };
	char *path = test_path(test_tmpdir(), "run/run.json");
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "seed"), "9");
	/* a run that ended, its checkpoints gone (a results folder): kept */
	struct test_proc p;
	char rm[4200];
	snprintf(rm, sizeof(rm), "rm -r '%s/run/last' '%s/run/best'", test_tmpdir(), test_tmpdir());
	CHECK(system(rm) == 0);
	static const char *const ended[] = { "'run'", "holds the records of a run that ended",
					     "--overwrite", NULL };
	refused("train " DATA " --epochs 1 --out run " OPTS " --seed 11", "run", ended);
	/* killed before its first checkpoint (no end; a requeued job): starts again */
	CHECK(drop_end(path) == 0);
	chexnet("train " DATA " --epochs 1 --out run " OPTS " --seed 11", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "chexnet: train: --out 'run': its run has no checkpoint yet: starting "
		       "it again\n");
	test_proc_free(&p);
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "seed"), "11");
	free(path);
}

static void test_resume_refuses_changes_of_meaning(void)
{
	if (train_run("run", ""))
		return;
	static const char *const batch[] = { "global_batch 8 -> 4", "--batch", "--allow-changes", NULL };
	refused("train " DATA " --epochs 2 --resume run " OPTS " --batch 4", "run", batch);
	static const char *const two[] = { "lr_effective 0.001 -> 0.01", "--lr", "loss weighted -> bce",
					   "--loss", "--allow-changes", NULL };
	refused("train " DATA " --epochs 2 --resume run " OPTS " --lr 0.01 --loss bce", "run", two);
	static const char *const model[] = { "model densenet121 -> resnet50", "--model",
					     "cannot load into another model", NULL };
	refused("train " DATA " --epochs 2 --resume run " OPTS " --model resnet50 --allow-changes",
		"run", model);
	CHECK_INT(refused_exit, 2);   /* before start-up, --allow-changes not offered */
	static const char *const data[] = { "data_fingerprint synthetic:32 -> synthetic:40", NULL };
	refused("train --synthetic --synthetic-images 40 --epochs 2 --resume run " OPTS, "run", data);
	static const char *const out[] = { "--out 'other'", "differs from --resume 'run'", NULL };
	refused("train " DATA " --epochs 2 --resume run --out other " OPTS, "run", out);
}

/* The precision is free to change on --resume (the same run at another
 * speed, as --threads): tf32, which every cpu backend has, without
 * --allow-changes; said and recorded. */
static void test_resume_takes_another_precision(void)
{
	struct test_proc p;

	if (train_run("run", ""))
		return;
	chexnet("train " DATA " --epochs 2 --resume run --size 32 --seed 7 --batch 8 --threads 1 "
		"--precision tf32", &p, 120);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 800));
	CHECK_CONTAINS(p.err, "changed (recorded in run.json): precision fp32 -> tf32 (--precision)");
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "run/run.json");
	char *text = test_read_file(path, NULL);
	CHECK(text != NULL);
	CHECK_CONTAINS(text, "\"precision\":\t[\"fp32\", \"tf32\"]");
	free(text);
	free(path);
}

static void test_resume_records_allowed_changes(void)
{
	struct test_proc p;

	if (train_run("run", ""))
		return;
	chexnet("train " DATA " --epochs 2 --resume run " OPTS " --progress-every 3 --lr 0.002 "
		"--allow-changes", &p, 120);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 800));
	CHECK(!strstr(p.err, "changed (recorded"));   /* --quiet */
	test_proc_free(&p);
	chexnet("train " DATA " --epochs 3 --resume run --size 32 --seed 7 --batch 8 --threads 1 "
		"--lr 0.002 --progress-every 3", &p, 120);
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'run': changed (recorded in run.json): epochs 2 -> 3 "
		       "(--epochs)\n");
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "run/run.json");
	char *text = test_read_file(path, NULL);
	CHECK(text != NULL);
	CHECK_CONTAINS(text, "\"epochs\":\t[\"1\", \"2\"]");
	CHECK_CONTAINS(text, "\"progress_every\":\t[\"10\", \"3\"]");
	CHECK_CONTAINS(text, "\"lr_effective\":\t[\"0.001\", \"0.002\"]");
	CHECK_CONTAINS(text, "\"--allow-changes\"");
	struct run_settings rec;
	struct trainer_error err = { "" };
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "lr"), "0.002");
	free(text);
	free(path);
}

/* `--resume run` alone: data, model, size, batch, schedule, save-every
 * from run.json; only the flags given are changes. */
static void test_resume_alone_takes_the_runs_settings(void)
{
	struct test_proc p;
	struct run_settings rec;
	struct trainer_error err = { "" };

	if (train_run("run", "--save-every 3 --lr 0.002 --loss bce"))
		return;
	chexnet("train --resume run --epochs 2", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'run': changed (recorded in run.json): epochs 1 -> 2 "
		       "(--epochs)\n");
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "run/run.json");
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "save_every"), "3");
	CHECK_STR(run_settings_get(&rec, "lr"), "0.002");
	CHECK_STR(run_settings_get(&rec, "loss"), "bce");
	CHECK_STR(run_settings_get(&rec, "data_fingerprint"), "synthetic:32");
	CHECK_STR(run_settings_get(&rec, "size"), "32");
	CHECK_STR(run_settings_get(&rec, "epochs"), "2");
	free(path);
}

/* A run from before run.json (checkpoints only) resumes and gets one. */
static void test_resume_of_a_run_without_record_starts_one(void)
{
	struct test_proc p;
	struct run_settings rec;
	struct trainer_error err = { "" };

	if (train_run("run", ""))
		return;
	chexnet("train " DATA " --epochs 2 --resume run " OPTS " && rm run/run.json run/metrics.csv "
		"&& rm -r run/tb && \"$B\"/chexnet train " DATA " --epochs 3 --resume run " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "run/run.json");
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "epochs"), "3");
	free(path);
}

/* eval and predict with no --model/--size take the checkpoint's: a 64 px
 * run on a pack stored at 73 px (224 would not fit); a contradicting
 * --model is refused naming both; another --size is noted. */
static void test_eval_and_predict_use_the_checkpoints_model_and_size(void)
{
	struct test_proc p;

	chexnet("synth --out d --count 40 --size 80 && \"$B\"/chexnet pack --data d --out sh --size 73"
		" && cp \"$(ls d/images/*.png | head -1)\" x.png", &p, 120);
	test_proc_free(&p);
	chexnet("train --data sh --size 64 --batch 4 --threads 1 --epochs 1 --steps 2 --out run --quiet",
		&p, 120);
	CHECK_MSG(p.exit_code == 0, "train: %s", test_tail(p.err, 600));
	test_proc_free(&p);
	chexnet("eval --checkpoint run/last --data sh --bootstrap 0 --threads 1", &p, 120);
	CHECK_MSG(p.exit_code == 0, "eval: %s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "chexnet: densenet121: ");
	CHECK_CONTAINS(p.err, ", 64 px)");
	test_proc_free(&p);
	chexnet("predict --checkpoint run/last --threads 1 x.png", &p, 120);
	CHECK_MSG(p.exit_code == 0, "predict: %s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, ", 64 px)");
	CHECK_CONTAINS(p.out, "x.png");
	test_proc_free(&p);
	chexnet("eval --checkpoint run/last --data sh --model resnet50", &p, 120);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: eval: --model 'resnet50': the checkpoint 'run/last' holds "
		       "'densenet121'");
	test_proc_free(&p);
	chexnet("predict --checkpoint run/last --size 96 --threads 1 x.png", &p, 120);
	CHECK_MSG(p.exit_code == 0, "predict: %s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "chexnet: predict: --size 96: the checkpoint 'run/last' was trained at 64 px");
	CHECK_CONTAINS(p.err, ", 96 px)");
	test_proc_free(&p);
}

/* Another tool's metrics.csv, tb/ and notes in a folder without a
 * record: refused, with --overwrite too (not a run folder). Beside a
 * run, foreign entries are refused, then with --overwrite each renamed
 * NAME.foreign-N, named, its bytes kept; a second --overwrite replaces
 * only the run's own entries. */
static void test_foreign_entries_are_set_aside_never_deleted(void)
{
	struct test_proc p;

	chexnet("-h >/dev/null; mkdir bare bare/tb && echo theirs > bare/metrics.csv && "
		"echo events > bare/tb/e && echo notes > bare/notes.txt", &p, 30);
	test_proc_free(&p);
	static const char *const needles[] = { "'bare'", "3 entries chexnet did not write", "'tb'",
					       "'notes.txt'", "--overwrite", NULL };
	refused("train " DATA " --epochs 1 --out bare " OPTS, "bare", needles);
	static const char *const no_record[] = { "--overwrite: --out 'bare'", "3 entries",
						 "no run.json of chexnet's", "nothing set aside", NULL };
	refused("train " DATA " --epochs 1 --out bare --overwrite " OPTS, "bare", no_record);
	if (train_run("run", ""))
		return;
	chexnet("-h >/dev/null; mkdir run/theirs && echo events > run/theirs/e && "
		"echo notes > run/notes.txt", &p, 30);
	test_proc_free(&p);
	chexnet("train " DATA " --epochs 1 --out run --overwrite " OPTS, &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "set aside (none of them deleted): ");
	CHECK_CONTAINS(p.err, "'notes.txt' -> 'notes.txt.foreign-1'");
	CHECK_CONTAINS(p.err, "'theirs' -> 'theirs.foreign-1'");
	test_proc_free(&p);
	char *before = listing("run");
	CHECK_CONTAINS(before, "run/theirs.foreign-1/e");
	char *path = test_path(test_tmpdir(), "run/notes.txt.foreign-1");
	char *text = test_read_file(path, NULL);
	CHECK_STR(text ? text : "", "notes\n");
	free(text);
	free(path);
	path = test_path(test_tmpdir(), "run/run.json");
	text = test_read_file(path, NULL);
	CHECK_CONTAINS(text, "\"files\":\t[\"run.json\", \"metrics.csv\", \"tb\", \"last\", \"best\", "
		       "\".generations\"]");
	free(text);
	free(path);
	chexnet("train " DATA " --epochs 1 --out run --overwrite " OPTS " && "
		"find run -name '*.foreign-*' | sort", &p, 120);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK(!strstr(p.err, "set aside"));
	CHECK_STR(p.out, "run/notes.txt.foreign-1\nrun/theirs.foreign-1\n");
	test_proc_free(&p);
	free(before);
}

/* refused() without waiting on a FIFO: opening one to read blocks until
 * a writer comes, which none does here, so a wait would last until the
 * command's 120 s limit; 30 s leaves room for a sanitizer build's start
 * on a busy machine (1.9 s measured under make check SAN=1). */
static void refused_at_once(const char *args, const char *dir, const char *const *needles)
{
	refused(args, dir, needles);
	CHECK_MSG(refused_seconds < 30.0, "%s: %.2f s: waited on a FIFO?", args, refused_seconds);
}

/* A `last` that is a symbolic link (its target keeps every file) and a
 * FIFO named run.json or metrics.csv: refused in one line, at once. */
static void test_links_and_fifos_in_a_run_are_refused(void)
{
	struct test_proc p;

	if (train_run("run", ""))
		return;
	chexnet("-h > /dev/null; mkdir target && cp run/last/* target/ && rm -r run/last && "
		"ln -s \"$PWD/target\" run/last", &p, 30);
	test_proc_free(&p);
	char *target = listing("target");
	static const char *const link[] = { "'last' is a symbolic link", "refused", NULL };
	refused_at_once("train " DATA " --epochs 1 --out run --overwrite " OPTS, "run", link);
	refused_at_once("train " DATA " --epochs 2 --resume run " OPTS, "run", link);
	char *after = listing("target");
	CHECK_STR(after, target);
	free(after);
	free(target);
	static const char *const fifo[] = { "'metrics.csv' is a FIFO", NULL };
	static const char *const json[] = { "run.json", "a FIFO", NULL };
	chexnet("-h > /dev/null; rm run/last && cp -r target run/last && rm run/metrics.csv && "
		"mkfifo run/metrics.csv", &p, 30);
	test_proc_free(&p);
	refused_at_once("train " DATA " --epochs 2 --resume run " OPTS, "run", fifo);
	chexnet("-h > /dev/null; rm run/metrics.csv run/run.json && mkfifo run/run.json", &p, 30);
	test_proc_free(&p);
	refused_at_once("train " DATA " --epochs 2 --resume run " OPTS, "run", json);
	refused_at_once("train " DATA " --epochs 1 --out run --overwrite " OPTS, "run", json);
	/* a checkpoint file that is a FIFO: refused, never waited on */
	chexnet("-h > /dev/null; mkdir fifo-ck && mkfifo fifo-ck/model.safetensors", &p, 30);
	test_proc_free(&p);
	static const char *const ck[] = { "'fifo-ck/model.safetensors': not a regular file (a FIFO)",
					  NULL };
	refused_at_once("eval --checkpoint fifo-ck --synthetic --size 32 --threads 1", "fifo-ck", ck);
}

/* A run started the usual ways (ImageNet-style --init weights, --overwrite
 * of a folder, --lr-scale linear with accumulation) resumes with --resume
 * alone and keeps its meaning: the LR is scaled by the micro-batches of a
 * step (ranks x K), so lr_effective changes with K and only with it. */
static void test_run_started_with_init_overwrite_and_linear_lr_resumes(void)
{
	struct test_proc p;
	struct run_settings rec;
	struct trainer_error err = { "" };

	if (train_run("w0", "") || train_run("run", "--init w0/last/model.safetensors --overwrite "
					     "--lr-scale linear --accumulate 2"))
		return;
	char *path = test_path(test_tmpdir(), "run/run.json");
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "lr_effective"), "0.002");
	CHECK_STR(run_settings_get(&rec, "init"), "w0/last/model.safetensors");
	chexnet("train --resume run --epochs 2", &p, 120);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 800));
	CHECK(!strstr(p.err, "lr_effective"));
	test_proc_free(&p);
	CHECK_MSG(run_record_read(path, &rec, &err) == 0, "%s", err.msg);
	CHECK_STR(run_settings_get(&rec, "lr_effective"), "0.002");
	CHECK_STR(run_settings_get(&rec, "accumulate"), "2");
	chexnet("train --resume run --epochs 3 --accumulate 1", &p, 120);
	CHECK_INT(p.exit_code, 1);   /* refused after start-up: run.json unchanged */
	CHECK_CONTAINS(p.err, "lr_effective 0.002 -> 0.001 (--lr, --lr-scale, the global batch)");
	test_proc_free(&p);
	free(path);
}

const struct test_case run_record_tests[] = {
	{ "numbers_read_back_exactly", test_numbers_read_back_exactly },
	{ "changes_are_classified", test_changes_are_classified },
	{ "checkpoint_without_metadata_has_no_settings",
	  test_checkpoint_without_metadata_has_no_settings },
	{ "train_writes_run_json_and_checkpoint_settings",
	  test_train_writes_run_json_and_checkpoint_settings },
	{ "bad_run_json_is_refused_naming_the_file", test_bad_run_json_is_refused_naming_the_file },
	{ "second_train_into_a_run_is_refused", test_second_train_into_a_run_is_refused },
	{ "resume_refuses_changes_of_meaning", test_resume_refuses_changes_of_meaning },
	{ "resume_records_allowed_changes", test_resume_records_allowed_changes },
	{ "resume_takes_another_precision", test_resume_takes_another_precision },
	{ "resume_alone_takes_the_runs_settings", test_resume_alone_takes_the_runs_settings },
	{ "foreign_entries_are_set_aside_never_deleted",
	  test_foreign_entries_are_set_aside_never_deleted },
	{ "links_and_fifos_in_a_run_are_refused", test_links_and_fifos_in_a_run_are_refused },
	{ "resume_of_a_run_without_record_starts_one", test_resume_of_a_run_without_record_starts_one },
	{ "eval_and_predict_use_the_checkpoints_model_and_size",
	  test_eval_and_predict_use_the_checkpoints_model_and_size },
	{ "run_started_with_init_overwrite_and_linear_lr_resumes",
	  test_run_started_with_init_overwrite_and_linear_lr_resumes },
	{ 0 }
};
