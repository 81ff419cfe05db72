/* test_out_hostile.c - every writer of an output folder (train --out,
 * eval --plots, synth --out, pack --out, predict --cam, curves --out,
 * locate) against a hostile or unlucky folder: a crafted run.json naming
 * foreign files, `..` and absolute names in the record, links in the
 * folder and in the record, entries owned by another uid (in a run, and
 * where a picture or a pack's index goes), a foreign file planted in a
 * checkpoint, the records of a run that ended (no checkpoint), a home
 * folder given to --overwrite, a real data set's folder given to synth,
 * the user's own index.txt and skipped.txt given to pack. Each case
 * takes a snapshot of every entry under the case's folder (the parent
 * of the output: type, owner, link target, checksum and size) before and
 * after: a refusal changes nothing (the new ones are one line);
 * --overwrite keeps every foreign file's bytes (under NAME.foreign-N)
 * and changes nothing outside the run's own names. Victims live beside
 * the output folder.
 * What it does not test: the run folder's normal life (test_run_record.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define OPTS "--size 64 --seed 7 --batch 8 --threads 1 --quiet"
#define DATA "--synthetic --synthetic-images 32"
/* What a run writes in out/: excluded from the "nothing else changed" view */
#define RUN_OWN "^\\./out/(run\\.json|metrics\\.csv|test\\.json|tb|last|best|\\.generations)( |/|$)"

static void sh(const char *cmd, struct test_proc *p, int timeout)
{
	char full[8192];

	snprintf(full, sizeof(full), "cd '%s' && B='%s' && %s", test_tmpdir(), test_build_dir(), cmd);
	CHECK(test_run(full, timeout, p) == 0);
}

/* Every entry under the case's folder whose path does not match `skip`
 * (an ERE; NULL: none): "path type uid checksum-or-target", sorted. */
static char *snapshot(const char *skip)
{
	char cmd[2048];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r f; do "
		 "if [ -L \"$f\" ]; then echo \"$f L $(stat -c %%u \"$f\") $(readlink \"$f\")\"; "
		 "elif [ -f \"$f\" ]; then echo \"$f F $(stat -c %%u \"$f\") $(cksum < \"$f\")\"; "
		 "else echo \"$f D $(stat -c %%u \"$f\")\"; fi; done | "
		 "grep -vE '%s' || true", skip ? skip : "^$");
	sh(cmd, &p, 60);
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

/* The checksums of every regular file not matching skip, sorted: the
 * bytes kept, whatever their names became. */
static char *contents(const char *skip)
{
	char cmd[1024];
	struct test_proc p;

	snprintf(cmd, sizeof(cmd), "find . -type f | grep -vE '%s' | while IFS= read -r f; do "
		 "cksum < \"$f\"; done | LC_ALL=C sort", skip);
	sh(cmd, &p, 60);
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

/* A finished one-epoch run in real/ (with --test: test.json, thresholds):
 * a copy of the one the group's first case trains in the run's folder
 * beside the cases' own (each would train the same: it is seeded). */
static int real_run(void)
{
	struct test_proc p;

	sh("S=../hostile-out-real && { [ -e $S/ready ] || { rm -rf $S && mkdir $S && (cd $S && "
	   "\"$B\"/chexnet train " DATA " --epochs 1 --out real --test " OPTS ") && "
	   ": > $S/ready; }; } && cp -a $S/real real", &p, 120);
	int ok = p.exit_code == 0;
	CHECK_MSG(ok, "train: exit %d: %s", p.exit_code, test_tail(p.err, 800));
	test_proc_free(&p);
	return ok ? 0 : -1;
}

/* cmd fails, its stderr holds needle, and nothing under the folder changed. */
static void refused_unchanged(const char *cmd, const char *needle)
{
	struct test_proc p;
	char *before = snapshot(NULL);

	sh(cmd, &p, 120);
	CHECK_MSG(p.exit_code != 0, "exit 0 for: %s", cmd);
	CHECK_CONTAINS(p.err, needle);
	test_proc_free(&p);
	char *after = snapshot(NULL);
	CHECK_STR(after, before);
	free(before);
	free(after);
}

/* refused_unchanged, and the refusal is exactly one line on stderr. */
static void refused_in_one_line(const char *cmd, const char *needle)
{
	struct test_proc p;
	char *before = snapshot(NULL);

	sh(cmd, &p, 120);
	CHECK_MSG(p.exit_code != 0, "exit 0 for: %s", cmd);
	CHECK_CONTAINS(p.err, needle);
	CHECK_MSG(strchr(p.err, '\n') == p.err + strlen(p.err) - 1, "not one line: %s",
		  test_tail(p.err, 800));
	test_proc_free(&p);
	char *after = snapshot(NULL);
	CHECK_STR(after, before);
	free(before);
	free(after);
}

/* cmd succeeds; the bytes of every file but the old run's own (`own`, an
 * ERE) are still there, whatever their names became, no file beyond the
 * new run's own appeared, and nothing outside out/ changed. */
static void overwrite_keeps_foreign(const char *cmd, const char *needle, const char *own)
{
	struct test_proc p;
	char *before = contents(own);
	char *victims = snapshot("^\\./out(/|$)");

	sh(cmd, &p, 120);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 800));
	CHECK_CONTAINS(p.err, needle);
	test_proc_free(&p);
	char *after = contents(RUN_OWN);
	char *victims_after = snapshot("^\\./out(/|$)");
	CHECK_STR(after, before);
	CHECK_STR(victims_after, victims);
	free(before);
	free(after);
	free(victims);
	free(victims_after);
}

#define TRAIN "\"$B\"/chexnet train " DATA " --epochs 1 --out out " OPTS

/* A real run's record in a folder of someone else's, its "files" naming
 * their thesis and data: refused, then --overwrite sets them aside. */
static void test_record_claiming_foreign_files_is_not_trusted(void)
{
	struct test_proc p;

	if (real_run())
		return;
	sh("mkdir -p out/data && echo thesis > out/thesis.tex && echo 1,2 > out/data/labels.csv && "
	   "sed 's/\"files\":.*/\"files\": [\"run.json\", \"thesis.tex\", \"data\"],/' real/run.json "
	   "> out/run.json && grep -q thesis.tex out/run.json", &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_unchanged(TRAIN, "holds the records of a run that ended");
	refused_unchanged(TRAIN, "its run.json lists 'thesis.tex', 'data', which chexnet never writes");
	overwrite_keeps_foreign(TRAIN " --overwrite", "set aside (none of them deleted): 'data' -> "
				"'data.foreign-1', 'thesis.tex' -> 'thesis.tex.foreign-1'",
				"^\\./out/run\\.json$");
	sh("cat out/thesis.tex.foreign-1 out/data.foreign-1/labels.csv", &p, 30);
	CHECK_STR(p.out, "thesis\n1,2\n");
	test_proc_free(&p);
}

/* A record naming `..` and absolute paths is no record: all of the
 * folder is foreign, --overwrite too is refused there (not a run
 * folder), and the files those names point at stay. */
static void test_record_naming_dotdot_and_absolute_paths(void)
{
	struct test_proc p;

	if (real_run())
		return;
	sh("mkdir out && echo victim > victim.txt && "
	   "sed 's|\"files\":.*|\"files\": [\"run.json\", \"../victim.txt\", \"/etc/hostname\"],|' "
	   "real/run.json > out/run.json && cp real/metrics.csv out/", &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_unchanged(TRAIN, "holds 2 entries chexnet did not write");
	refused_in_one_line(TRAIN " --overwrite", "chexnet: train: --overwrite: --out 'out': holds 2 "
			    "entries chexnet did not write and no run.json of chexnet's: not a run "
			    "folder, nothing set aside");
}

/* Links where the run's own names are, listed by the record too: refused
 * before anything is written, never followed. */
static void test_links_in_the_folder_and_the_record(void)
{
	if (real_run())
		return;
	struct test_proc p;
	sh("cp -r real out && echo victim > victim.txt && mkdir victimdir && "
	   "cp real/last/* victimdir/ && rm out/metrics.csv && "
	   "ln -s ../victim.txt out/metrics.csv", &p, 30);
	test_proc_free(&p);
	refused_unchanged(TRAIN " --overwrite", "'metrics.csv' is a symbolic link: refused");
	sh("rm out/metrics.csv && cp real/metrics.csv out/ && rm -r out/last && "
	   "ln -s ../victimdir out/last", &p, 30);
	test_proc_free(&p);
	refused_unchanged(TRAIN " --overwrite", "'last' is a symbolic link: refused");
	refused_unchanged("\"$B\"/chexnet train " DATA " --epochs 2 --resume out " OPTS,
			  "'last' is a symbolic link: refused");
}

/* Entries of the run's names owned by another uid, and a checkpoint
 * holding a file chexnet never writes there, are not the run's:
 * --overwrite sets them aside and removes only what is its own. */
static void test_other_uids_entries_and_planted_files_are_set_aside(void)
{
	struct test_proc p;

	if (getuid() != 0)
		SKIP("needs root to give files to another uid (chown)");
	if (real_run())
		return;
	sh("cp -r real out && chown -R nobody out/tb out/metrics.csv && "
	   "echo notes > out/last/notes.txt", &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_unchanged(TRAIN, "holds a run ('best')");
	overwrite_keeps_foreign(TRAIN " --overwrite", "removed the earlier run's own entries: ",
				"^\\./out/(run\\.json|test\\.json|best/.*|\\.generations/.*)$");
	sh("ls out | LC_ALL=C sort | tr '\\n' ' '; stat -c %U out/tb.foreign-1; "
	   "cat out/last.foreign-1/notes.txt", &p, 30);
	CHECK_STR(p.out, "best last last.foreign-1 metrics.csv metrics.csv.foreign-1 run.json tb "
		  "tb.foreign-1 nobody\nnotes\n");
	test_proc_free(&p);
}

/* eval --plots into plots/ and curves --out curves.png, each finding
 * what the case put at plots/roc.png and curves.png: refused, unchanged. */
static void pictures_refused(void)
{
	refused_unchanged("\"$B\"/chexnet eval --checkpoint real/best " DATA " --plots plots "
			  "--size 64 --threads 1", "--plots: 'plots/roc.png': there, and not a "
			  "regular file of this user's: left alone");
	refused_unchanged("\"$B\"/chexnet curves real --out curves.png", "curves: --out: "
			  "'curves.png': there, and not a regular file of this user's: left alone");
}

/* eval --plots, curves --out, predict --cam: a link where a PNG goes is
 * left as it is, its target untouched. */
static void test_pictures_never_written_through_links(void)
{
	struct test_proc p;

	if (real_run())
		return;
	sh("echo victim > victim.txt && mkdir plots cams && ln -s ../victim.txt plots/roc.png && "
	   "ln -s victim.txt curves.png && \"$B\"/chexnet synth --out syn --count 4 --size 64 && "
	   "ln -s ../victim.txt cams/00000001_000_Effusion.png", &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	test_proc_free(&p);
	pictures_refused();
	refused_unchanged("\"$B\"/chexnet predict --checkpoint real/best --threads 1 --cam cams "
			  "--cam-classes Effusion syn/images/00000001_000.png",
			  "--cam: 'cams/00000001_000_Effusion.png': there, and not a regular "
			  "file of this user's: left alone");
}

/* Another user's regular file where a picture or the pack's index goes
 * is theirs: left as it is (root would otherwise replace it). */
static void test_other_users_files_where_outputs_go(void)
{
	struct test_proc p;

	if (getuid() != 0)
		SKIP("needs root to give files to another uid (chown)");
	if (real_run())
		return;
	sh("mkdir plots && echo theirs > plots/roc.png && echo theirs > curves.png && "
	   "\"$B\"/chexnet synth --out syn --count 4 --size 32 && "
	   "\"$B\"/chexnet pack --data syn --out pk --size 16 >/dev/null 2>&1 && "
	   "echo theirs > pk/index.txt && chown nobody plots/roc.png curves.png pk/index.txt",
	   &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	test_proc_free(&p);
	pictures_refused();
	refused_unchanged("\"$B\"/chexnet pack --data syn --out pk --size 16",
			  "pack: 'pk/index.txt': not a regular file of this user's");
}

/* pack --out (a folder pack made): a link named like the index or the
 * skip list is refused, never removed or written through. */
static void test_pack_never_removes_or_writes_through_links(void)
{
	struct test_proc p;

	sh("echo victim > victim.txt && \"$B\"/chexnet synth --out syn --count 4 --size 32 && "
	   "\"$B\"/chexnet pack --data syn --out pk --size 16 >/dev/null 2>&1 && "
	   "rm pk/index.txt && ln -s ../victim.txt pk/index.txt", &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	test_proc_free(&p);
	refused_unchanged("\"$B\"/chexnet pack --data syn --out pk --size 16",
			  "pack: 'pk/index.txt': not a regular file of this user's");
	sh("rm pk/index.txt && ln -s ../victim.txt pk/skipped.txt", &p, 30);
	test_proc_free(&p);
	struct test_proc q;
	sh("\"$B\"/chexnet pack --data syn --out pk --size 16; echo \"exit $?\"; cat victim.txt; "
	   "readlink pk/skipped.txt; test ! -e pk/index.txt && echo no-index", &q, 120);
	CHECK_CONTAINS(q.err, "pack: 'pk/skipped.txt': not a regular file of this user's");
	CHECK_CONTAINS(q.out, "exit 1\nvictim\n../victim.txt\nno-index\n");
	test_proc_free(&q);
}

/* A results folder (run.json, metrics.csv and tb/ copied out of a run
 * that ended, no checkpoint): a new run into it is refused in one line;
 * --overwrite replaces those records and keeps everything else. */
static void test_records_of_an_ended_run_are_kept(void)
{
	struct test_proc p;

	if (real_run())
		return;
	sh("mkdir out && cp -a real/run.json real/metrics.csv real/tb out/ && "
	   "grep -q '\"end\"' out/run.json", &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_in_one_line(TRAIN, "chexnet: train: --out 'out': holds the records of a run that "
			    "ended (its run.json has an \"end\"): choose another --out, or replace "
			    "them with --overwrite");
	overwrite_keeps_foreign(TRAIN " --overwrite", "removed the earlier run's own entries: ",
				"^\\./out/(run\\.json|metrics\\.csv|tb/.*)$");
}

/* --overwrite on a folder that holds no run.json of chexnet's (a home
 * folder given by mistake: .ssh, .bashrc) is refused in one line;
 * nothing is set aside. */
static void test_overwrite_refused_without_a_run_record(void)
{
	struct test_proc p;

	sh("mkdir -p out/.ssh && echo key > out/.ssh/authorized_keys && echo rc > out/.bashrc",
	   &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_in_one_line(TRAIN " --overwrite", "chexnet: train: --overwrite: --out 'out': holds "
			    "2 entries chexnet did not write and no run.json of chexnet's: not a run "
			    "folder, nothing set aside; choose another --out");
}

/* A real data set's folder (NIH's own names, which synth writes too)
 * given as synth --out, and a folder whose marker has other bytes:
 * refused in one line, nothing written. A new folder, then the same one
 * again (its marker), and an empty one are synth's. */
static void test_synth_writes_only_into_its_own_folder(void)
{
	struct test_proc p;

	sh("mkdir -p nih/images fake && echo real > nih/Data_Entry_2017_v2020.csv && "
	   "echo 00000001_000.png > nih/train_val_list.txt && : > nih/test_list.txt && "
	   "echo pixels > nih/images/00000001_000.png && echo notes > fake/notes.txt && "
	   "echo 'chexnet synth made this folder' > fake/.chexnet-synth", &p, 30);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	refused_in_one_line("\"$B\"/chexnet synth --out nih --count 4 --size 32",
			    "chexnet: synth: --out 'nih': holds entries chexnet synth did not make (e.g. '");
	refused_in_one_line("\"$B\"/chexnet synth --out fake --count 4 --size 32",
			    "chexnet: synth: --out 'fake': its '.chexnet-synth' is not the marker "
			    "chexnet synth writes: left alone");
	sh("mkdir empty && for d in syn syn empty; do \"$B\"/chexnet synth --out $d --count 4 "
	   "--size 32 >/dev/null || echo failed $d; done; ls -A empty | tr '\\n' ' '", &p, 60);
	CHECK_STR(p.out, ".chexnet-synth Data_Entry_2017_v2020.csv chexnet-key.txt images "
		  "test_list.txt train_val_list.txt ");
	test_proc_free(&p);
}

/* pack --out on a folder pack did not make (the user's own index.txt and
 * skipped.txt), and on pack's folder whose index.txt is not pack's:
 * refused in one line, nothing written or removed. */
static void test_pack_writes_only_into_its_own_folder(void)
{
	struct test_proc p;

	sh("\"$B\"/chexnet synth --out syn --count 4 --size 32 && mkdir mine && "
	   "echo 'my index' > mine/index.txt && echo 'my notes' > mine/skipped.txt && "
	   "\"$B\"/chexnet pack --data syn --out pk --size 16 >/dev/null 2>&1 && "
	   "echo 'my index' > pk/index.txt", &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	test_proc_free(&p);
	refused_in_one_line("\"$B\"/chexnet pack --data syn --out mine --size 16",
			    "chexnet: pack: --out 'mine': holds entries chexnet pack did not make (e.g. '");
	refused_in_one_line("\"$B\"/chexnet pack --data syn --out pk --size 16 --skip-unreadable",
			    "chexnet: pack: 'pk/index.txt': not an index chexnet pack wrote (its first "
			    "line is not 'hvd-pack 1'): left alone");
}

/* locate reads a checkpoint and writes nothing, even beside foreign files. */
static void test_locate_writes_nothing(void)
{
	struct test_proc p;

	if (real_run())
		return;
	char *before = snapshot(NULL);
	sh("\"$B\"/chexnet locate --checkpoint real/best --images 4 --min-ratio 0 --threads 1", &p, 120);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, test_tail(p.err, 600));
	test_proc_free(&p);
	char *after = snapshot(NULL);
	CHECK_STR(after, before);
	free(before);
	free(after);
}

const struct test_case out_hostile_tests[] = {
	{ "record_claiming_foreign_files_is_not_trusted",
	  test_record_claiming_foreign_files_is_not_trusted },
	{ "record_naming_dotdot_and_absolute_paths", test_record_naming_dotdot_and_absolute_paths },
	{ "links_in_the_folder_and_the_record", test_links_in_the_folder_and_the_record },
	{ "other_uids_entries_and_planted_files_are_set_aside",
	  test_other_uids_entries_and_planted_files_are_set_aside },
	{ "pictures_never_written_through_links", test_pictures_never_written_through_links },
	{ "other_users_files_where_outputs_go", test_other_users_files_where_outputs_go },
	{ "pack_never_removes_or_writes_through_links",
	  test_pack_never_removes_or_writes_through_links },
	{ "locate_writes_nothing", test_locate_writes_nothing },
	{ "records_of_an_ended_run_are_kept", test_records_of_an_ended_run_are_kept },
	{ "overwrite_refused_without_a_run_record", test_overwrite_refused_without_a_run_record },
	{ "synth_writes_only_into_its_own_folder", test_synth_writes_only_into_its_own_folder },
	{ "pack_writes_only_into_its_own_folder", test_pack_writes_only_into_its_own_folder },
	{ 0 },
};
