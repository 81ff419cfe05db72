/* test_install.c - groups "install" and "slurm-install": what `make
 * install` and `make uninstall` promise (mk/install.mk, the install-<part>
 * rules, the install manifest), paths with spaces end to end, the
 * one-line refusals of bad input, the man pages, and that
 * Slurm refuses an hvd.so built for another Slurm version.
 * What it does not do: install into the real system (always DESTDIR in
 * the case's temp dir, or a prefix there), or rebuild the tree (make check already did).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

/* Every file `make install PREFIX=/usr` puts under DESTDIR, sorted. */
static const char expected_files[] =
	"./usr/bin/chexnet\n"
	"./usr/bin/hvd-check\n"
	"./usr/bin/hvdrun\n"
	"./usr/include/hvd.h\n"
	"./usr/lib/libhvd.a\n"
	"./usr/lib/libhvd.so\n"
	"./usr/lib/libhvd.so.0\n"
	"./usr/lib/pkgconfig/hvd.pc\n"
	"./usr/lib/slurm/hvd.so\n"
	"./usr/libexec/hvd/hvdrun-ssh\n"
	"./usr/share/hvd/install-manifest\n"
	"./usr/share/hvd/plugstack.conf\n"
	"./usr/share/man/man1/chexnet.1\n"
	"./usr/share/man/man1/hvdrun.1\n"
	"./usr/share/man/man3/hvd.3\n"
	"./usr/share/man/man8/hvd-check.8\n"
	"./usr/share/man/man8/hvd.8\n";

/* `make` in the source tree on the suite's build (B relative when inside). */
static void make_cmd(char *cmd, size_t len, const char *args)
{
	const char *src = test_src_dir(), *b = test_build_dir();
	size_t n = strlen(src);
	if (strncmp(b, src, n) == 0 && b[n] == '/')
		b += n + 1;
	char san[PATH_MAX + 8];
	snprintf(san, sizeof(san), "%s/.san", test_build_dir());
	snprintf(cmd, len, "cd '%s' && make --no-print-directory B='%s'%s %s", src, b,
		 access(san, F_OK) == 0 ? " SAN=1" : "", args);
}

static int built(const char *name)
{
	char *path = test_path(test_build_dir(), name);
	int ok = access(path, F_OK) == 0;
	free(path);
	return ok;
}

/* Runs cmd; checks exit 0, shows its stderr's end when not. */
static void run_ok(const char *cmd, int timeout_s, struct test_proc *p)
{
	CHECK_INT(test_run(cmd, timeout_s, p), 0);
	CHECK_MSG(p->exit_code == 0, "'%s': exit %d: %s", cmd, p->exit_code, test_tail(p->err, 600));
}

static void install_into(const char *destdir)
{
	char args[PATH_MAX + 64], cmd[2 * PATH_MAX + 256];
	struct test_proc p;
	snprintf(args, sizeof(args), "install DESTDIR='%s' PREFIX=/usr", destdir);
	make_cmd(cmd, sizeof(cmd), args);
	run_ok(cmd, 120, &p);
	test_proc_free(&p);
}

static void check_files(const char *destdir, const char *want)
{
	char cmd[PATH_MAX + 128];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -type f -o -type l | LC_ALL=C sort", destdir);
	run_ok(cmd, 30, &p);
	CHECK_STR(p.out, want);
	test_proc_free(&p);
}

static void test_install_puts_exactly_the_expected_files(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	check_files(dest, expected_files);
	char args[PATH_MAX + 64], cmd[2 * PATH_MAX + 256];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/usr/bin/chexnet' --version", dest);
	run_ok(cmd, 30, &p);
	CHECK_STR(p.out, "chexnet " HVD_VERSION "\n");
	test_proc_free(&p);
	/* man pages carry the version of VERSION, filled in at install */
	snprintf(cmd, sizeof(cmd), "cat '%s/usr/share/man/man8/hvd.8' '%s/usr/share/man/man3/hvd.3'", dest, dest);
	run_ok(cmd, 30, &p);
	CHECK_CONTAINS(p.out, "\"\" \"hvd " HVD_VERSION "\" \"System Administration\"");
	CHECK(strstr(p.out, "@VERSION@") == NULL);
	test_proc_free(&p);
	/* the installed hvdrun hands a host file to the installed ssh launcher */
	snprintf(cmd, sizeof(cmd), "env -u HVDRUN_SSH '%s/usr/bin/hvdrun' nohosts -- true", dest);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 2);
	CHECK_STR(p.err, "hvdrun: HOSTFILE: 'nohosts': cannot read it\n");
	test_proc_free(&p);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s' PREFIX=/usr", dest);
	make_cmd(cmd, sizeof(cmd), args);
	run_ok(cmd, 60, &p);
	test_proc_free(&p);
	check_files(dest, "");
	free(dest);
}

static const char hello_c[] =
	"#include <stdio.h>\n#include <hvd.h>\n"
	"int main(void)\n{\n"
	"\tif (hvd_init() != HVD_OK) { fprintf(stderr, \"%s\\n\", hvd_error()); return 1; }\n"
	"\tprintf(\"rank %d size %d hvd %s\\n\", hvd_rank(), hvd_size(), hvd_version());\n"
	"\treturn hvd_shutdown() != HVD_OK;\n}\n";

/* A program built with `pkg-config --cflags --libs hvd` against the
 * installed tree links libhvd.so.0 (not the archive) and runs one rank. */
static void test_pkg_config_program_links_the_shared_library(void)
{
	if (!built("libhvd.so.0"))
		SKIP("this build has no libhvd.so.0 (PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	CHECK(test_put("hello.c", hello_c) == 0);
	char cmd[4 * PATH_MAX], san[PATH_MAX + 8];
	struct test_proc p;
	/* a SAN build's library needs the sanitizers' runtime in the program */
	snprintf(san, sizeof(san), "%s/.san", test_build_dir());
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && export PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR='%s/usr/lib/pkgconfig' && "
		 "cc %s -o hello hello.c $(pkg-config --cflags --libs hvd) && readelf -d hello && "
		 "env -u HVD_RANK -u HVD_SIZE -u HVD_COORDINATOR -u PMIX_RANK LD_LIBRARY_PATH='%s/usr/lib' ./hello",
		 test_tmpdir(), dest, dest,
		 access(san, F_OK) == 0 ? "-fsanitize=address,undefined" : "", dest);
	run_ok(cmd, 90, &p);
	CHECK_CONTAINS(p.out, "Shared library: [libhvd.so.0]");
	CHECK_CONTAINS(p.out, "rank 0 size 1 hvd " HVD_VERSION "\n");
	test_proc_free(&p);
	free(dest);
}

/* Runs make ARGS (in the source tree), expects a non-zero exit and msg. */
static void make_fails_saying(const char *args, const char *msg)
{
	char cmd[4 * PATH_MAX];
	struct test_proc p;
	make_cmd(cmd, sizeof(cmd), args);
	CHECK_INT(test_run(cmd, 120, &p), 0);
	CHECK_MSG(p.exit_code != 0, "'%s' exited 0", args);
	CHECK_CONTAINS(p.err, msg);
	test_proc_free(&p);
}

static void test_relative_prefix_and_destdir_are_refused(void)
{
	make_fails_saying("install PREFIX=usr/local", "hvd: install: 'PREFIX=usr/local': not an absolute path");
	/* the whole value, not one word of it (in a DESTDIR: the bug wrote there) */
	char args[PATH_MAX + 64];
	snprintf(args, sizeof(args), "install DESTDIR='%s' 'PREFIX=rel /abs'", test_tmpdir());
	make_fails_saying(args, "hvd: install: 'PREFIX=rel /abs': not an absolute path");
	make_fails_saying("install DESTDIR=stage", "hvd: install: 'DESTDIR=stage': not an absolute path");
	make_fails_saying("uninstall bindir=bin", "hvd: install: 'bindir=bin': not an absolute path");
}

/* A *_HOME without its header: one line from mk/detect.sh (in a fresh
 * build folder of the case, so the suite's own detection stays). */
static void test_home_without_its_header_is_refused(void)
{
	char args[2 * PATH_MAX];
	const char *t = test_tmpdir();
	snprintf(args, sizeof(args), "B='%s/b' SLURM_HOME='%s' all", t, t);
	char want[PATH_MAX + 80];
	snprintf(want, sizeof(want), "hvd: build: 'SLURM_HOME=%s': no include/slurm/spank.h there", t);
	make_fails_saying(args, want);
	snprintf(args, sizeof(args), "B='%s/b' HWLOC_HOME='%s' all", t, t);
	snprintf(want, sizeof(want), "hvd: build: 'HWLOC_HOME=%s': no include/hwloc.h there", t);
	make_fails_saying(args, want);
}

/* hwloc missing: make install names the plugin and fails (it used to
 * install nothing, silently). */
static void test_install_without_hwloc_names_the_plugin(void)
{
	char args[2 * PATH_MAX];
	const char *t = test_tmpdir();
	snprintf(args, sizeof(args), "B='%s/b' WITH_HWLOC=0 install DESTDIR='%s/dest'", t, t);
	make_fails_saying(args, "hvd: install: 'hvd.so': needs hwloc (libhwloc-dev or HWLOC_HOME): not found");
	char *dest = test_path(t, "dest");
	struct stat st;
	CHECK_MSG(stat(dest, &st) != 0, "%s exists: something was installed", dest);
	free(dest);
}

/* Runs make ARGS; checks exit 0. */
static void make_ok(const char *args, int timeout_s)
{
	char cmd[6 * PATH_MAX];
	struct test_proc p;
	make_cmd(cmd, sizeof(cmd), args);
	run_ok(cmd, timeout_s, &p);
	test_proc_free(&p);
}

/* DESTDIR and PREFIX with a space: every file lands in the prefix, the
 * manifest names them, and uninstall removes exactly them. A file where
 * the prefix's first word ends (what a split path would remove) stays. */
static void test_spaces_in_destdir_and_prefix_work_end_to_end(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "stage dir"), args[2 * PATH_MAX], cmd[2 * PATH_MAX];
	char *planted = test_path(dest, "opt/hvd");
	CHECK(test_put("stage dir/opt/hvd", "not hvd's\n") == 0);
	snprintf(args, sizeof(args), "install DESTDIR='%s' PREFIX='/opt/hvd x' SPANK_PLUGIN_DIR=/usr/lib/slurm", dest);
	make_ok(args, 120);
	check_files(dest, "./opt/hvd\n"
		    "./opt/hvd x/bin/chexnet\n./opt/hvd x/bin/hvd-check\n./opt/hvd x/bin/hvdrun\n"
		    "./opt/hvd x/include/hvd.h\n"
		    "./opt/hvd x/lib/libhvd.a\n./opt/hvd x/lib/libhvd.so\n./opt/hvd x/lib/libhvd.so.0\n"
		    "./opt/hvd x/lib/pkgconfig/hvd.pc\n./opt/hvd x/libexec/hvd/hvdrun-ssh\n"
		    "./opt/hvd x/share/hvd/install-manifest\n"
		    "./opt/hvd x/share/hvd/plugstack.conf\n./opt/hvd x/share/man/man1/chexnet.1\n"
		    "./opt/hvd x/share/man/man1/hvdrun.1\n"
		    "./opt/hvd x/share/man/man3/hvd.3\n./opt/hvd x/share/man/man8/hvd-check.8\n"
		    "./opt/hvd x/share/man/man8/hvd.8\n./usr/lib/slurm/hvd.so\n");
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cat '%s/opt/hvd x/share/hvd/install-manifest'", dest);
	run_ok(cmd, 10, &p);
	/* of the folders install made (a staged install), hvd's own alone */
	CHECK_STR(p.out, "/opt/hvd x/bin/chexnet\n/opt/hvd x/bin/hvd-check\n/opt/hvd x/bin/hvdrun\n"
		  "/opt/hvd x/include/hvd.h\n"
		  "/opt/hvd x/lib/libhvd.a\n/opt/hvd x/lib/libhvd.so\n/opt/hvd x/lib/libhvd.so.0\n"
		  "/opt/hvd x/lib/pkgconfig/hvd.pc\n/opt/hvd x/libexec/hvd/hvdrun-ssh\n"
		  "/opt/hvd x/share/hvd/\n/opt/hvd x/share/hvd/install-manifest\n"
		  "/opt/hvd x/share/hvd/plugstack.conf\n"
		  "/opt/hvd x/share/man/man1/chexnet.1\n/opt/hvd x/share/man/man1/hvdrun.1\n"
		  "/opt/hvd x/share/man/man3/hvd.3\n"
		  "/opt/hvd x/share/man/man8/hvd-check.8\n/opt/hvd x/share/man/man8/hvd.8\n"
		  "/usr/lib/slurm/hvd.so\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "PKG_CONFIG_LIBDIR='%s/opt/hvd x/lib/pkgconfig' pkg-config --cflags --libs hvd", dest);
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, "-I/opt/hvd\\ x/include -L/opt/hvd\\ x/lib -lhvd \n");
	test_proc_free(&p);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s' PREFIX='/opt/hvd x' SPANK_PLUGIN_DIR=/usr/lib/slurm", dest);
	make_cmd(cmd, sizeof(cmd), args);
	run_ok(cmd, 60, &p);
	CHECK_MSG(!strstr(p.err, "hvd: uninstall:"), "uninstall says: %s", test_tail(p.err, 600));
	test_proc_free(&p);
	/* no file left but the planted one; hvd's folder gone, the others kept */
	check_files(dest, "./opt/hvd\n");
	snprintf(cmd, sizeof(cmd), "cd '%s/opt/hvd x/share' && find . | LC_ALL=C sort", dest);
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, ".\n./man\n./man/man1\n./man/man3\n./man/man8\n");
	test_proc_free(&p);
	char *left = test_read_file(planted, NULL);
	CHECK_STR(left ? left : "(gone)", "not hvd's\n");
	free(left);
	free(planted);
	free(dest);
}

/* A prefix with a space, installed for real (in the case's temp dir):
 * hvd.pc escapes it as pkg-config expects, and a program built with its
 * flags (through the shell's word rules, as make does) runs. */
static void test_pkg_config_reads_a_prefix_with_a_space(void)
{
	if (!built("libhvd.so.0"))
		SKIP("this build has no libhvd.so.0 (PMIx not found)");
	const char *t = test_tmpdir();
	char args[2 * PATH_MAX], cmd[6 * PATH_MAX], san[PATH_MAX + 8];
	snprintf(args, sizeof(args), "install PREFIX='%s/my prefix' SPANK_PLUGIN_DIR='%s/slurm'", t, t);
	make_ok(args, 120);
	CHECK(test_put("hello.c", hello_c) == 0);
	snprintf(san, sizeof(san), "%s/.san", test_build_dir());
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && export PKG_CONFIG_LIBDIR='%s/my prefix/lib/pkgconfig' && "
		 "eval \"cc %s -o hello hello.c $(pkg-config --cflags --libs hvd)\" && "
		 "env -u HVD_RANK -u HVD_SIZE -u HVD_COORDINATOR -u PMIX_RANK LD_LIBRARY_PATH='%s/my prefix/lib' ./hello",
		 t, t, access(san, F_OK) == 0 ? "-fsanitize=address,undefined" : "", t);
	run_ok(cmd, 90, &p);
	CHECK_CONTAINS(p.out, "rank 0 size 1 hvd " HVD_VERSION "\n");
	test_proc_free(&p);
}

/* Runs make ARGS expecting a refusal: msg in the one line saying hvd:,
 * and nothing written (no DESTDIR, no file a quote's shell code makes). */
static void refused_writing_nothing(const char *args, const char *msg)
{
	char cmd[6 * PATH_MAX];
	struct test_proc p;
	make_cmd(cmd, sizeof(cmd), args);
	CHECK_INT(test_run(cmd, 120, &p), 0);
	CHECK_MSG(p.exit_code != 0, "'%s' exited 0", args);
	CHECK_CONTAINS(p.err, msg);
	int lines = 0;
	for (const char *e = p.err; (e = strstr(e, "hvd: ")); e++)
		lines++;
	CHECK_MSG(lines == 1, "'%s': %d lines say hvd:: %s", args, lines, test_tail(p.err, 600));
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -mindepth 1 | LC_ALL=C sort", test_tmpdir());
	run_ok(cmd, 10, &p);
	CHECK_MSG(p.out[0] == 0, "'%s' wrote: %s", args, p.out);
	test_proc_free(&p);
}

/* A quote in any path would be shell code in a recipe: refused before
 * anything is written, in one line. */
static void test_quote_in_a_path_is_refused(void)
{
	const char *t = test_tmpdir();
	char args[3 * PATH_MAX], want[2 * PATH_MAX];
	snprintf(args, sizeof(args), "install DESTDIR='%s/d' PREFIX=\"/opt/x'; touch '%s/pwned\"", t, t);
	snprintf(want, sizeof(want), "hvd: install: 'PREFIX=/opt/x'; touch '%s/pwned': has a quote character", t);
	refused_writing_nothing(args, want);
	snprintf(args, sizeof(args), "install DESTDIR='%s/d' PREFIX='/opt/a\"b'", t);
	refused_writing_nothing(args, "hvd: install: 'PREFIX=/opt/a\"b': has a quote character");
	snprintf(args, sizeof(args), "install DESTDIR='%s/d' 'libdir=/usr/l`touch x`'", t);
	refused_writing_nothing(args, "hvd: install: 'libdir=/usr/l`touch x`': has a quote character");
	snprintf(args, sizeof(args), "install \"DESTDIR=%s/it's\"", t);
	snprintf(want, sizeof(want), "hvd: install: 'DESTDIR=%s/it's': has a quote character", t);
	refused_writing_nothing(args, want);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s/d' \"datadir=/usr/it's\"", t);
	refused_writing_nothing(args, "hvd: install: 'datadir=/usr/it's': has a quote character");
}

/* plugstack.conf splits its lines on whitespace: a plugin path with a
 * space cannot be written there, whether set or derived from PREFIX. */
static void test_whitespace_in_spank_plugin_dir_is_refused(void)
{
	const char *t = test_tmpdir();
	char args[3 * PATH_MAX];
	snprintf(args, sizeof(args), "install DESTDIR='%s/d' SPANK_PLUGIN_DIR='/usr/lib/my slurm'", t);
	refused_writing_nothing(args, "hvd: install: 'SPANK_PLUGIN_DIR=/usr/lib/my slurm': has whitespace");
	snprintf(args, sizeof(args), "install DESTDIR='%s/d' PREFIX='/opt/hvd x'", t);
	refused_writing_nothing(args, "hvd: install: 'SPANK_PLUGIN_DIR=/opt/hvd x/lib/slurm': has whitespace");
}

/* uninstall removes only what the manifest names, says which it could
 * not remove (exit 1), and without a manifest removes nothing. */
static void test_uninstall_names_what_it_could_not_remove(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest"), args[PATH_MAX + 64], cmd[2 * PATH_MAX + 256], want[PATH_MAX + 128];
	install_into(dest);
	CHECK(test_put("dest/usr/bin/mine", "not hvd's\n") == 0);
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "rm '%s/usr/bin/chexnet'", dest);
	run_ok(cmd, 10, &p);
	test_proc_free(&p);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s' PREFIX=/usr", dest);
	make_cmd(cmd, sizeof(cmd), args);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "uninstall exited 0 with a file missing");
	snprintf(want, sizeof(want), "hvd: uninstall: '%s/usr/bin/chexnet': not there", dest);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	check_files(dest, "./usr/bin/mine\n");
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "uninstall without a manifest exited 0");
	snprintf(want, sizeof(want), "hvd: uninstall: '%s/usr/share/hvd/install-manifest': no install manifest there", dest);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	check_files(dest, "./usr/bin/mine\n");
	free(dest);
}

/* Every file, folder and link under dir with its type, sorted: what a
 * refused uninstall must leave as it was. */
static char *tree_of(const char *dir)
{
	char cmd[PATH_MAX + 128];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -printf '%%y %%p\\n' | LC_ALL=C sort", dir);
	run_ok(cmd, 30, &p);
	char *out = strdup(p.out);
	test_proc_free(&p);
	return out;
}

/* outside/victim (the file hostile manifest lines point at) made in the
 * case's directory, then prepare (a shell command run there). */
static void victim_then(const char *prepare)
{
	char cmd[2 * PATH_MAX + 512];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p outside && echo mine > outside/victim && %s",
		 test_tmpdir(), prepare);
	run_ok(cmd, 30, &p);
	test_proc_free(&p);
}

/* make uninstall of the case's dest/ (PREFIX=/usr) after prepare (a shell
 * command run in the case's directory): refused, the message saying
 * want, and nothing under the case's directory (dest/ and the outside
 * folders the hostile lines point at) added, removed or changed. */
static void uninstall_refused(const char *prepare, const char *want)
{
	const char *t = test_tmpdir();
	char cmd[2 * PATH_MAX + 512], args[PATH_MAX + 64];
	struct test_proc p;
	victim_then(prepare);
	char *before = tree_of(t);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s/dest' PREFIX=/usr", t);
	make_cmd(cmd, sizeof(cmd), args);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "'%s': uninstall exited 0", prepare);
	CHECK_CONTAINS(p.err, want);
	CHECK_MSG(!strstr(p.err, "not there"), "'%s': uninstall removed files: %s", prepare, test_tail(p.err, 600));
	test_proc_free(&p);
	char *after = tree_of(t), *victim = test_path(t, "outside/victim");
	CHECK_STR(after, before);
	char *left = test_read_file(victim, NULL);
	CHECK_STR(left ? left : "(gone)", "mine\n");
	free(left);
	free(victim);
	free(after);
	free(before);
}

#define MANIFEST "dest/usr/share/hvd/install-manifest"

/* A manifest line that is not what install wrote (the manifest is
 * writable by whoever installed; root runs uninstall): the whole
 * manifest is refused before anything is removed. */
static void test_uninstall_refuses_lines_outside_the_install(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	free(dest);
	/* '..' out of DESTDIR: DESTDIR/../outside/victim */
	uninstall_refused("echo /../outside/victim >> " MANIFEST,
			  "hvd: uninstall: '/../outside/victim': in ");
	uninstall_refused("true", "has a '.' or '..' component: nothing removed");
	/* an absolute path outside bindir, libdir, ...; and a folder there */
	uninstall_refused("sed -i '/victim/d' " MANIFEST " && mkdir -p dest/etc/empty && "
			  "echo x > dest/etc/victim && printf '/etc/victim\\n/etc/empty/\\n' >> " MANIFEST,
			  "hvd: uninstall: '/etc/victim': in ");
	uninstall_refused("true", "hvd: uninstall: '/etc/empty/': in ");
	uninstall_refused("true", "outside the install directories (/usr/bin /usr/lib ");
	/* inside libdir, but no install rule writes it */
	uninstall_refused("sed -i '/etc/d' " MANIFEST " && echo /usr/lib/libc.so.6 >> " MANIFEST,
			  "hvd: uninstall: '/usr/lib/libc.so.6': in ");
	uninstall_refused("true", "not a file make install writes: nothing removed");
	uninstall_refused("sed -i '/libc/d' " MANIFEST " && echo /usr//bin/chexnet >> " MANIFEST,
			  "hvd: uninstall: '/usr//bin/chexnet': in ");
	uninstall_refused("sed -i '\\|//|d' " MANIFEST " && echo usr/bin/chexnet >> " MANIFEST,
			  "hvd: uninstall: 'usr/bin/chexnet': in ");
}

/* A symbolic link on a manifest line's path under DESTDIR (libdir made a
 * link to a folder elsewhere) or as its leaf (an installed file replaced
 * by a link out of its folder): refused, the link's target untouched. */
static void test_uninstall_refuses_symbolic_links(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	free(dest);
	uninstall_refused("mv dest/usr/lib lib.real && mkdir elsewhere && echo mine > elsewhere/libhvd.a && "
			  "ln -s ../../elsewhere dest/usr/lib",
			  "hvd: uninstall: '/usr/lib/libhvd.a': in ");
	uninstall_refused("true", "'/usr/lib' on its path is a symbolic link: nothing removed");
	uninstall_refused("rm dest/usr/lib && mv lib.real dest/usr/lib && rm dest/usr/bin/chexnet && "
			  "ln -s \"$PWD/outside/victim\" dest/usr/bin/chexnet",
			  "hvd: uninstall: '/usr/bin/chexnet': in ");
	uninstall_refused("true", "/outside/victim', not what make install made: nothing removed");
	/* a manifest read through a link */
	uninstall_refused("rm dest/usr/bin/chexnet && mv dest/usr/share/hvd hvd.real && ln -s ../../../hvd.real dest/usr/share/hvd",
			  "'/usr/share/hvd' on its path is a symbolic link: not read, nothing removed");
}

/* Folders that were there before the install are not recorded, so
 * uninstall leaves them, the manifest's own folder included; those it
 * made go once empty. An install without DESTDIR (into a prefix of the
 * case): a staged one records no folder but hvd's own. */
static void test_uninstall_keeps_the_folders_that_were_there(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	const char *t = test_tmpdir();
	char cmd[2 * PATH_MAX + 128], args[PATH_MAX + 64], want[8 * PATH_MAX];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p p/lib p/share/man/man3 p/share/hvd", t);
	run_ok(cmd, 10, &p);
	test_proc_free(&p);
	snprintf(args, sizeof(args), "install PREFIX='%s/p'", t);
	make_ok(args, 120);
	snprintf(cmd, sizeof(cmd), "grep '/$' '%s/p/share/hvd/install-manifest'", t);
	run_ok(cmd, 10, &p);
	snprintf(want, sizeof(want), "%s/p/bin/\n%s/p/include/\n%s/p/lib/pkgconfig/\n%s/p/lib/slurm/\n"
		 "%s/p/libexec/\n%s/p/libexec/hvd/\n%s/p/share/man/man1/\n%s/p/share/man/man8/\n",
		 t, t, t, t, t, t, t, t);
	CHECK_STR(p.out, want);
	test_proc_free(&p);
	/* a hand-made folder line for one that holds another's file stays */
	CHECK(test_put("p/share/man/man3/other.3", "not hvd's\n") == 0);
	snprintf(cmd, sizeof(cmd), "echo '%s/p/share/man/man3/' >> '%s/p/share/hvd/install-manifest'", t, t);
	run_ok(cmd, 10, &p);
	test_proc_free(&p);
	snprintf(args, sizeof(args), "uninstall PREFIX='%s/p'", t);
	make_cmd(cmd, sizeof(cmd), args);
	run_ok(cmd, 60, &p);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s/p' && find . | LC_ALL=C sort", t);
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, ".\n./lib\n./share\n./share/hvd\n./share/man\n"
		  "./share/man/man3\n./share/man/man3/other.3\n");
	test_proc_free(&p);
}

/* A package's tree (install PACKAGED=1, as pkg/pkg.mk and the spec stage
 * it): no manifest but a marker per package (PACKAGES, default hvd), and
 * uninstall refuses naming apt and dnf. A bad PACKAGES is refused before
 * anything is written. */
static void test_uninstall_refuses_a_package_install(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	const char *t = test_tmpdir();
	char args[PATH_MAX + 128];
	snprintf(args, sizeof(args), "install DESTDIR='%s/dest' PREFIX=/usr PACKAGED=1 PACKAGES='chexnet Lib'", t);
	refused_writing_nothing(args, "hvd: install: 'PACKAGES=chexnet Lib': 'Lib': not a package name");
	snprintf(args, sizeof(args), "install DESTDIR='%s/dest' PREFIX=/usr PACKAGES=chexnet", t);
	refused_writing_nothing(args, "hvd: install: 'PACKAGES=chexnet': names the packages of a PACKAGED=1 install");
	snprintf(args, sizeof(args), "install DESTDIR='%s/dest' PREFIX=/usr PACKAGED=1", t);
	make_ok(args, 120);
	char *m = test_path(t, MANIFEST);
	CHECK_MSG(access(m, F_OK) != 0, "PACKAGED=1 wrote %s", m);
	free(m);
	uninstall_refused("test -f dest/usr/share/hvd/installed-by-package.d/hvd",
			  "/dest/usr/share/hvd/installed-by-package.d/hvd': hvd was installed here by a package: "
			  "remove it with apt (");
	uninstall_refused("true", ") or dnf (dnf remove ");
	/* one marker per package named: each package ships its own */
	snprintf(args, sizeof(args), "install DESTDIR='%s/two' PREFIX=/usr PACKAGED=1 PACKAGES='chexnet libhvd0'", t);
	make_ok(args, 120);
	char cmd[PATH_MAX + 64];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s/two/usr/share/hvd' && ls installed-by-package.d && cat installed-by-package.d/chexnet", t);
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, "chexnet\nlibhvd0\nhvd was installed by a package (chexnet): remove it with apt or dnf, "
		  "not make uninstall\n");
	test_proc_free(&p);
	make_fails_saying("install PACKAGED=yes", "hvd: install: 'PACKAGED=yes': not 0 or 1");
}

/* make uninstall of the case's dest/ (PREFIX=/usr) with a shim of the
 * command NAME first in PATH: on its Nth call naming the case's dest/ (in
 * its arguments or working folder) it runs ACTION in the case's folder,
 * then the real NAME. What the installer does between uninstall's looks
 * at a path, done at a known moment. Returns the shim's having run (1). */
static int uninstall_with_shim(const char *name, int nth, const char *action, struct test_proc *p)
{
	const char *t = test_tmpdir();
	char rel[64], shim[4 * PATH_MAX], cmd[6 * PATH_MAX], args[PATH_MAX + 64];
	snprintf(rel, sizeof(rel), "shim/%s", name);
	snprintf(shim, sizeof(shim), "#!/bin/sh\ncase \"$PWD $*\" in *'%s/dest/'*)\n"
		 "\techo >> '%s/shim.calls'\n"
		 "\t[ \"$(wc -l < '%s/shim.calls')\" != %d ] || { : > '%s/shim.ran' && (cd '%s' && %s); } ;;\nesac\n"
		 "PATH=${PATH#*:} exec %s \"$@\"\n", t, t, t, nth, t, t, action, name);
	CHECK(test_put(rel, shim) == 0);
	snprintf(cmd, sizeof(cmd), "chmod +x '%s/%s'", t, rel);
	run_ok(cmd, 10, p);
	test_proc_free(p);
	snprintf(args, sizeof(args), "uninstall DESTDIR='%s/dest' PREFIX=/usr", t);
	make_cmd(shim, sizeof(shim), args);
	snprintf(cmd, sizeof(cmd), "export PATH='%s/shim':\"$PATH\" && %s", t, shim);
	CHECK_INT(test_run(cmd, 60, p), 0);
	snprintf(cmd, sizeof(cmd), "%s/shim.ran", t);
	return access(cmd, F_OK) == 0;
}

/* The victim outside dest/ the hostile manifests point at: still there. */
static void check_victim(void)
{
	char *victim = test_path(test_tmpdir(), "outside/victim");
	char *left = test_read_file(victim, NULL);
	CHECK_STR(left ? left : "(gone)", "mine\n");
	free(left);
	free(victim);
}

/* The installer renames a crafted manifest over the checked one while
 * uninstall (root) checks it (at its readlink of libhvd.so): uninstall
 * removes what it checked, never the crafted line's file. */
static void test_uninstall_acts_on_the_manifest_it_checked(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	struct test_proc p;
	victim_then("cp " MANIFEST " dest/crafted && echo /../outside/victim >> dest/crafted");
	CHECK_MSG(uninstall_with_shim("readlink", 1, "mv dest/crafted " MANIFEST, &p), "the shim did not run");
	CHECK_MSG(p.exit_code == 0, "uninstall: exit %d: %s", p.exit_code, test_tail(p.err, 600));
	test_proc_free(&p);
	check_victim();
	check_files(dest, "");
	free(dest);
}

/* A link to a file outside put in the manifest's place while uninstall
 * removes (at its first rm): the manifest kept (a file it could not
 * remove) replaces the link; the link's target is not written. */
static void test_uninstall_rewrites_the_manifest_without_following_a_link(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	struct test_proc p;
	char cmd[PATH_MAX + 256];
	victim_then("rm dest/usr/bin/chexnet && mkdir dest/usr/bin/chexnet");
	CHECK_MSG(uninstall_with_shim("rm", 1, "ln -sfn \"$PWD/outside/victim\" " MANIFEST, &p), "the shim did not run");
	CHECK_MSG(p.exit_code != 0, "uninstall exited 0 with a file left");
	CHECK_CONTAINS(p.err, "/usr/share/hvd/install-manifest': kept, naming the files above");
	test_proc_free(&p);
	check_victim();
	snprintf(cmd, sizeof(cmd), "cd '%s' && test -f " MANIFEST " && test ! -L " MANIFEST " && cat " MANIFEST,
		 test_tmpdir());
	run_ok(cmd, 10, &p);
	CHECK_CONTAINS(p.out, "/usr/bin/chexnet\n");
	test_proc_free(&p);
	free(dest);
}

/* Every file and link under the case's outside/, sorted. */
static char *outside_files(void)
{
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "cd '%s/outside' && find . -type f -o -type l | LC_ALL=C sort", test_tmpdir());
	return test_output_of(cmd, 30);
}

/* libdir moved out of dest/ and a link to it put in its place, after the
 * check of the whole manifest, at uninstall's Nth call of NAME: no file
 * of it is removed through the link (those left: LEFT, as find lists
 * them; each named in the manifest kept), and uninstall says why. */
static void uninstall_with_libdir_swapped(const char *name, int nth, const char *want, const char *left)
{
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	free(dest);
	struct test_proc p;
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir outside", test_tmpdir());
	run_ok(cmd, 10, &p);
	test_proc_free(&p);
	CHECK_MSG(uninstall_with_shim(name, nth, "mv dest/usr/lib outside/lib && ln -s \"$PWD/outside/lib\" dest/usr/lib", &p),
		  "the shim of %s did not run", name);
	CHECK_MSG(p.exit_code != 0, "uninstall exited 0 with libdir a link");
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	char *after = outside_files();
	CHECK_STR(after, left);
	free(after);
	snprintf(cmd, sizeof(cmd), "cd '%s' && grep '^/usr/lib/.*[^/]$' " MANIFEST " | sed 's|^/usr|.|'", test_tmpdir());
	char *kept = test_output_of(cmd, 10);
	CHECK_STR(kept, left);
	free(kept);
}

/* Each path is checked again just before it is removed: a link put on
 * its path after the whole manifest was checked (at the first rm, of
 * bindir's chexnet): every file of libdir stays. */
static void test_uninstall_checks_each_path_again_as_it_removes_it(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	uninstall_with_libdir_swapped("rm", 1, "/dest/usr/lib/libhvd.a': '/usr/lib' on its path is a symbolic link now: left alone",
				      "./lib/libhvd.a\n./lib/libhvd.so\n./lib/libhvd.so.0\n./lib/pkgconfig/hvd.pc\n"
				      "./lib/slurm/hvd.so");
}

/* The link put there between that check and the removal (at the check's
 * readlink of libhvd.so, the second readlink: the first is the whole
 * manifest's): the folder entered is not libdir, nothing removed there
 * (libhvd.a, before it, went while libdir was still there). */
static void test_uninstall_removes_in_the_folder_it_checked(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	uninstall_with_libdir_swapped("readlink", 2, "/dest/usr/lib/libhvd.so': could not remove it: its folder is not '",
				      "./lib/libhvd.so\n./lib/libhvd.so.0\n./lib/pkgconfig/hvd.pc\n./lib/slurm/hvd.so");
}

/* A staged install (DESTDIR, no PACKAGED=1: fpm, checkinstall, a site's
 * spec) makes /usr, /usr/lib, ... under an empty DESTDIR, which the
 * target system has: of the folders, the manifest names hvd's own only. */
static void test_staged_install_records_no_system_folder(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest"), cmd[PATH_MAX + 64];
	install_into(dest);
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "grep '/$' '%s/usr/share/hvd/install-manifest'", dest);
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, "/usr/share/hvd/\n");
	test_proc_free(&p);
	free(dest);
}

/* One package's marker (the chexnet package installed over a make
 * install): uninstall refuses, naming it, apt and dnf. */
static void test_uninstall_refuses_where_one_package_left_its_marker(void)
{
	if (!built("hvd.so") || !built("libhvd.so.0"))
		SKIP("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
	char *dest = test_path(test_tmpdir(), "dest");
	install_into(dest);
	free(dest);
	uninstall_refused("mkdir dest/usr/share/hvd/installed-by-package.d && "
			  "echo chexnet > dest/usr/share/hvd/installed-by-package.d/chexnet",
			  "/dest/usr/share/hvd/installed-by-package.d/chexnet': hvd was installed here by a package: "
			  "remove it with apt (");
}

static void test_man_pages_render_without_warnings(void)
{
	if (system("command -v groff > /dev/null 2>&1") != 0)
		SKIP("groff not installed (make test-deps installs groff-base)");
	const char *pages[] = { "man/chexnet.1", "man/hvd.3", "man/hvd.8", "man/hvd-check.8",
				"man/hvdrun.1" };
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char cmd[PATH_MAX + 64];
		struct test_proc p;
		snprintf(cmd, sizeof(cmd), "groff -ww -man -z '%s/%s'", test_src_dir(), pages[i]);
		run_ok(cmd, 30, &p);
		CHECK_MSG(p.err[0] == 0, "%s: groff says: %s", pages[i], test_tail(p.err, 600));
		test_proc_free(&p);
	}
}

const struct test_case install_tests[] = {
	{ "install_puts_exactly_the_expected_files", test_install_puts_exactly_the_expected_files },
	{ "pkg_config_program_links_the_shared_library",
	  test_pkg_config_program_links_the_shared_library },
	{ "relative_prefix_and_destdir_are_refused", test_relative_prefix_and_destdir_are_refused },
	{ "home_without_its_header_is_refused", test_home_without_its_header_is_refused },
	{ "install_without_hwloc_names_the_plugin", test_install_without_hwloc_names_the_plugin },
	{ "spaces_in_destdir_and_prefix_work_end_to_end", test_spaces_in_destdir_and_prefix_work_end_to_end },
	{ "pkg_config_reads_a_prefix_with_a_space", test_pkg_config_reads_a_prefix_with_a_space },
	{ "quote_in_a_path_is_refused", test_quote_in_a_path_is_refused },
	{ "whitespace_in_spank_plugin_dir_is_refused", test_whitespace_in_spank_plugin_dir_is_refused },
	{ "uninstall_names_what_it_could_not_remove", test_uninstall_names_what_it_could_not_remove },
	{ "uninstall_refuses_lines_outside_the_install", test_uninstall_refuses_lines_outside_the_install },
	{ "uninstall_refuses_symbolic_links", test_uninstall_refuses_symbolic_links },
	{ "uninstall_keeps_the_folders_that_were_there", test_uninstall_keeps_the_folders_that_were_there },
	{ "uninstall_refuses_a_package_install", test_uninstall_refuses_a_package_install },
	{ "uninstall_acts_on_the_manifest_it_checked", test_uninstall_acts_on_the_manifest_it_checked },
	{ "uninstall_rewrites_the_manifest_without_following_a_link",
	  test_uninstall_rewrites_the_manifest_without_following_a_link },
	{ "uninstall_checks_each_path_again_as_it_removes_it", test_uninstall_checks_each_path_again_as_it_removes_it },
	{ "uninstall_removes_in_the_folder_it_checked", test_uninstall_removes_in_the_folder_it_checked },
	{ "staged_install_records_no_system_folder", test_staged_install_records_no_system_folder },
	{ "uninstall_refuses_where_one_package_left_its_marker",
	  test_uninstall_refuses_where_one_package_left_its_marker },
	{ "man_pages_render_without_warnings", test_man_pages_render_without_warnings },
	{ 0 },
};
