/* test_data_pack.c - group data-pack: the `chexnet pack` command as users
 * run it (through build/chexnet, or build/chexnet-data when the trainer is
 * not built): progress and summary, a rerun keeping exactly the complete
 * shards of the same plan, a failed repack never leaving an index, a
 * one-line error with a non-zero exit for every bad input, and a re-pack
 * after images come and go moving no patient between train and val.
 * What it does not do: read the pack back (test_data_loader.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data/pack/shard.h"
#include "data/codec/image_decode.h"
#include "data/pack/shard_index_read.h"
#include "base/classes.h"
#include "runner.h"

static const char *data_tool(void)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/chexnet", test_build_dir());
	if (access(path, X_OK) != 0)
		snprintf(path, sizeof(path), "%s/chexnet-data", test_build_dir());
	return path;
}

/* Runs `TOOL args`; the caller checks p and frees it. */
static void run_tool(const char *args, struct test_proc *p)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd), "'%s' %s", data_tool(), args);
	CHECK(test_run(cmd, 120, p) == 0);
}

/* Runs sh -c cmd in tmpdir; 0 when it exited 0. */
static int shell(const char *cmd)
{
	char full[12000];
	struct test_proc p;
	snprintf(full, sizeof(full), "cd '%s' && %s", test_tmpdir(), cmd);
	int ok = test_run(full, 30, &p) == 0 && p.exit_code == 0;
	CHECK_MSG(ok, "%s: %s", cmd, p.err);
	test_proc_free(&p);
	return ok ? 0 : -1;
}

/* tmpdir/nih: 30 synthetic images of 32x32. */
static int make_nih(void)
{
	struct test_proc p;
	char args[8192];
	snprintf(args, sizeof(args), "synth --out '%s/nih' --count 30 --size 32 --seed 4", test_tmpdir());
	run_tool(args, &p);
	CHECK_INT(p.exit_code, 0);
	int rc = p.exit_code == 0 ? 0 : -1;
	test_proc_free(&p);
	return rc;
}

/* `pack --data nih --out pack --size 16 --shards N`: its exit code, stdout
 * kept in out. */
static int pack(int shards, char *out, size_t out_bytes)
{
	struct test_proc p;
	char args[8192];
	const char *t = test_tmpdir();
	snprintf(args, sizeof(args), "pack --data '%s/nih' --out '%s/pack' --size 16 --shards %d",
		 t, t, shards);
	run_tool(args, &p);
	snprintf(out, out_bytes, "%s", p.out);
	int code = p.exit_code;
	test_proc_free(&p);
	return code;
}

static void test_pack_rerun_keeps_exactly_the_complete_shards(void)
{
	char out[4096], index[4200];
	if (make_nih() != 0)
		return;
	CHECK_INT(pack(2, out, sizeof(out)), 0);
	CHECK_CONTAINS(out, "packed 30 images");
	CHECK_CONTAINS(out, "into 4 shards (0 kept from a previous run)");
	CHECK_INT(pack(2, out, sizeof(out)), 0);
	CHECK_CONTAINS(out, "into 4 shards (4 kept from a previous run)");
	/* the index records how images became 8 bits */
	struct shard_index ix;
	char err[1024] = "", dir[4200];
	snprintf(dir, sizeof(dir), "%s/pack", test_tmpdir());
	CHECK_MSG(shard_index_read(dir, &ix, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(ix.pixels, IMAGE_PIXEL_RULE);
	shard_index_free(&ix);
	/* one label changed, same count: only the shard holding it is redone */
	CHECK_INT(shell("cd nih && awk -F, -v OFS=, 'NR == 2 { $2 = ($2 == \"Hernia\" ? \"Mass\" : "
			"\"Hernia\") } 1' Data_Entry_2017_v2020.csv > e.csv && "
			"mv e.csv Data_Entry_2017_v2020.csv"), 0);
	CHECK_INT(pack(2, out, sizeof(out)), 0);
	CHECK_CONTAINS(out, "into 4 shards (3 kept from a previous run)");
	/* a failed repack (new plan, an image missing) takes the old index
	 * away: the old index over new shards is never a pack */
	CHECK_INT(shell("rm nih/images/00000001_000.png"), 0);   /* a train image */
	CHECK_INT(pack(3, out, sizeof(out)), 1);
	snprintf(index, sizeof(index), "%s/pack/%s", test_tmpdir(), SHARD_INDEX_NAME);
	CHECK_MSG(access(index, F_OK) != 0, "a failed repack left the old index");
}

static void test_pack_progress_goes_to_stderr(void)
{
	struct test_proc p;
	char args[8192];
	const char *t = test_tmpdir();
	if (make_nih() != 0)
		return;
	snprintf(args, sizeof(args), "pack --data '%s/nih' --out '%s/pack' --size 16", t, t);
	run_tool(args, &p);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.err, "images/s");
	CHECK_CONTAINS(p.err, "ETA");
	CHECK_CONTAINS(p.out, "packed 30 images (train ");
	test_proc_free(&p);
}

/* bad label, wrong field count, missing image, unknown option, bad number */
static void test_pack_bad_inputs_fail_with_one_line(void)
{
	struct { const char *setup, *opts, *want; int code; } cases[] = {
		{ "awk -F, -v OFS=, 'NR == 3 { $2 = \"Pneumonitis\" } 1' nih.bak/Data_Entry_2017_v2020.csv > nih/Data_Entry_2017_v2020.csv",
		  "", "Data_Entry_2017_v2020.csv' line 3: label 'Pneumonitis'", 1 },
		{ "cp nih.bak/Data_Entry_2017_v2020.csv nih/ && sed -i '5s/,0.143,0.143$/,0.143/' nih/Data_Entry_2017_v2020.csv",
		  "", "Data_Entry_2017_v2020.csv' line 5: 10 fields, expected 11", 1 },
		{ "cp nih.bak/Data_Entry_2017_v2020.csv nih/ && rm nih/images/00000002_000.png",
		  "", "image '00000002_000.png': not found", 1 },
		{ "true", "--bogus 1", "'--bogus': unknown option", 2 },
		{ "true", "--size 12x", "--size '12x': expected an integer", 2 },
	};
	const char *t = test_tmpdir();
	char args[12000];
	struct test_proc p;
	if (make_nih() != 0 || shell("cp -r nih nih.bak") != 0)
		return;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		if (shell(cases[k].setup) != 0)
			continue;
		snprintf(args, sizeof(args), "pack --data '%s/nih' --out '%s/bad%zu' %s", t, t, k, cases[k].opts);
		run_tool(args, &p);
		CHECK_INT(p.exit_code, cases[k].code);
		CHECK_CONTAINS(p.err, cases[k].want);
		CHECK_MSG(p.out[0] == 0, "stdout: %s", p.out);
		if (cases[k].code == 1) {
			snprintf(args, sizeof(args), "%s/bad%zu/%s", t, k, SHARD_INDEX_NAME);
			CHECK_MSG(access(args, F_OK) != 0, "a failed pack left an index");
		}
		test_proc_free(&p);
	}
}

/* Each record's name and split (0 train, 1 val) of pack: how many. */
static int read_sides(const char *pack, char names[][SHARD_NAME_BYTES], int *sides, int max)
{
	char err[1024] = "", dir[4200];
	static uint8_t rec[1 << 16];
	int n = 0;
	snprintf(dir, sizeof(dir), "%s/%s", test_tmpdir(), pack);
	for (int split = 0; split < 2; split++) {
		struct shard_set set;
		CHECK_MSG(shard_set_open(&set, dir, split, err, sizeof(err)) == 0, "%s", err);
		for (size_t i = 0; i < set.count && n < max; i++, n++) {
			struct shard_record_info info;
			CHECK_MSG(shard_set_read(&set, i, rec, &info, err, sizeof(err)) == 0, "%s", err);
			snprintf(names[n], SHARD_NAME_BYTES, "%s", info.name);
			sides[n] = split;
		}
		shard_set_close(&set);
	}
	return n;
}

/* How many names of a are in b on the other side; *common: in both. */
static int moved(char a[][SHARD_NAME_BYTES], const int *sa, int na, char b[][SHARD_NAME_BYTES],
		 const int *sb, int nb, int *common)
{
	int m = 0;
	*common = 0;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				++*common;
				m += sa[i] != sb[j];
			}
	return m;
}

/* Re-packing after images are added and removed moves no patient between
 * train and val: the split depends on the patient's id and the set's key
 * (kept in DATA/chexnet-key.txt and reused), never on the other files.
 * NIH layout (patients from the CSV): a list of 35 images, then one
 * without its first 10 and with 25 more. Generic layout without a patient
 * column (a patient per image path, a key made at the first pack): 30
 * rows, then 8 files removed and 20 added. Before the key, the split
 * depended on every name and label (the same 12 images split 6/3, 7/2). */
static void test_repack_moves_no_patient(void)
{
	static char n1[128][SHARD_NAME_BYTES], n2[128][SHARD_NAME_BYTES];
	static int s1[128], s2[128];
	struct test_proc p;
	char args[8192];
	const char *t = test_tmpdir();
	int common;
	snprintf(args, sizeof(args), "synth --out '%s/big' --count 80 --size 16 --seed 5", t);
	run_tool(args, &p);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	if (shell("cp big/train_val_list.txt all.txt && head -35 all.txt > big/train_val_list.txt"))
		return;
	snprintf(args, sizeof(args), "pack --data '%s/big' --out '%s/p1' --size 16 --val-fraction 0.3", t, t);
	run_tool(args, &p);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	if (shell("sed -n 11,60p all.txt > big/train_val_list.txt"))
		return;
	snprintf(args, sizeof(args), "pack --data '%s/big' --out '%s/p2' --size 16 --val-fraction 0.3", t, t);
	run_tool(args, &p);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	int a = read_sides("p1", n1, s1, 128), b = read_sides("p2", n2, s2, 128);
	CHECK_INT(moved(n1, s1, a, n2, s2, b, &common), 0);
	CHECK_INT(common, 25);
	/* generic, no patient column */
	char header[1024] = "path";
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		snprintf(header + strlen(header), sizeof(header) - strlen(header), ",%s", data_class_names[c]);
	snprintf(args, sizeof(args), "mkdir -p gen/img && rows() { for f in $(sed -n \"$1\" all.txt); do "
		 "cp big/images/$f gen/img/; echo img/$f,0,0,0,0,0,0,0,0,0,0,0,0,0,1; done; } && "
		 "echo '%s' > gen/test.csv && echo '%s' > gen/train.csv && rows 1,30p >> gen/train.csv && "
		 "tail -1 gen/train.csv >> gen/test.csv && sed -i '$d' gen/train.csv", header, header);
	if (shell(args))
		return;
	snprintf(args, sizeof(args), "pack --data '%s/gen' --out '%s/g1' --size 16 --val-fraction 0.3", t, t);
	run_tool(args, &p);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	snprintf(args, sizeof(args), "test -s gen/chexnet-key.txt && rows() { for f in $(sed -n \"$1\" "
		 "all.txt); do cp big/images/$f gen/img/; echo img/$f,0,0,0,0,0,0,0,0,0,0,0,0,0,1; done; } "
		 "&& for f in $(sed -n 1,8p all.txt); do rm gen/img/$f; done && "
		 "(echo '%s'; sed -n 10,29p gen/train.csv; rows 31,50p) > gen/t.csv && mv gen/t.csv "
		 "gen/train.csv", header);
	if (shell(args))
		return;
	snprintf(args, sizeof(args), "pack --data '%s/gen' --out '%s/g2' --size 16 --val-fraction 0.3", t, t);
	run_tool(args, &p);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	a = read_sides("g1", n1, s1, 128), b = read_sides("g2", n2, s2, 128);
	CHECK_INT(moved(n1, s1, a, n2, s2, b, &common), 0);
	CHECK_INT(common, 20);
	int val = 0;
	for (int i = 0; i < b; i++)
		val += s2[i];
	CHECK_MSG(val > 0 && val < b, "%d of %d in val: the split must have both sides", val, b);
}

const struct test_case data_pack_tests[] = {
	{ "pack_rerun_keeps_exactly_the_complete_shards", test_pack_rerun_keeps_exactly_the_complete_shards },
	{ "pack_progress_goes_to_stderr", test_pack_progress_goes_to_stderr },
	{ "pack_bad_inputs_fail_with_one_line", test_pack_bad_inputs_fail_with_one_line },
	{ "repack_moves_no_patient", test_repack_moves_no_patient },
	{ 0 }
};
