/* test_recipe.c - `chexnet train --config FILE` and --print-config from
 * the outside (build/test-row/chexnet: the settings table with the tests'
 * row more): a recipe that sets every key of the table trains, and its
 * run.json read back as a recipe prints the same settings as the recipe
 * itself (config -> run.json -> config is identity); run.json records the
 * file's path and SHA-256 (sha256sum's); the command line wins over the
 * file, the file over --resume's record, the record over the defaults, and
 * a file's change of a resumed run's meaning needs --allow-changes; each
 * refusal is one line naming the file, the line and the key, and makes
 * no run folder; derived values in a file set nothing and a difference is
 * one line.
 * What it does not test: the reader's robustness (fuzz-recipe), a build
 * without libyaml (test_cpu_onednn3.c's build has none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "train/settings.h"

static void chexnet(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/test-row/chexnet' %s", test_tmpdir(),
		 test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

/* Runs args and wants exit 0. */
static void ok(const char *args, int timeout)
{
	struct test_proc p;

	chexnet(args, &p, timeout);
	CHECK_MSG(p.exit_code == 0, "chexnet %s: exit %d: %s", args, p.exit_code, test_tail(p.err, 600));
	test_proc_free(&p);
}

/* stdout of `chexnet train ARGS --print-config` (malloc'd). */
static char *printed(const char *args)
{
	struct test_proc p;
	char line[4096];

	snprintf(line, sizeof(line), "train %s --print-config", args);
	chexnet(line, &p, 30);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", line, p.exit_code, test_tail(p.err, 600));
	char *out = p.out;
	p.out = NULL;
	free(p.err);
	return out;
}

/* Every key the table gives train, each set away from its default where
 * a run allows it (init: a checkpoint of the first run). */
static const char every_key[] =
	"# every key of train's recipe\n"
	"model: densenet121\nbackend: ref\nprecision: fp32\nconv_algorithms: heuristic\n"
	"gpu_layout: nchw\ncuda_graph: on\nsize: 32\nbatch: 2\naccumulate: 2\noptimizer: sgd\n"
	"momentum: 0.8\nweight_decay: 0.0001\nlr: 0.000001\nlr_scale: linear\nwarmup_epochs: 0.5\n"
	"patience: 2\nloss: bce\nseed: 11\ndata: synthetic\nsynthetic_images: 6\n"
	"init: \"w0/last/model.safetensors\"\nmemory_efficient: true\nepochs: 2\nsteps: 2\n"
	"save_every: 1\nthreads: 1\nloader_threads: 1\nprogress_every: 3\nout: \"r1\"\n"
	"shrink: true\nspares: 1\ntest: true\nquiet: false\nverbose: true\njson: true\n"
	"bootstrap: 20\nsensitivity: 0.8\ntest_row: 4\n";
/* The keys a run cannot take beside those above (one threshold rule). */
static const char other_keys[] =
	"backend: ref\nsize: 32\nbatch: 2\ndata: synthetic\nsynthetic_images: 4\nsteps: 1\n"
	"quiet: true\nout: \"r3\"\nspecificity: 0.9\n";

/* The recipe trains; its run.json read back as a recipe prints what the
 * recipe itself prints, with every key of the recipe in it. */
static void round_trip(const char *name, const char *text, const char *out)
{
	char args[256], key[80];

	CHECK(test_put(name, text) == 0);
	snprintf(args, sizeof(args), "train --config %s", name);
	ok(args, 120);
	snprintf(args, sizeof(args), "--config %s", name);
	char *given = printed(args);
	snprintf(args, sizeof(args), "--config %s/run.json", out);
	char *back = printed(args);
	CHECK_STR(back, given);
	for (const char *k = text; k; k = strchr(k, '\n'), k = k ? k + 1 : NULL) {
		if (!*k || *k == '#')
			continue;
		snprintf(key, sizeof(key), "\n%.*s: ", (int)strcspn(k, ":"), k);
		CHECK_MSG(strstr(back, key), "--print-config of %s/run.json lacks '%s'", out, key + 1);
	}
	free(given);
	free(back);
}

static void test_recipe_round_trips_through_run_json(void)
{
	char key[80];

	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || !row->key || !(row->commands & SETTING_TRAIN))
			continue;
		snprintf(key, sizeof(key), "\n%s: ", row->key);
		CHECK_MSG(strstr(every_key, key) || strstr(other_keys, key),
			  "no recipe here sets '%s'", row->key);
	}
	ok("train --backend ref --size 32 --batch 2 --synthetic --synthetic-images 4 --steps 1 "
	   "--out w0 --quiet", 60);
	round_trip("all.yaml", every_key, "r1");
	round_trip("other.yaml", other_keys, "r3");
	char *path = test_path(test_tmpdir(), "r1/run.json"), *json = test_read_file(path, NULL);
	char cmd[4200], want[200];
	snprintf(cmd, sizeof(cmd), "sha256sum '%s/all.yaml' | cut -c1-64", test_tmpdir());
	char *sum = test_output_of(cmd, 10);
	snprintf(want, sizeof(want), "\"config\":\t{\n\t\t\"path\":\t\"all.yaml\",\n\t\t\"sha256\":\t\"%s\"",
		 sum ? sum : "?");
	CHECK_CONTAINS(json, want);
	free(sum);
	free(json);
	free(path);
}

/* The command line over the file, the file over --resume's record, the
 * record over the defaults; a file's change of the run's meaning needs
 * --allow-changes as a flag's does. */
static void test_recipe_precedence(void)
{
	ok("train --backend ref --size 32 --batch 2 --synthetic --synthetic-images 4 --steps 1 "
	   "--optimizer sgd --momentum 0.7 --lr 0.0005 --seed 7 --out r2 --quiet", 60);
	CHECK(test_put("f.yaml", "batch: 3\nlr: 0.0007\nquiet: true\n") == 0);
	char *o = printed("--resume r2 --config f.yaml --batch 2 --json");
	CHECK_CONTAINS(o, "\nbatch: 2\n");         /* the command line's */
	CHECK_CONTAINS(o, "\nlr: 0.0007\n");       /* the file's over the record's 0.0005 */
	CHECK_CONTAINS(o, "\nmomentum: 0.7\n");    /* the record's over the default */
	CHECK_CONTAINS(o, "\nquiet: false\n");     /* --json given: the file's quiet loses */
	CHECK_CONTAINS(o, "\njson: true\n");
	CHECK_CONTAINS(o, "\nweight_decay: 0\n");  /* the default */
	free(o);
	struct test_proc p;
	CHECK(test_put("s.yaml", "seed: 12\n") == 0);
	chexnet("train --resume r2 --config s.yaml --quiet", &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "chexnet: --resume: 'r2': this session changes the run: seed 7 -> 12 "
		       "(--seed); --allow-changes accepts that\n");
	test_proc_free(&p);
}

/* Each bad recipe: exit 2, one line naming the file (and the line and
 * key where there is one), no run folder. */
static void test_recipe_refusals(void)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "batch: \"4\"\n", "line 1: 'batch': '4': a number in quotes: write it without them" },
		{ "lr: 0.1\nbatch: 0\n", "line 2: 'batch': --batch '0': expected an integer in 1..4096" },
		{ "optimizer: lamb\n", "line 1: 'optimizer': --optimizer: 'lamb': expected adam or sgd" },
		{ "lrr: 1\n", "line 1: 'lrr': not a setting of chexnet train (chexnet train --print-config "
		  "lists them)" },
		{ "resume: r\n", "line 1: 'resume': --resume acts on this command line only: give it "
		  "there, not in a recipe" },
		{ "cam: d\n", "line 1: 'cam': not a setting of chexnet train" },
		{ "weight-decay: 0\n", "line 1: 'weight-decay': not a key: --weight-decay's key is "
		  "'weight_decay'" },
		{ "batch: 4\nbatch: 5\n", "line 2: 'batch': given twice (line 1)" },
		{ "- batch\n", "line 1: not a mapping of keys to values" },
		{ "batch: [4, 5]\n", "line 1: a list as a value: one value a key" },
		{ "batch:\n  a: 1\n", "line 2: a mapping as a value: one value a key" },
		{ "test: yes\n", "line 1: 'test': 'yes': a switch: true or false" },
		{ "init: true\n", "line 1: 'init': 'true': true or false: this key takes text" },
		{ "init:\n", "line 1: 'init': '': no value" },
		{ "lr: &a 0.1\nmomentum: *a\n", "line 1: an anchor or a tag: a recipe holds plain values" },
		{ "batch: !!str 4\n", "line 1: an anchor or a tag: a recipe holds plain values" },
		{ "batch: 4\n---\nlr: 1\n", "line 2: a second document" },
		{ "batch: 4\n lr: [\n", "line 2: not YAML: " },
		{ "out: \"a\\u0007b\"\n", "line 1: a control character" },
		{ "ranks: many\n", "line 1: settings: 'ranks': 'many': not a number" },
		{ "{\"format\": \"chexnet-run 1\"}\n", "run record: 'bad.yaml': the record: " },
	};
	struct test_proc p;
	char want[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(test_put("bad.yaml", bad[i].text) == 0);
		chexnet("train --synthetic --config bad.yaml --out o --steps 1", &p, 20);
		snprintf(want, sizeof(want), "chexnet: --config: %s%s",
			 strncmp(bad[i].want, "run record", 10) ? "'bad.yaml': " : "", bad[i].want);
		CHECK_MSG(p.exit_code == 2, "%s: exit %d", bad[i].text, p.exit_code);
		CHECK_MSG(strncmp(p.err, want, strlen(want)) == 0, "%s: wanted '%s...', got '%s'",
			  bad[i].text, want, p.err);
		CHECK_MSG(strchr(p.err, '\n') == p.err + strlen(p.err) - 1, "%s: more than one line: %s",
			  bad[i].text, p.err);
		test_proc_free(&p);
		char *o = test_path(test_tmpdir(), "o");
		CHECK_MSG(access(o, F_OK) != 0, "%s: a run folder made", bad[i].text);
		free(o);
	}
	chexnet("train --synthetic --config missing.yaml", &p, 20);
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "chexnet: --config: 'missing.yaml': No such file or directory\n");
	test_proc_free(&p);
	chexnet("train --synthetic --config .", &p, 20);
	CHECK_STR(p.err, "chexnet: --config: '.': not a regular file (a directory)\n");
	test_proc_free(&p);
	char *big = calloc(1, (1 << 20) + 2);
	memset(big, '#', (1 << 20) + 1);
	CHECK(test_put("big.yaml", big) == 0);
	free(big);
	chexnet("train --synthetic --config big.yaml", &p, 20);
	CHECK_STR(p.err, "chexnet: --config: 'big.yaml': larger than 1 MiB\n");
	test_proc_free(&p);
}

/* A file's derived values set nothing; each difference from this run's
 * is named in one line, and the run goes on. */
static void test_recipe_derived_values_are_checked(void)
{
	struct test_proc p;

	CHECK(test_put("d.yaml", "backend: ref\nsize: 32\nbatch: 2\ndata: synthetic\n"
		       "synthetic_images: 4\nsteps: 1\nquiet: true\nranks: 4\nglobal_batch: 2\n"
		       "data_fingerprint: \"synthetic:4\"\n") == 0);
	chexnet("train --config d.yaml --out d", &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 600));
	CHECK_CONTAINS(p.err, "chexnet: --config: 'd.yaml': this run derives otherwise than the file "
		       "says (the file's -> this run's): ranks 4 -> 1 (the rank count)\n");
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "d/run.json"), *json = test_read_file(path, NULL);
	CHECK_CONTAINS(json, "\"ranks\":\t1,");
	free(json);
	free(path);
}

const struct test_case recipe_tests[] = {
	{ "recipe_round_trips_through_run_json", test_recipe_round_trips_through_run_json },
	{ "recipe_precedence", test_recipe_precedence },
	{ "recipe_refusals", test_recipe_refusals },
	{ "recipe_derived_values_are_checked", test_recipe_derived_values_are_checked },
	{ 0 }
};
