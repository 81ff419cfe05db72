/* test_layout.c - group "layout": the repository follows its dependency
 * rule (HACKING.md, "Layers") and has no include cycle, and neither libhvd
 * nor the trainer's objects a symbol (call) cycle; the checkers themselves
 * are shown a forbidden edge and cycles in small trees of their own.
 * What this is not: the rule (layout_check.c holds it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code_lines.h"
#include "layout_check.h"
#include "message_audit.h"
#include "runner.h"
#include "symbol_cycles.h"

static char report[1 << 16];

static void test_repository_follows_the_rule(void)
{
	int bad = layout_check(test_src_dir(), report, sizeof(report));
	CHECK_MSG(bad == 0, "%d problems:\n%s", bad, report);
}

static void test_a_forbidden_include_is_named(void)
{
	test_put("trainer/base/error.h", "int x;\n");
	test_put("trainer/data/load/loader.c", "#include \"base/error.h\"\n");
	test_put("trainer/backend/cpu/conv.c", "#include \"data/load/loader.h\"\n#include \"base/error.h\"\n");
	test_put("trainer/data/load/loader.h", "\n");
	test_put("trainer/backend/gpu/x.h", "#include \"backend/cpu/y.h\"\n");
	test_put("trainer/backend/cpu/y.h", "\n");
	test_put("spank/plugin.c", "#include \"../runtime/hvd.h\"\n");
	test_put("runtime/hvd.h", "\n");
	test_put("trainer/cmd/train.c", "#include \"loop/train.h\"\n#include \"backend/gpu/x.h\"\n");
	test_put("trainer/loop/train.h", "#include \"cmd/cli.h\"\n");
	test_put("trainer/cmd/cli.h", "\n");
	test_put("check/main.c", "#include \"hvd.h\"\n#include \"table.h\"\n#include \"core/clock.h\"\n");
	test_put("check/table.h", "\n");
	test_put("runtime/core/clock.h", "\n");
	test_put("launch/hvdrun.c", "#include \"placement.h\"\n#include \"task.h\"\n");
	test_put("spank/placement.h", "\n");
	test_put("spank/task.h", "\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 7);
	CHECK_CONTAINS(report, "layout: launch/hvdrun.c: includes 'spank/task.h': launch/ includes only "
		       "launch/ and spank/'s bind.h, options.h, placement.h, topology.h\n");
	CHECK_MSG(!strstr(report, "spank/placement.h'"), "placement.h refused: %s", report);
	CHECK_CONTAINS(report, "layout: check/main.c: includes 'runtime/core/clock.h': check/ includes "
		       "only check/ and runtime/hvd.h\n");
	CHECK_CONTAINS(report, "layout: trainer/backend/cpu/conv.c: includes 'trainer/data/load/loader.h'");
	CHECK_CONTAINS(report, "trainer/backend/gpu/x.h: includes 'trainer/backend/cpu/y.h'");
	CHECK_CONTAINS(report, "spank/plugin.c: includes 'runtime/hvd.h': spank/ includes only spank/");
	CHECK_CONTAINS(report, "trainer/cmd/train.c: includes 'trainer/backend/gpu/x.h': cmd includes "
		       "trainer/ but never a backend's own folder");
	CHECK_CONTAINS(report, "trainer/loop/train.h: includes 'trainer/cmd/cli.h': loop includes");
}

static void test_runtime_layers_are_checked(void)
{
	test_put("runtime/hvd.h", "\n");
	test_put("runtime/core/clock.h", "#include \"hvd.h\"\n");
	test_put("runtime/engine/runtime.h", "#include \"core/clock.h\"\n#include \"hvd.h\"\n");
	test_put("runtime/core/settings.c", "#include \"engine/runtime.h\"\n");
	test_put("runtime/plan/fusion.c", "#include \"transport/comm.h\"\n");
	test_put("runtime/transport/comm.h", "#include \"core/clock.h\"\n");
	test_put("runtime/extra/x.c", "#include \"core/clock.h\"\n");
	test_put("runtime/tests/t.c", "#include \"../engine/runtime.h\"\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 3);
	CHECK_CONTAINS(report, "layout: runtime/core/settings.c: includes 'runtime/engine/runtime.h': "
		       "core includes only core");
	CHECK_CONTAINS(report, "layout: runtime/plan/fusion.c: includes 'runtime/transport/comm.h': "
		       "plan includes core");
	CHECK_CONTAINS(report, "runtime/extra/x.c: includes 'runtime/core/clock.h': runtime/: a folder "
		       "outside the layers");
}

/* The coordination plane has a folder and a layer of its own, between
 * the data backends and the engine (HACKING.md). */
static void test_coordination_plane_is_its_own_layer(void)
{
	struct stat st;
	char *vote = test_path(test_src_dir(), "runtime/vote/vote.h");
	char *old = test_path(test_src_dir(), "runtime/transport/vote.h");
	CHECK(stat(vote, &st) == 0 && stat(old, &st) != 0);
	free(vote);
	free(old);
	test_put("runtime/vote/v.c", "#include \"transport/comm.h\"\n#include \"engine/runtime.h\"\n");
	test_put("runtime/transport/comm.h", "#include \"vote/vote.h\"\n");
	test_put("runtime/engine/runtime.h", "#include \"vote/vote.h\"\n");
	test_put("runtime/vote/vote.h", "\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 2);
	CHECK_CONTAINS(report, "layout: runtime/vote/v.c: includes 'runtime/engine/runtime.h': vote "
		       "includes core, bootstrap, transport");
	CHECK_CONTAINS(report, "layout: runtime/transport/comm.h: includes 'runtime/vote/vote.h'");
}

/* comm_ops holds data operations only: no agreement hook (votes travel
 * on the coordination plane, runtime/vote/). */
static void test_data_ops_hold_no_agreement(void)
{
	char *path = test_path(test_src_dir(), "runtime/transport/comm.h");
	char *text = test_read_file(path, NULL);
	const char *ops = text ? strstr(text, "struct comm_ops {") : NULL;
	const char *end = ops ? strstr(ops, "\n};") : NULL;
	CHECK(ops && end);
	for (const char *p = ops; p && p < end; p = strchr(p + 1, '\n')) {
		const char *line_end = strchr(p + 1, '\n');
		int n = (int)(line_end ? line_end - p : (long)strlen(p));
		CHECK_MSG(!memmem(p, (size_t)n, "agree", 5) && !memmem(p, (size_t)n, "vote", 4),
			  "layout: runtime/transport/comm.h: comm_ops: '%.*s': a vote in the data ops",
			  n - 1, p + 1);
	}
	free(text);
	free(path);
}

static void test_an_include_cycle_is_named(void)
{
	test_put("trainer/data/sets/a.h", "#include \"data/sets/b.h\"\n");
	test_put("trainer/data/sets/b.h", "#include \"c.h\"\n");
	test_put("trainer/data/sets/c.h", "#include \"a.h\"\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "layout: include cycle: trainer/data/sets/a.h -> "
		       "trainer/data/sets/b.h -> trainer/data/sets/c.h -> trainer/data/sets/a.h");
}

static void test_data_layers_are_checked(void)
{
	test_put("trainer/data/image/image.h", "\n");
	test_put("trainer/data/dicom/pixels.h", "#include \"data/image/image.h\"\n");
	test_put("trainer/data/codec/decode.c", "#include \"data/dicom/pixels.h\"\n");
	test_put("trainer/data/sets/set.h", "\n");
	test_put("trainer/data/pack/shard.h", "#include \"data/sets/set.h\"\n");
	test_put("trainer/data/load/loader.c", "#include \"data/pack/shard.h\"\n");
	test_put("trainer/data/dicom/reader.c", "#include \"data/codec/decode.c\"\n");
	test_put("trainer/data/synth/synth.c", "#include \"data/pack/shard.h\"\n");
	test_put("trainer/data/loose.c", "#include \"data/sets/set.h\"\n");
	test_put("trainer/data/extra/x.c", "#include \"data/sets/set.h\"\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 4);
	CHECK_CONTAINS(report, "layout: trainer/data/dicom/reader.c: includes "
		       "'trainer/data/codec/decode.c': data/dicom includes image\n");
	CHECK_CONTAINS(report, "layout: trainer/data/synth/synth.c: includes "
		       "'trainer/data/pack/shard.h': data/synth includes image, dicom, codec, sets\n");
	CHECK_CONTAINS(report, "layout: trainer/data/loose.c: includes 'trainer/data/sets/set.h': "
		       "trainer/data/: its files live in its sub-folders");
	CHECK_CONTAINS(report, "layout: trainer/data/extra/x.c: includes 'trainer/data/sets/set.h': "
		       "trainer/data/: a folder outside the layers");
}

static void test_only_cmd_takes_the_options(void)
{
	test_put("trainer/train/settings.h", "struct settings { int x; };\n");
	test_put("trainer/cmd/train.c", "#include \"train/settings.h\"\n");
	test_put("trainer/loop/train.h", "struct settings;\nint train_run(const struct "
		 "settings *o);\n");
	test_put("trainer/loop/train.c", "#include \"train/settings.h\"\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "layout: trainer/loop/train.h: names 'struct settings': only "
		       "trainer/cmd/ sees the command line's options; a loop takes its configs "
		       "(train/settings.h)\n");
}

static void test_runtime_has_no_symbol_cycle(void)
{
	char *lib = test_path(test_build_dir(), "obj/runtime/libhvd-internal.a");
	int bad = symbol_cycles(lib, report, sizeof(report));
	CHECK_MSG(bad == 0, "%s: %d:\n%s", lib, bad, report);
	free(lib);
}

static void test_trainer_has_no_symbol_cycle(void)
{
	char *list = test_path(test_build_dir(), "obj/trainer/objects.txt");
	int bad = symbol_cycles_of_list(list, report, sizeof(report));
	CHECK_MSG(bad == 0, "%s: %d:\n%s", list, bad, report);
	free(list);
}

static void test_a_symbol_cycle_is_named(void)
{
	struct test_proc p;
	test_put("src/a.c", "int b_fn(void);\nint a_fn(void) { return b_fn(); }\n");
	test_put("src/b.c", "int c_fn(void);\nint b_fn(void) { return c_fn(); }\n");
	test_put("src/c.c", "int a_fn(void);\nint c_fn(void) { return a_fn(); }\n"
		 "int d_fn(void) { return 1; }\n");
	test_put("src/d.c", "int d_fn(void);\nint e_fn(void) { return d_fn(); }\n");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cd '%s/src' && cc -c a.c b.c c.c d.c && ar rcs lib.a d.o a.o b.o c.o",
		 test_tmpdir());
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	char *lib = test_path(test_tmpdir(), "src/lib.a");
	CHECK_INT(symbol_cycles(lib, report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "layout: symbol cycle: a -(b_fn)-> b -(c_fn)-> c -(a_fn)-> a\n");
	CHECK_INT(symbol_cycles("/nonexistent.a", report, sizeof(report)), -1);
	free(lib);
}

/* Two files of one name in two folders: an archive would merge them into
 * one member "a"; the list keeps them apart and sees their cycle. */
static void test_a_symbol_cycle_among_listed_objects_is_named(void)
{
	struct test_proc p;
	test_put("obj/x/a.c", "int y_fn(void);\nint x_fn(void) { return y_fn(); }\n");
	test_put("obj/y/a.c", "int x_fn(void);\nint y_fn(void) { return x_fn(); }\n");
	test_put("obj/y/b.c", "int y_fn(void);\nint b_fn(void) { return y_fn(); }\n");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cd '%s/obj' && cc -c x/a.c -o x/a.o && cc -c y/a.c -o y/a.o && "
		 "cc -c y/b.c -o y/b.o && printf '%%s\\n' \"$PWD/y/b.o\" \"$PWD/x/a.o\" "
		 "\"$PWD/y/a.o\" > list.txt && : > empty.txt && echo /nonexistent.o > missing.txt",
		 test_tmpdir());
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "%s", p.err);
	test_proc_free(&p);
	char *list = test_path(test_tmpdir(), "obj/list.txt");
	CHECK_INT(symbol_cycles_of_list(list, report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "layout: symbol cycle: x/a -(y_fn)-> y/a -(x_fn)-> x/a\n");
	free(list);
	list = test_path(test_tmpdir(), "obj/empty.txt");
	CHECK_INT(symbol_cycles_of_list(list, report, sizeof(report)), -1);
	free(list);
	list = test_path(test_tmpdir(), "obj/missing.txt");
	CHECK_INT(symbol_cycles_of_list(list, report, sizeof(report)), -1);
	free(list);
}

/* HACKING.md, "Layers (runtime/)": runtime/'s code stays within this. */
#define RUNTIME_CODE_BUDGET 7100

static void test_runtime_code_within_its_budget(void)
{
	char *dir = test_path(test_src_dir(), "runtime");
	long n = code_lines(dir, "tests");
	CHECK_MSG(n > 0 && n <= RUNTIME_CODE_BUDGET, "layout: runtime/: %ld lines of code (tests "
		  "left out), the budget is %d: simplify before adding", n, RUNTIME_CODE_BUDGET);
	free(dir);
}

/* HACKING.md, "Layers (trainer/)": the training loop reads in one sitting,
 * and its state (loop/trainer.h) is seen by the loop's own files and,
 * above the loop, recovery's protocol after a lost peer alone. */
#define TRAIN_LOOP_LINES 450

/* No file of the folder but own[] includes loop/trainer.h. */
static void private_state_seen_by(const char *folder, const char *const *own, int n)
{
	char *dir = test_path(test_src_dir(), folder);
	DIR *d = opendir(dir);
	CHECK_MSG(d, "%s: missing", dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		char *path = test_path(dir, e->d_name), *code = test_read_file(path, NULL);
		int mine = 0;
		for (int i = 0; i < n; i++)
			mine |= strcmp(e->d_name, own[i]) == 0;
		CHECK_MSG(mine || !code || !strstr(code, "#include \"loop/trainer.h\""), "layout: "
			  "%s/%s: includes loop/trainer.h, the training loop's own state", folder,
			  e->d_name);
		free(code);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
}

static void test_training_loop_reads_in_one_sitting(void)
{
	static const char *const loop_own[] = { "train.c", "train_setup.c", "train_save.c" };
	static const char *const recover_own[] = { "lost_peer.c" };
	char *loop = test_path(test_src_dir(), "trainer/loop/train.c");
	char *text = test_read_file(loop, NULL);
	long lines = 0;

	for (const char *c = text; c && *c; c++)
		lines += *c == '\n';
	CHECK_MSG(text && lines <= TRAIN_LOOP_LINES, "layout: trainer/loop/train.c: %ld lines, more "
		  "than %d: move a concern into a file of its own", lines, TRAIN_LOOP_LINES);
	free(text);
	free(loop);
	private_state_seen_by("trainer/loop", loop_own, 3);
	private_state_seen_by("trainer/recover", recover_own, 1);
}

/* trainer/ never repeats a runtime message's words (message_audit.h):
 * what happened comes through hvd_lost_ranks, not by reading English. */
static void test_trainer_repeats_no_runtime_message(void)
{
	char *runtime = test_path(test_src_dir(), "runtime");
	char *trainer = test_path(test_src_dir(), "trainer");
	int hits = message_audit(runtime, "/runtime/tests/", trainer, report, sizeof(report));
	CHECK_MSG(hits == 0, "layout: %d trainer literal(s) repeat runtime messages:\n%s", hits,
		  report);
	free(runtime);
	free(trainer);
}

/* The audit sees a message split over two literals, as the runtime's
 * "rank 0 did not answer" is, and joins a trainer's adjacent literals
 * across a comment; format directives and short runs match nothing. */
static void test_a_repeated_runtime_message_is_named(void)
{
	char *words = test_path(test_tmpdir(), "words"), *dir = test_path(test_tmpdir(), "dir");
	CHECK_INT(test_put("words/msg.c", "f(\"hvd: %s: rank 0 did \" /* split */\n"
				 "  \"not answer within HVD_TIMEOUT_S (%g s)\", x);\n"), 0);
	CHECK_INT(test_put("dir/reader.c", "const char *a = \"rank 0 did not \"\n"
				 "  // joined\n  \"answer within\";\nchar c = '\"';\n"), 0);
	CHECK_INT(test_put("dir/ok.c", "g(\"%s: rank 0 %s within HVD_TIMEOUT_S\");\n"), 0);
	CHECK_INT(message_audit(words, NULL, dir, report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "dir/reader.c: 'rank 0 did not answer wi': ");
	CHECK_CONTAINS(report, "words/msg.c's words");
	free(words);
	free(dir);
}

static void test_code_lines_are_counted_as_cloc_does(void)
{
	CHECK_INT((int)code_lines_of("/* a\n * comment */\n\n\tint x; /* trailing */\n"
				     "// line\nconst char *s = \"/* not a comment\";\n"
				     "char c = '\"'; /* a */ int y;\n  \t\n}"), 4);
	test_put("runtime/a.c", "int a;\n/* b */\n");
	test_put("runtime/core/b.h", "#define B 1\n#define C 2\n");
	test_put("runtime/tests/t.c", "int t;\n");
	test_put("runtime/README.md", "int not_code;\n");
	char *dir = test_path(test_tmpdir(), "runtime");
	CHECK_INT((int)code_lines(dir, "tests"), 3);
	CHECK_INT((int)code_lines(dir, NULL), 4);
	CHECK_INT((int)code_lines("/nonexistent", NULL), -1);
	free(dir);
}

const struct test_case layout_tests[] = {
	{ "repository_follows_the_rule", test_repository_follows_the_rule },
	{ "a_forbidden_include_is_named", test_a_forbidden_include_is_named },
	{ "runtime_layers_are_checked", test_runtime_layers_are_checked },
	{ "coordination_plane_is_its_own_layer", test_coordination_plane_is_its_own_layer },
	{ "data_ops_hold_no_agreement", test_data_ops_hold_no_agreement },
	{ "an_include_cycle_is_named", test_an_include_cycle_is_named },
	{ "data_layers_are_checked", test_data_layers_are_checked },
	{ "only_cmd_takes_the_options", test_only_cmd_takes_the_options },
	{ "runtime_has_no_symbol_cycle", test_runtime_has_no_symbol_cycle },
	{ "trainer_has_no_symbol_cycle", test_trainer_has_no_symbol_cycle },
	{ "a_symbol_cycle_is_named", test_a_symbol_cycle_is_named },
	{ "a_symbol_cycle_among_listed_objects_is_named",
	  test_a_symbol_cycle_among_listed_objects_is_named },
	{ "runtime_code_within_its_budget", test_runtime_code_within_its_budget },
	{ "training_loop_reads_in_one_sitting", test_training_loop_reads_in_one_sitting },
	{ "code_lines_are_counted_as_cloc_does", test_code_lines_are_counted_as_cloc_does },
	{ "trainer_repeats_no_runtime_message", test_trainer_repeats_no_runtime_message },
	{ "a_repeated_runtime_message_is_named", test_a_repeated_runtime_message_is_named },
	{ 0 },
};
