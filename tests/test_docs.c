/* test_docs.c - group "docs": the repository's comments and .md files name
 * only files it has and nothing outside it (doc_refs.c); the checker is
 * shown each kind of dead reference in a small tree of its own.
 * What this is not: the rule (doc_refs.c holds it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc_refs.h"
#include "runner.h"

static char report[1 << 16];

static void test_repository_docs_stand_alone(void)
{
	int bad = doc_refs_check(test_src_dir(), report, sizeof(report));
	CHECK_MSG(bad == 0, "%d problems:\n%s", bad, report);
}

static void test_dead_references_are_named(void)
{
	test_put("trainer/data/load/loader.c", "/* the loader; see data/load/loader.h and trainer/data/gone.c */\n"
		"static const char *s = \"trainer/not/a/comment.c\";\n");
	test_put("trainer/data/load/loader.h", "\n");
	test_put("README.md", "Read [x](trainer/data/load/loader.h), then tests/missing.sh,\n"
		"old_name.c, /proc/self/status, DIR/file.c, and ../" "shared/facts.\n");
	test_put("tests/run.sh", "#!/bin/sh\n# runs data/nothere.c\necho trainer/x.c\n");
	CHECK_INT(doc_refs_check(test_tmpdir(), report, sizeof(report)), 5);
	CHECK_CONTAINS(report, "docs: trainer/data/load/loader.c:1: 'trainer/data/gone.c': names no file");
	CHECK_CONTAINS(report, "docs: README.md:1: 'tests/missing.sh': names no file");
	CHECK_CONTAINS(report, "docs: README.md:2: 'old_name.c': no file of the repository");
	CHECK_CONTAINS(report, "docs: README.md:2: '../" "shared': a folder outside the repository");
	CHECK_CONTAINS(report, "docs: tests/run.sh:2: 'data/nothere.c': names no file of trainer/");
}

/* The front page and the runtime's two documents keep their lengths
 * (later work links to a part's own document instead). */
static void test_guides_keep_their_length(void)
{
	static const struct { const char *path; int max; } docs[] = {
		{ "README.md", 250 }, { "runtime/README.md", 250 }, { "docs/runtime-design.md", 200 },
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		char *path = test_path(test_src_dir(), docs[i].path);
		char *text = test_read_file(path, NULL);
		int lines = 0;
		for (const char *p = text; p && *p; p++)
			lines += *p == '\n';
		CHECK_MSG(text && lines <= docs[i].max, "docs: %s: %d lines, at most %d: link to "
			  "the part's own document", docs[i].path, lines, docs[i].max);
		free(text);
		free(path);
	}
}

const struct test_case docs_tests[] = {
	{ "repository_docs_stand_alone", test_repository_docs_stand_alone },
	{ "dead_references_are_named", test_dead_references_are_named },
	{ "guides_keep_their_length", test_guides_keep_their_length },
	{ 0 },
};
