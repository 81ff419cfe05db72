/* test_checkpoint.c - checkpoints: bit-exact round trip of the model and
 * the training state, atomic replacement, wrong shapes and missing keys
 * named, truncated files refused cleanly, --init's torchvision leniency
 * ("module." prefix, 1000-class classifier dropped).
 * What it does not test: PyTorch reading them (test_cli.c, torch_check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"

static const struct densenet_config tiny = {
	.growth = 4, .blocks = { 1, 1, 1, 1 }, .init_features = 8, .bn_size = 2,
};

static int tiny_model(struct model *m, int classes, uint64_t seed)
{
	struct model_desc d;
	struct trainer_error err = { "" };

	if (model_densenet(&d, &tiny, 32, classes, &err) || model_create(m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return -1;
	}
	model_init_params(m, seed);
	for (size_t i = 0; i < m->desc.state_count; i++)
		m->state[i] = (float)(seed % 97) * 0.01f + (float)i;
	m->batches_tracked = (int64_t)seed;
	return 0;
}

static void test_round_trip_bit_exact(void)
{
	struct model a, b;
	struct optim oa, ob;
	struct optim_config cfg;
	struct schedule sa, sb;
	struct train_state ta = { 3, 17, 0.4321, { { 1, 2, 3, 0xfedcba9876543210ULL } }, 1 }, tb;
	struct trainer_error err = { "" };
	char *dir = test_path(test_tmpdir(), "ckpt");

	if (tiny_model(&a, 14, 1) || tiny_model(&b, 14, 2))
		return;
	optim_config_default(&cfg);
	CHECK(optim_init(&oa, &cfg, a.desc.param_count, &err) == 0);
	CHECK(optim_init(&ob, &cfg, b.desc.param_count, &err) == 0);
	for (size_t i = 0; i < oa.count; i++) {
		oa.m[i] = (float)i * 1e-3f;
		oa.v[i] = 1.0f / (float)(i + 1);
	}
	oa.steps = 99;
	schedule_init(&sa, 1e-3, LR_SCALE_NONE, 1, 0, 2);
	sa.plateau_mult = 0.01;
	sa.best_loss = 0.25;
	sa.bad_epochs = 1;
	schedule_init(&sb, 1e-3, LR_SCALE_NONE, 1, 0, 2);
	CHECK_MSG(checkpoint_save(dir, &a, &oa, &sa, &ta, &err) == 0, "%s", err.msg);
	CHECK_MSG(checkpoint_load_model(dir, &b, CHECKPOINT_STRICT, NULL, &err) == 0, "%s", err.msg);
	CHECK(memcmp(a.params, b.params, a.desc.param_count * sizeof(float)) == 0);
	CHECK(memcmp(a.state, b.state, a.desc.state_count * sizeof(float)) == 0);
	CHECK_INT(b.batches_tracked, 1);
	CHECK_MSG(checkpoint_load_training(dir, &ob, &sb, &tb, &err) == 0, "%s", err.msg);
	CHECK(memcmp(oa.m, ob.m, oa.count * sizeof(float)) == 0);
	CHECK(memcmp(oa.v, ob.v, oa.count * sizeof(float)) == 0);
	CHECK_INT(ob.steps, 99);
	CHECK_INT(tb.epoch, 3);
	CHECK_INT(tb.step, 17);
	CHECK_INT(tb.validate_first, 1);
	CHECK(tb.best_val_loss == 0.4321);
	CHECK(memcmp(&tb.rng, &ta.rng, sizeof(tb.rng)) == 0);
	CHECK(sb.plateau_mult == 0.01 && sb.best_loss == 0.25 && sb.bad_epochs == 1);
	/* saving again replaces the directory and leaves no temporaries */
	a.params[0] = 42.0f;
	CHECK_MSG(checkpoint_save(dir, &a, &oa, &sa, &ta, &err) == 0, "%s", err.msg);
	CHECK(checkpoint_load_model(dir, &b, CHECKPOINT_STRICT, NULL, &err) == 0);
	CHECK(b.params[0] == 42.0f);
	struct test_proc p;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", test_tmpdir());
	test_run(cmd, 10, &p);
	CHECK_STR(p.out, "ckpt\n");
	test_proc_free(&p);
	/* another optimizer kind is refused */
	struct optim os;
	cfg.kind = OPTIM_SGD;
	optim_init(&os, &cfg, a.desc.param_count, &err);
	CHECK(checkpoint_load_training(dir, &os, &sb, &tb, &err) == -1);
	CHECK_CONTAINS(err.msg, "adam");
	optim_free(&os);
	optim_free(&oa);
	optim_free(&ob);
	model_destroy(&a);
	model_destroy(&b);
	free(dir);
}

/* Writes m's entries to path, with one key renamed/reshaped by the
 * caller's hook. */
static void write_variant(const char *path, const struct model *m, const char *prefix,
			  const char *reshape_key, int64_t new_dim0, const char *skip_key)
{
	int n = m->desc.entry_count, k = 0;
	struct st_tensor *t = calloc((size_t)n, sizeof(*t));
	float *big = calloc(1000 * 1024, sizeof(float));
	struct trainer_error err;

	for (int i = 0; i < n; i++) {
		const struct state_entry *e = &m->desc.entries[i];
		if (skip_key && strcmp(e->key, skip_key) == 0)
			continue;
		struct st_tensor *x = &t[k++];
		snprintf(x->name, sizeof(x->name), "%s%s", prefix, e->key);
		x->ndim = e->ndim;
		memcpy(x->shape, e->shape, sizeof(e->shape));
		snprintf(x->dtype, sizeof(x->dtype), e->kind == ENTRY_BATCHES_TRACKED ? "I64" : "F32");
		x->data = e->kind == ENTRY_BATCHES_TRACKED ? (const void *)&m->batches_tracked
			: (const void *)((e->kind == ENTRY_PARAM ? m->params : m->state) + e->offset);
		x->bytes = e->kind == ENTRY_BATCHES_TRACKED ? 8 : e->count * sizeof(float);
		if (reshape_key && strcmp(e->key, reshape_key) == 0) {
			x->shape[0] = new_dim0;
			x->bytes = x->bytes / (size_t)e->shape[0] * (size_t)new_dim0;
			x->data = big;
		}
	}
	CHECK(st_write(path, t, k, NULL, 0, &err) == 0);
	free(t);
	free(big);
}

static void test_wrong_shape_names_the_key(void)
{
	struct model a;
	struct trainer_error err = { "" };
	char *path = test_path(test_tmpdir(), "bad.safetensors");

	if (tiny_model(&a, 14, 1))
		return;
	write_variant(path, &a, "", "features.conv0.weight", 9, NULL);
	CHECK(checkpoint_load_model(path, &a, CHECKPOINT_STRICT, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "features.conv0.weight");
	CHECK_CONTAINS(err.msg, "[9, 3, 7, 7]");
	CHECK_CONTAINS(err.msg, "[8, 3, 7, 7]");
	/* also under --init: only the classifier may differ */
	CHECK(checkpoint_load_model(path, &a, CHECKPOINT_INIT, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "features.conv0.weight");
	write_variant(path, &a, "", NULL, 0, "features.norm5.running_var");
	CHECK(checkpoint_load_model(path, &a, CHECKPOINT_STRICT, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "missing key 'features.norm5.running_var'");
	model_destroy(&a);
	free(path);
}

static void test_truncated_file_fails_cleanly(void)
{
	struct model a;
	struct trainer_error err = { "" };
	char *dir = test_path(test_tmpdir(), "ckpt");
	char *file = test_path(dir, "model.safetensors");
	char *cut = test_path(test_tmpdir(), "cut.safetensors");
	size_t len;

	if (tiny_model(&a, 14, 1))
		return;
	CHECK(checkpoint_save(dir, &a, NULL, NULL, NULL, &err) == 0);
	char *bytes = test_read_file(file, &len);
	CHECK(bytes && len > 100);
	size_t cuts[3] = { len - 1, len / 2, 5 };
	for (int i = 0; i < 3 && bytes; i++) {
		test_write_file(cut, bytes, cuts[i]);
		CHECK(checkpoint_load_model(cut, &a, CHECKPOINT_STRICT, NULL, &err) == -1);
		CHECK_CONTAINS(err.msg, "truncated");
	}
	free(bytes);
	free(cut);
	free(file);
	free(dir);
	model_destroy(&a);
}

static void test_init_accepts_torchvision_state_dict(void)
{
	struct model src, dst;
	struct trainer_error err = { "" };
	char note[256] = "";
	char *path = test_path(test_tmpdir(), "imagenet.safetensors");

	if (tiny_model(&src, 14, 3) || tiny_model(&dst, 14, 4))
		return;
	/* DataParallel prefix, a 1000-class classifier, no num_batches_tracked */
	write_variant(path, &src, "module.", "classifier.weight", 1000, "features.norm0.num_batches_tracked");
	CHECK(checkpoint_load_model(path, &dst, CHECKPOINT_STRICT, NULL, &err) == -1);
	CHECK_CONTAINS(err.msg, "module.features.conv0.weight");
	CHECK_MSG(checkpoint_load_model(path, &dst, CHECKPOINT_INIT, note, &err) == 0, "%s", err.msg);
	CHECK_CONTAINS(note, "dropped");
	CHECK_CONTAINS(note, "[1000, ");
	const struct state_entry *e = model_find_entry(&dst.desc, "features.conv0.weight");
	CHECK(e && memcmp(dst.params + e->offset, src.params + e->offset, e->count * 4) == 0);
	model_destroy(&src);
	model_destroy(&dst);
	free(path);
}

const struct test_case checkpoint_tests[] = {
	{ "round_trip_bit_exact", test_round_trip_bit_exact },
	{ "wrong_shape_names_the_key", test_wrong_shape_names_the_key },
	{ "truncated_file_fails_cleanly", test_truncated_file_fails_cleanly },
	{ "init_accepts_torchvision_state_dict", test_init_accepts_torchvision_state_dict },
	{ 0 }
};
