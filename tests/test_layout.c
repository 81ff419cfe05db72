/* test_layout.c - group "layout": the repository follows its dependency
 * rule (HACKING.md, "Layers") and has no include cycle; the checker itself
 * is shown a forbidden edge and a cycle in a small tree of its own.
 * What this is not: the rule (layout_check.c holds it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layout_check.h"
#include "runner.h"

static char report[1 << 16];

static void test_repository_follows_the_rule(void)
{
	int bad = layout_check(test_src_dir(), report, sizeof(report));
	CHECK_MSG(bad == 0, "%d problems:\n%s", bad, report);
}

static void test_a_forbidden_include_is_named(void)
{
	test_put("trainer/base/error.h", "int x;\n");
	test_put("trainer/data/loader.c", "#include \"base/error.h\"\n");
	test_put("trainer/backend/cpu/conv.c", "#include \"data/loader.h\"\n#include \"base/error.h\"\n");
	test_put("trainer/data/loader.h", "\n");
	test_put("trainer/backend/gpu/x.h", "#include \"backend/cpu/y.h\"\n");
	test_put("trainer/backend/cpu/y.h", "\n");
	test_put("spank/plugin.c", "#include \"../runtime/hvd.h\"\n");
	test_put("runtime/hvd.h", "\n");
	test_put("trainer/cmd/train.c", "#include \"loop/train.h\"\n#include \"backend/gpu/x.h\"\n");
	test_put("trainer/loop/train.h", "#include \"cmd/cli.h\"\n");
	test_put("trainer/cmd/cli.h", "\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 5);
	CHECK_CONTAINS(report, "layout: trainer/backend/cpu/conv.c: includes 'trainer/data/loader.h'");
	CHECK_CONTAINS(report, "trainer/backend/gpu/x.h: includes 'trainer/backend/cpu/y.h'");
	CHECK_CONTAINS(report, "spank/plugin.c: includes 'runtime/hvd.h': spank/ includes only spank/");
	CHECK_CONTAINS(report, "trainer/cmd/train.c: includes 'trainer/backend/gpu/x.h': cmd includes "
		       "trainer/ but never a backend's own folder");
	CHECK_CONTAINS(report, "trainer/loop/train.h: includes 'trainer/cmd/cli.h': loop includes");
}

static void test_an_include_cycle_is_named(void)
{
	test_put("trainer/data/a.h", "#include \"data/b.h\"\n");
	test_put("trainer/data/b.h", "#include \"c.h\"\n");
	test_put("trainer/data/c.h", "#include \"a.h\"\n");
	CHECK_INT(layout_check(test_tmpdir(), report, sizeof(report)), 1);
	CHECK_CONTAINS(report, "layout: include cycle: trainer/data/a.h -> trainer/data/b.h -> "
		       "trainer/data/c.h -> trainer/data/a.h");
}

const struct test_case layout_tests[] = {
	{ "repository_follows_the_rule", test_repository_follows_the_rule },
	{ "a_forbidden_include_is_named", test_a_forbidden_include_is_named },
	{ "an_include_cycle_is_named", test_an_include_cycle_is_named },
	{ 0 },
};
