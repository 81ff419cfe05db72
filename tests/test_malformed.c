/* test_malformed.c - malformed files are refused with one line naming
 * the file and the field, never a crash, overrun or silent acceptance
 * (issue 19; the safetensors cases are the findings of a libFuzzer run
 * of the reader, kept as regression cases): unknown dtype, __metadata__
 * twice or not an object, shapes of 1e300 or wrapping element counts,
 * fractional offsets, a tensor name twice or longer than 127 bytes, a
 * directory as the file; checkpoint training state out of range; and a
 * CSV with a UTF-8 byte-order mark, which is accepted.
 * What it does not test: well-formed round trips (test_checkpoint.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"
#include "train/checkpoint.h"
#include "data/sets/set.h"
#include "train/safetensors.h"

static int one_line(const char *s) { return s && *s && !strchr(s, '\n'); }

/* tmp/name: the 8-byte header length, json, then data_bytes zero bytes. */
static char *write_st(const char *name, const char *json, size_t data_bytes)
{
	char *path = test_path(test_tmpdir(), name);
	FILE *f = fopen(path, "wb");
	uint64_t len = strlen(json);

	for (int i = 0; f && i < 8; i++)
		fputc((int)(len >> (8 * i)) & 0xff, f);
	if (f) {
		fputs(json, f);
		for (size_t i = 0; i < data_bytes; i++)
			fputc(0, f);
		fclose(f);
	}
	return path;
}

/* st_read of json must fail with a message containing want. */
static void refused(const char *json, size_t data_bytes, const char *want)
{
	struct st_file f;
	struct trainer_error err = { "" };
	char *path = write_st("x.safetensors", json, data_bytes);

	CHECK_MSG(st_read(path, &f, &err) == -1, "accepted: %s", json);
	CHECK_CONTAINS(err.msg, want);
	CHECK_CONTAINS(err.msg, "x.safetensors");
	CHECK(one_line(err.msg));
	free(path);
}

static void test_safetensors_findings_are_refused(void)
{
	refused("{\"w\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
		"tensor 'w': unknown dtype 'Q7'");
	refused("{\"__metadata__\":{\"a\":\"1\"},\"__metadata__\":{\"b\":\"2\"}}", 0,
		"__metadata__: given twice");
	refused("{\"__metadata__\":[1,2]}", 0, "__metadata__: not an object");
	refused("{\"w\":{\"dtype\":\"F32\",\"shape\":[1e300],\"data_offsets\":[0,4]}}", 4,
		"tensor 'w': shape");
	refused("{\"w\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,0]}}",
		0, "tensor 'w'");
	refused("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
		"tensor 'w': shape");
	refused("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0.5,4.5]}}", 8,
		"tensor 'w': data_offsets");
	refused("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
		"\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2,
		"tensor 'w': given twice");
	/* fuzz-safetensors, 10-minute run: a raw newline in a tensor name made
	 * a two-line message; control characters in names, metadata keys and
	 * values are refused without printing them */
	refused("{\"__met\xff\xff\n\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
		"header: a name with a control character at byte 7");
	refused("{\"__metadata__\":{\"epoch\":\"1\\n2\"}}", 0,
		"__metadata__ 'epoch': value with a control character at byte 1");
	refused("{\"__metadata__\":{\"e\\u001b[2J\":\"1\"}}", 0,
		"__metadata__: a key with a control character at byte 1");
	char json[512], name[160];
	memset(name, 'n', 140);
	name[140] = 0;
	snprintf(json, sizeof(json), "{\"%s\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
		 name);
	refused(json, 1, "name longer than 127 bytes");
	/* a directory: refused before any allocation */
	struct st_file f;
	struct trainer_error err = { "" };
	CHECK(st_read(test_tmpdir(), &f, &err) == -1);
	CHECK_CONTAINS(err.msg, "not a regular file");
	/* still accepted: a well-formed file */
	char *ok = write_st("ok.safetensors",
			    "{\"__metadata__\":{\"k\":\"v\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],"
			    "\"data_offsets\":[0,8]}}", 8);
	CHECK_MSG(st_read(ok, &f, &err) == 0, "%s", err.msg);
	if (f.count == 1)
		st_free(&f);
	free(ok);
}

/* A training.safetensors with metadata `bad` in place of key's value. */
static void state_refused(const char *key, const char *bad, const char *want)
{
	const char *keys[12] = { "epoch", "step", "best_val_loss", "rng0", "rng1", "rng2", "rng3",
				 "optimizer", "optimizer_steps", "lr_multiplier",
				 "plateau_bad_epochs", "plateau_best_loss" };
	const char *vals[12] = { "1", "2", "0.5", "0000000000000001", "0000000000000002",
				 "0000000000000003", "0000000000000004", "sgd", "3", "1", "0", "0.5" };
	char json[2048], dir[1024];
	size_t used = (size_t)snprintf(json, sizeof(json), "{\"__metadata__\":{");

	for (int i = 0; i < 12; i++) {
		const char *v = strcmp(keys[i], key) == 0 ? bad : vals[i];
		if (!strncmp(key, "rng", 3) && !strcmp(bad, "zero") && !strncmp(keys[i], "rng", 3))
			v = "0000000000000000";
		used += (size_t)snprintf(json + used, sizeof(json) - used, "%s\"%s\":\"%s\"",
					 i ? "," : "", keys[i], v);
	}
	snprintf(json + used, sizeof(json) - used,
		 "},\"optim.m\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
	snprintf(dir, sizeof(dir), "%s/ck", test_tmpdir());
	mkdir(dir, 0755);
	free(write_st("ck/training.safetensors", json, 8));
	struct optim o;
	struct optim_config cfg;
	struct schedule s;
	struct train_state st;
	struct trainer_error err = { "" };
	optim_config_default(&cfg);
	cfg.kind = OPTIM_SGD;
	CHECK(optim_init(&o, &cfg, 2, &err) == 0);
	schedule_init(&s, 1e-3, LR_SCALE_NONE, 1, 0, 1);
	int rc = checkpoint_load_training(dir, &o, &s, &st, &err);
	if (!want) {
		CHECK_MSG(rc == 0, "%s=%s refused: %s", key, bad, err.msg);
	} else {
		CHECK_MSG(rc == -1, "%s=%s accepted", key, bad);
		CHECK_CONTAINS(err.msg, want);
		CHECK(one_line(err.msg));
	}
	optim_free(&o);
}

static void test_training_state_out_of_range_is_refused(void)
{
	state_refused("epoch", "1", NULL);  /* the base file loads */
	state_refused("epoch", "4294967297", "metadata 'epoch': '4294967297'");
	state_refused("plateau_bad_epochs", "-4294967296", "metadata 'plateau_bad_epochs'");
	state_refused("step", "-1", "metadata 'step': '-1'");
	state_refused("optimizer_steps", "-5", "metadata 'optimizer_steps'");
	state_refused("best_val_loss", "nan", "metadata 'best_val_loss': 'nan'");
	state_refused("best_val_loss", "inf", NULL);  /* before any validation */
	state_refused("lr_multiplier", "-inf", "metadata 'lr_multiplier': '-inf'");
	state_refused("rng0", "zero", "all zero");
	state_refused("rng1", "12", "metadata 'rng1'");
}

static void test_csv_with_utf8_bom_is_accepted(void)
{
	char *path = test_path(test_tmpdir(), "Data_Entry_2017_v2020.csv");
	FILE *f = fopen(path, "w");
	struct data_list l = { 0 };
	char err[1024] = "";

	fputs("\xEF\xBB\xBF", f);  /* then the 2017 variant fixture, as a spreadsheet saves it */
	char *fixture = test_path(test_src_dir(), "tests/fixtures/data/entry_2017.csv");
	size_t len = 0;
	char *text = test_read_file(fixture, &len);
	if (text)
		fwrite(text, 1, len, f);
	free(text);
	free(fixture);
	fclose(f);
	CHECK_MSG(data_nih_read_entries(path, &l, err, sizeof(err)) == 0, "%s", err);
	CHECK_INT(l.count, 4);
	data_list_free(&l);
	free(path);
}

const struct test_case malformed_tests[] = {
	{ "safetensors_findings_are_refused", test_safetensors_findings_are_refused },
	{ "training_state_out_of_range_is_refused", test_training_state_out_of_range_is_refused },
	{ "csv_with_utf8_bom_is_accepted", test_csv_with_utf8_bom_is_accepted },
	{ 0 }
};
