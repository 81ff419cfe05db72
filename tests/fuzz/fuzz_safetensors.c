/* fuzz_safetensors.c - libFuzzer target for the safetensors reader
 * (safetensors.c), which loads every checkpoint, `--init` and `--resume`,
 * and for the checkpoint's training state on top of it
 * (checkpoint_load_training: metadata ranges, optimizer moments). Each
 * input is written as DIR/training.safetensors; st_read must refuse it
 * with one line or return tensors whose data lies inside the file and
 * matches dtype x shape, with unique names; then the training state is
 * loaded for an SGD and an Adam optimizer of two parameters. Seeds: a
 * valid training state of each and a file of several dtypes.
 * What it does not do: load model weights by name (the same reader).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "fuzz_files.h"
#include "train/safetensors.h"

static volatile uint8_t sink;   /* keeps the reads of every byte */

static void one_line(const struct trainer_error *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n'))
		abort();
}

static void check_file(const struct st_file *f)
{
	for (int i = 0; i < f->count; i++) {
		const struct st_tensor *t = &f->tensors[i];
		const uint8_t *d = t->data;
		if (memchr(t->name, 0, sizeof(t->name)) == NULL || t->ndim < 0 || t->ndim > 8 ||
		    (t->bytes && (d < f->image || d + t->bytes > f->image + f->size)))
			abort();
		if (st_find(f, t->name) != t)
			abort();   /* a name given twice got through */
		uint8_t sum = 0;
		for (size_t b = 0; b < t->bytes; b++)
			sum += d[b];
		sink += sum;
	}
	for (int i = 0; i < f->meta_count; i++)
		if (!f->meta[i].key || !f->meta[i].value || st_meta_get(f, f->meta[i].key) == NULL)
			abort();
}

static void load_state(const char *dir, enum optim_kind kind)
{
	struct optim o;
	struct optim_config cfg;
	struct schedule s;
	struct train_state st;
	struct trainer_error err = { "" };
	optim_config_default(&cfg);
	cfg.kind = kind;
	if (optim_init(&o, &cfg, 2, &err) != 0)
		abort();
	schedule_init(&s, 1e-3, LR_SCALE_NONE, 1, 0, 1);
	if (checkpoint_load_training(dir, &o, &s, &st, &err) != 0)
		one_line(&err);
	optim_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write("training.safetensors", data, size);
	struct st_file f;
	struct trainer_error err = { "" };
	if (st_read(path, &f, &err) == 0) {
		check_file(&f);
		st_free(&f);
	} else {
		one_line(&err);
	}
	load_state(fuzz_dir(), OPTIM_SGD);
	load_state(fuzz_dir(), OPTIM_ADAM);
	return 0;
}

static void seed_state(const char *dir, const char *name, const char *kind)
{
	static const float mv[4] = { 0.5f, -1, 2, 0 };
	struct st_tensor t[2] = { { .name = "optim.m", .dtype = "F32", .ndim = 1, .shape = { 2 },
				    .data = mv, .bytes = 8 },
				  { .name = "optim.v", .dtype = "F32", .ndim = 1, .shape = { 2 },
				    .data = mv + 2, .bytes = 8 } };
	const struct st_meta meta[12] = {
		{ "epoch", "1" }, { "step", "2" }, { "best_val_loss", "0.5" },
		{ "rng0", "0000000000000001" }, { "rng1", "0000000000000002" },
		{ "rng2", "0000000000000003" }, { "rng3", "0000000000000004" },
		{ "optimizer", kind }, { "optimizer_steps", "3" }, { "lr_multiplier", "1" },
		{ "plateau_bad_epochs", "0" }, { "plateau_best_loss", "0.5" } };
	struct trainer_error err = { "" };
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	st_write(path, t, strcmp(kind, "adam") ? 1 : 2, meta, 12, &err);
}

static void seed_dtypes(const char *dir)
{
	static const uint8_t bytes[64];
	struct st_tensor t[4] = {
		{ .name = "a.weight", .dtype = "F32", .ndim = 4, .shape = { 2, 1, 1, 2 }, .data = bytes, .bytes = 16 },
		{ .name = "b.bias", .dtype = "F16", .ndim = 1, .shape = { 3 }, .data = bytes, .bytes = 6 },
		{ .name = "c.num_batches_tracked", .dtype = "I64", .ndim = 0, .data = bytes, .bytes = 8 },
		{ .name = "d", .dtype = "U8", .ndim = 2, .shape = { 2, 2 }, .data = bytes, .bytes = 4 } };
	const struct st_meta meta[1] = { { "format", "pt" } };
	struct trainer_error err = { "" };
	char path[1024];
	snprintf(path, sizeof(path), "%s/seed-dtypes", dir);
	st_write(path, t, 4, meta, 1, &err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	if (!dir)
		return 0;
	seed_state(dir, "seed-sgd", "sgd");
	seed_state(dir, "seed-adam", "adam");
	seed_dtypes(dir);
	return 0;
}
