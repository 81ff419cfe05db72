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

/* A relative Markdown link reaches a file of the repository, and its
 * #anchor a heading there; web addresses are not followed. */
static void test_dead_links_are_named(void)
{
	test_put("HACKING.md", "# Hacking\n\n## Build it, `make`\n");
	test_put("trainer/backend/cpu/README.md",
		 "# cpu\nSee [a](../../../HACKING.md#build-it-make), [b](../../../HACKINGX.md),\n"
		 "[c](../../../HACKING.md#nope), [d](../../../../x.md), [e](https://example.org/x),\n"
		 "[f](#cpu) and [g](#nowhere).\n");
	CHECK_INT(doc_refs_check(test_tmpdir(), report, sizeof(report)), 4);
	CHECK_CONTAINS(report, "docs: trainer/backend/cpu/README.md:2: '../../../HACKINGX.md': a link to no file");
	CHECK_CONTAINS(report, "docs: trainer/backend/cpu/README.md:3: 'nope': a link to no heading");
	CHECK_CONTAINS(report, "docs: trainer/backend/cpu/README.md:3: '../../../../x.md': a link out of the repository");
	CHECK_CONTAINS(report, "docs: trainer/backend/cpu/README.md:4: 'nowhere': a link to no heading");
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

/* The number after "default" (or in a `| VAR | N |` table row) close
 * after each mention of var; mentions without one are skipped. Returns
 * how many state one; *bad: the first that differs from want. */
static int defaults_stated(const char *text, const char *var, long want, long *bad)
{
	int n = 0;
	for (const char *s = text; s && (s = strstr(s, var)); s += strlen(var)) {
		/* this line and the next (a man page's .B VAR, then its text) */
		const char *end = strchr(s, '\n'), *d = strstr(s, "default"), *num = NULL;
		end = end ? strchr(end + 1, '\n') : NULL;
		if (!end)
			end = s + strlen(s);
		if (d && d < end && d - s < 40)
			num = d + strlen("default");
		else if (!strncmp(s + strlen(var), "` | ", 4))
			num = s + strlen(var) + 4;
		if (!num)
			continue;
		while (num < end && (*num < '0' || *num > '9'))
			num++;
		if (num == end)
			continue;
		n++;
		if (strtol(num, NULL, 10) != want && *bad < 0)
			*bad = strtol(num, NULL, 10);
	}
	return n;
}

/* HVD_TIMEOUT_S has one default: the code's (runtime/core/settings.c),
 * stated with that number in the README, the runtime's table, the man
 * pages, the training guide and hvdrun, and nowhere another. */
static void test_timeout_default_is_the_same_everywhere(void)
{
	char *path = test_path(test_src_dir(), "runtime/core/settings.c"), *code = test_read_file(path, NULL);
	const char *at = code ? strstr(code, ".timeout_s = ") : NULL;  /* settings_defaults */
	CHECK_MSG(at, "runtime/core/settings.c: no '.timeout_s = ' default");
	long want = at ? strtol(at + strlen(".timeout_s = "), NULL, 10) : -1;
	static const char *const files[] = { "README.md", "runtime/README.md", "man/hvd.3", "man/chexnet.1",
		"trainer/TRAINING.md", "contrib/hvdrun", "tests/slurm/MULTINODE.md", "docs/runtime-design.md",
		"spank/USAGE.md", "contrib/k8s/README.md", NULL };
	for (int i = 0; files[i]; i++) {
		char *f = test_path(test_src_dir(), files[i]), *text = test_read_file(f, NULL);
		long bad = -1;
		int n = defaults_stated(text, "HVD_TIMEOUT_S", want, &bad);
		CHECK_MSG(bad < 0, "docs: %s: HVD_TIMEOUT_S default %ld, the code's is %ld", files[i], bad, want);
		CHECK_MSG(n > 0 || i >= 6, "docs: %s: states no HVD_TIMEOUT_S default (the code's: %ld)", files[i], want);
		free(text);
		free(f);
	}
	free(code);
	free(path);
}

const struct test_case docs_tests[] = {
	{ "repository_docs_stand_alone", test_repository_docs_stand_alone },
	{ "dead_references_are_named", test_dead_references_are_named },
	{ "dead_links_are_named", test_dead_links_are_named },
	{ "guides_keep_their_length", test_guides_keep_their_length },
	{ "timeout_default_is_the_same_everywhere", test_timeout_default_is_the_same_everywhere },
	{ 0 },
};
