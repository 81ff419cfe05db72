/* test_symbols.c - group "symbols": what a program links of libhvd
 * exports only the API (every defined global of libhvd.a and every dynamic
 * export of libhvd.so.0, whose soname is libhvd.so.0, is hvd_*), and a
 * program defining timeline_open, control_stop and engine_start links
 * against it and runs (tests/own_symbols.c); libhvd.so.0 loads with an
 * NCCL that lacks ncclCommRevoke and ncclCommShrink (a stand-in library
 * with every other NCCL call it needs: the dynamic loader judges it).
 * What this is not: the runtime's behaviour (groups runtime, slurm-*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static void test_archive_exports_only_hvd(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "nm -g --defined-only '%s/libhvd.a' | awk 'NF == 3 { print $3 }'",
		 test_build_dir());
	CHECK_INT(test_run(cmd, 30, &p), 0);
	CHECK_INT(p.exit_code, 0);
	int count = 0;
	for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n")) {
		CHECK_MSG(strncmp(line, "hvd_", 4) == 0, "libhvd.a exports '%s'", line);
		count++;
	}
	CHECK_MSG(count >= 20, "only %d hvd_ symbols", count);
	test_proc_free(&p);
}

/* the version script's node (HVD_0, type A) is not a symbol of the API */
static void test_shared_library_exports_only_hvd(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "readelf -d '%s/libhvd.so.0' && nm -D --defined-only '%s/libhvd.so.0' | "
		 "awk 'NF == 3 && $2 != \"A\" { print \"export\", $3 }'", test_build_dir(), test_build_dir());
	CHECK_INT(test_run(cmd, 30, &p), 0);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	CHECK_CONTAINS(p.out, "Library soname: [libhvd.so.0]");
	int count = 0;
	for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "export ", 7) != 0)
			continue;
		CHECK_MSG(strncmp(line + 7, "hvd_", 4) == 0, "libhvd.so.0 exports '%s'", line + 7);
		count++;
	}
	CHECK_MSG(count >= 20, "only %d hvd_ symbols", count);
	test_proc_free(&p);
}

static void test_program_with_runtime_names_links_and_runs(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/hvd-own-symbols'", test_build_dir());
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s%s", p.exit_code, p.out, p.err);
	CHECK_CONTAINS(p.out, "own_symbols: size 1 allreduce 0 (3) shutdown 0 own calls 6");
	test_proc_free(&p);
}

/* NCCL 2.28.3 (a GPU node's system library) has no ncclCommRevoke: a
 * libhvd.so.0 (linked -z now) that needs it does not load there. */
static void test_shared_library_loads_with_an_nccl_before_revoke(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "d=$(mktemp -d) && trap 'rm -rf \"$d\"' EXIT && "
		 "nm -D --undefined-only '%s/libhvd.so.0' | awk '$2 ~ /^nccl/ && $2 != \"ncclCommRevoke\" && "
		 "$2 != \"ncclCommShrink\" { print \"int \" $2 \"(void) { return 0; }\" }' > \"$d/nccl.c\" && "
		 "if [ ! -s \"$d/nccl.c\" ]; then echo no NCCL; exit 0; fi && "
		 "cc -shared -fPIC -Wl,-soname,libnccl.so.2 -o \"$d/libnccl.so.2\" \"$d/nccl.c\" && "
		 "LD_LIBRARY_PATH=\"$d\" ldd -r '%s/libhvd.so.0' | sed \"s|$d|STAND-IN|\"",
		 test_build_dir(), test_build_dir());
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code == 0, "exit %d: %s", p.exit_code, p.err);
	if (strcmp(p.out, "no NCCL\n") == 0) {
		test_proc_free(&p);
		SKIP("libhvd.so.0 is built without NCCL (WITH_NCCL=0 or no NCCL found)");
	}
	CHECK_CONTAINS(p.out, "libnccl.so.2 => STAND-IN/libnccl.so.2");
	CHECK_MSG(!strstr(p.out, "undefined symbol") && !strstr(p.err, "undefined symbol"),
		  "libhvd.so.0 does not load: %s%s", p.out, p.err);
	test_proc_free(&p);
}

const struct test_case symbols_tests[] = {
	{ "shared_library_loads_with_an_nccl_before_revoke",
	  test_shared_library_loads_with_an_nccl_before_revoke },
	{ "archive_exports_only_hvd", test_archive_exports_only_hvd },
	{ "shared_library_exports_only_hvd", test_shared_library_exports_only_hvd },
	{ "program_with_runtime_names_links_and_runs",
	  test_program_with_runtime_names_links_and_runs },
	{ 0 },
};
