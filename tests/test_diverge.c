/* test_diverge.c - a diverged run stops, says where and why, and writes
 * no checkpoint from the diverged state (issue 19): (a) a non-finite
 * training loss (an --init whose classifier weights are 3e38: the logits
 * overflow at the first step), (b) a finite training loss with
 * non-finite validation scores (an --init whose BN running means are
 * -3e38: training mode normalises with the batch's statistics and stays
 * finite, eval mode uses the running ones (and running variances 0)
 * and overflows to inf, then nan: the measured
 * form of the hang, where auroc_one looped on NaN scores), and `chexnet
 * eval` of such a checkpoint finishing with the report.
 * The --init files are written with the project's own checkpoint writer.
 * What it does not test: the statistics themselves (test_training.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"
#include "train/checkpoint.h"

#define ONE "--backend ref --size 32 --seed 7"
#define SMALL ONE " --batch 2 --synthetic-images 6"

static void chexnet(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* DenseNet-121 as the trainer builds it, its seed-7 weights, then every
 * entry whose key ends in `suffix` set to `value` (and `suffix2` to
 * `value2`, if given), written to tmp/name. */
static void write_init(const char *name, const char *suffix, float value, const char *suffix2,
		       float value2)
{
	struct model_desc d;
	struct model m;
	struct trainer_error err = { "" };

	if (model_by_name(&d, "densenet121", 32, 14, &err) || model_create(&m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return;
	}
	model_init_params(&m, 7);
	for (int i = 0; i < m.desc.entry_count; i++) {
		const struct state_entry *e = &m.desc.entries[i];
		int first = ends_with(e->key, suffix), second = suffix2 && ends_with(e->key, suffix2);
		if (e->kind == ENTRY_BATCHES_TRACKED || (!first && !second))
			continue;
		float *v = (e->kind == ENTRY_PARAM ? m.params : m.state) + e->offset;
		for (size_t k = 0; k < e->count; k++)
			v[k] = first ? value : value2;
	}
	char *dir = test_path(test_tmpdir(), name);
	CHECK(checkpoint_save(dir, &m, NULL, NULL, NULL, &err) == 0);
	free(dir);
	model_destroy(&m);
}

static int exists(const char *name)
{
	struct stat sb;
	char *p = test_path(test_tmpdir(), name);
	int rc = stat(p, &sb) == 0;

	free(p);
	return rc;
}

static void test_nonfinite_training_loss_stops(void)
{
	struct test_proc p;

	write_init("init", "classifier.weight", 3e38f, NULL, 0);
	chexnet("train --synthetic --init init --out ck --save-every 1 --progress-every 1 "
		"--epochs 2 --optimizer sgd --momentum 0 --lr 0.5 " SMALL, &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "chexnet: epoch 1, step 1: training loss is ");
	CHECK_CONTAINS(p.err, ": the model diverged; lower --lr (now 0.5) or use --warmup-epochs");
	CHECK_MSG(!exists("ck/last") && !exists("ck/best"), "a checkpoint of the diverged state: %s",
		  p.err);
	test_proc_free(&p);
	/* run.json's end record names the reason: the last error line */
	char *path = test_path(test_tmpdir(), "ck/run.json");
	char *text = test_read_file(path, NULL);
	CHECK_CONTAINS(text, "\"outcome\":\t\"failed\"");
	CHECK_CONTAINS(text, "\"reason\":\t\"epoch 1, step 1: training loss is ");
	CHECK_CONTAINS(text, "the model diverged; lower --lr (now 0.5)");
	free(text);
	free(path);
}

static void test_nonfinite_validation_stops(void)
{
	struct test_proc p;

	write_init("init", "running_mean", -3e38f, "running_var", 0);
	chexnet("train --synthetic --init init --out ck --progress-every 1 --epochs 2 " SMALL, &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "step 3/3 loss ");  /* trained to the epoch's end, finite */
	CHECK_CONTAINS(p.err, "chexnet: epoch 1: validation scores are ");
	CHECK_CONTAINS(p.err, ": the model diverged; lower --lr (now 0.001) or use --warmup-epochs");
	CHECK_MSG(!exists("ck/last") && !exists("ck/best"), "a checkpoint of the diverged state: %s",
		  p.err);
	test_proc_free(&p);
}

static void test_eval_reports_nonfinite_scores(void)
{
	struct test_proc p;

	write_init("bad", "running_mean", -3e38f, "running_var", 0);
	chexnet("eval --checkpoint bad --synthetic " SMALL, &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.out, "Hernia");
	CHECK_CONTAINS(p.out, "classes have non-finite scores");
	CHECK_CONTAINS(p.err, "chexnet: eval: 'bad': ");
	CHECK_CONTAINS(p.err, "the model's outputs are not finite");
	test_proc_free(&p);
}

const struct test_case diverge_tests[] = {
	{ "nonfinite_training_loss_stops", test_nonfinite_training_loss_stops },
	{ "nonfinite_validation_stops", test_nonfinite_validation_stops },
	{ "eval_reports_nonfinite_scores", test_eval_reports_nonfinite_scores },
	{ 0 }
};
