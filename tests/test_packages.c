/* test_packages.c - group "packages": what `make deb` and `make rpm-spec`
 * (pkg/pkg.mk) promise. The Debian packages hold exactly their files
 * (dpkg-deb -c); the plugin depends on the Slurm major.minor of the
 * headers (read here from their SLURM_VERSION_NUMBER, not from the
 * build); no package holds the install manifest (dpkg and rpm own the
 * files; each package ships its own marker, and make uninstall over the
 * extracted packages, or over a make install with only the chexnet
 * package extracted onto it, refuses naming apt and dnf);
 * the plugstack line is an optional conffile; chexnet from the
 * extracted packages runs the demo's data step (synth, pack); no packaged
 * ELF has a run path (readelf -d); lintian shows no error; the RPM spec
 * builds (rpmbuild -bb --nodeps) with exactly `make install`'s files.
 * The packages are built in the suite's BUILD/deb (incremental after the
 * first run) by the first case of a run that needs them, which leaves a
 * mark in the run's temp root; a case run alone builds them itself.
 * What it does not do: install a package on this machine (dpkg-deb -x
 * into the case's temp dir only), or install the RPMs (no RHEL here).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

static const char *const packages[] = { "chexnet", "hvd-slurm-plugin", "hvd-tools", "libhvd-dev",
					"libhvd0", NULL };

/* dpkg-deb -c of each package: mode and path (MA: the multiarch triplet). */
static const char *const contents[] = {
	"drwxr-xr-x ./\n"
	"drwxr-xr-x ./usr/\n"
	"drwxr-xr-x ./usr/bin/\n"
	"-rwxr-xr-x ./usr/bin/chexnet\n"
	"drwxr-xr-x ./usr/share/\n"
	"drwxr-xr-x ./usr/share/doc/\n"
	"drwxr-xr-x ./usr/share/doc/chexnet/\n"
	"-rw-r--r-- ./usr/share/doc/chexnet/changelog.gz\n"
	"-rw-r--r-- ./usr/share/doc/chexnet/copyright\n"
	"drwxr-xr-x ./usr/share/hvd/\n"
	"drwxr-xr-x ./usr/share/hvd/installed-by-package.d/\n"
	"-rw-r--r-- ./usr/share/hvd/installed-by-package.d/chexnet\n"
	"drwxr-xr-x ./usr/share/man/\n"
	"drwxr-xr-x ./usr/share/man/man1/\n"
	"-rw-r--r-- ./usr/share/man/man1/chexnet.1.gz\n",

	"drwxr-xr-x ./\n"
	"drwxr-xr-x ./etc/\n"
	"drwxr-xr-x ./etc/slurm/\n"
	"drwxr-xr-x ./etc/slurm/plugstack.conf.d/\n"
	"-rw-r--r-- ./etc/slurm/plugstack.conf.d/hvd.conf\n"
	"drwxr-xr-x ./usr/\n"
	"drwxr-xr-x ./usr/lib/\n"
	"drwxr-xr-x ./usr/lib/MA/\n"
	"drwxr-xr-x ./usr/lib/MA/slurm-wlm/\n"
	"-rw-r--r-- ./usr/lib/MA/slurm-wlm/hvd.so\n"
	"drwxr-xr-x ./usr/share/\n"
	"drwxr-xr-x ./usr/share/doc/\n"
	"drwxr-xr-x ./usr/share/doc/hvd-slurm-plugin/\n"
	"-rw-r--r-- ./usr/share/doc/hvd-slurm-plugin/changelog.gz\n"
	"-rw-r--r-- ./usr/share/doc/hvd-slurm-plugin/copyright\n"
	"drwxr-xr-x ./usr/share/hvd/\n"
	"drwxr-xr-x ./usr/share/hvd/installed-by-package.d/\n"
	"-rw-r--r-- ./usr/share/hvd/installed-by-package.d/hvd-slurm-plugin\n"
	"drwxr-xr-x ./usr/share/man/\n"
	"drwxr-xr-x ./usr/share/man/man8/\n"
	"-rw-r--r-- ./usr/share/man/man8/hvd.8.gz\n",

	"drwxr-xr-x ./\n"
	"drwxr-xr-x ./usr/\n"
	"drwxr-xr-x ./usr/bin/\n"
	"-rwxr-xr-x ./usr/bin/hvd-check\n"
	"-rwxr-xr-x ./usr/bin/hvdrun\n"
	"drwxr-xr-x ./usr/libexec/\n"
	"drwxr-xr-x ./usr/libexec/hvd/\n"
	"-rwxr-xr-x ./usr/libexec/hvd/hvdrun-ssh\n"
	"drwxr-xr-x ./usr/share/\n"
	"drwxr-xr-x ./usr/share/doc/\n"
	"drwxr-xr-x ./usr/share/doc/hvd-tools/\n"
	"-rw-r--r-- ./usr/share/doc/hvd-tools/changelog.gz\n"
	"-rw-r--r-- ./usr/share/doc/hvd-tools/copyright\n"
	"drwxr-xr-x ./usr/share/hvd/\n"
	"drwxr-xr-x ./usr/share/hvd/installed-by-package.d/\n"
	"-rw-r--r-- ./usr/share/hvd/installed-by-package.d/hvd-tools\n"
	"drwxr-xr-x ./usr/share/man/\n"
	"drwxr-xr-x ./usr/share/man/man1/\n"
	"-rw-r--r-- ./usr/share/man/man1/hvdrun.1.gz\n"
	"drwxr-xr-x ./usr/share/man/man8/\n"
	"-rw-r--r-- ./usr/share/man/man8/hvd-check.8.gz\n",

	"drwxr-xr-x ./\n"
	"drwxr-xr-x ./usr/\n"
	"drwxr-xr-x ./usr/include/\n"
	"-rw-r--r-- ./usr/include/hvd.h\n"
	"drwxr-xr-x ./usr/lib/\n"
	"drwxr-xr-x ./usr/lib/MA/\n"
	"-rw-r--r-- ./usr/lib/MA/libhvd.a\n"
	"drwxr-xr-x ./usr/lib/MA/pkgconfig/\n"
	"-rw-r--r-- ./usr/lib/MA/pkgconfig/hvd.pc\n"
	"drwxr-xr-x ./usr/share/\n"
	"drwxr-xr-x ./usr/share/doc/\n"
	"drwxr-xr-x ./usr/share/doc/libhvd-dev/\n"
	"-rw-r--r-- ./usr/share/doc/libhvd-dev/changelog.gz\n"
	"-rw-r--r-- ./usr/share/doc/libhvd-dev/copyright\n"
	"drwxr-xr-x ./usr/share/hvd/\n"
	"drwxr-xr-x ./usr/share/hvd/installed-by-package.d/\n"
	"-rw-r--r-- ./usr/share/hvd/installed-by-package.d/libhvd-dev\n"
	"drwxr-xr-x ./usr/share/man/\n"
	"drwxr-xr-x ./usr/share/man/man3/\n"
	"-rw-r--r-- ./usr/share/man/man3/hvd.3.gz\n"
	"lrwxrwxrwx ./usr/lib/MA/libhvd.so -> libhvd.so.0\n",

	"drwxr-xr-x ./\n"
	"drwxr-xr-x ./usr/\n"
	"drwxr-xr-x ./usr/lib/\n"
	"drwxr-xr-x ./usr/lib/MA/\n"
	"-rw-r--r-- ./usr/lib/MA/libhvd.so.0\n"
	"drwxr-xr-x ./usr/share/\n"
	"drwxr-xr-x ./usr/share/doc/\n"
	"drwxr-xr-x ./usr/share/doc/libhvd0/\n"
	"-rw-r--r-- ./usr/share/doc/libhvd0/changelog.gz\n"
	"-rw-r--r-- ./usr/share/doc/libhvd0/copyright\n"
	"drwxr-xr-x ./usr/share/hvd/\n"
	"drwxr-xr-x ./usr/share/hvd/installed-by-package.d/\n"
	"-rw-r--r-- ./usr/share/hvd/installed-by-package.d/libhvd0\n",
};

static void run_ok(const char *cmd, int timeout_s, struct test_proc *p)
{
	CHECK_INT(test_run(cmd, timeout_s, p), 0);
	CHECK_MSG(p->exit_code == 0, "'%.300s': exit %d: %s", cmd, p->exit_code, test_tail(p->err, 800));
}

static int have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s > /dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static char deb_dir[PATH_MAX];   /* DEB_B: BUILD/deb */

/* make TARGET DEB_B=BUILD/deb in the source tree, without the MAKEFLAGS
 * of a `make check` around the suite (SAN=1, GPU_EMU=1 must not leak). */
static int make_pkg(const char *target)
{
	char cmd[2 * PATH_MAX + 200];
	struct test_proc p;
	snprintf(deb_dir, sizeof(deb_dir), "%s/deb", test_build_dir());
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "
		 "make --no-print-directory %s DEB_B='%s'", test_src_dir(), target, deb_dir);
	run_ok(cmd, 280, &p);
	int ok = !p.timed_out && p.exit_code == 0;
	test_proc_free(&p);
	return ok;
}

/* Builds the packages; 0 (after a SKIP) when this machine cannot. */
static int build_debs(void)
{
	if (!have("dpkg-deb") || !have("dpkg-shlibdeps")) {
		test_skip("dpkg-deb or dpkg-shlibdeps missing (not Debian, or no dpkg-dev: make test-deps)");
		return 0;
	}
	char *so = test_path(test_build_dir(), "hvd.so"), *lib = test_path(test_build_dir(), "libhvd.so.0");
	int built = access(so, F_OK) == 0 && access(lib, F_OK) == 0;
	free(so);
	free(lib);
	if (!built) {
		test_skip("this build has no hvd.so or libhvd.so.0 (Slurm, hwloc or PMIx not found)");
		return 0;
	}
	/* the run's temp root holds this case's folder (ROOT/packages.N) */
	char mark[PATH_MAX + 32];
	snprintf(mark, sizeof(mark), "%s/../packages.deb-built", test_tmpdir());
	snprintf(deb_dir, sizeof(deb_dir), "%s/deb", test_build_dir());
	if (access(mark, F_OK) == 0)
		return 1;
	if (make_pkg("deb"))
		test_write_file(mark, "", 0);
	return 1;
}

static char *deb_path(const char *pkg)
{
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "ls '%s/deb/%s_'*.deb", deb_dir, pkg);
	return test_output_of(cmd, 10);
}

static char *multiarch(void)
{
	return test_output_of("dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null", 10);
}

/* s with every "MA" replaced by ma (malloc'd). */
static char *with_multiarch(const char *s, const char *ma)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;
	for (; *s; s++) {
		if (s[0] == 'M' && s[1] == 'A') {
			o = stpcpy(o, ma);
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return out;
}

static void test_each_package_holds_exactly_its_files(void)
{
	if (!build_debs())
		return;
	char *ma = multiarch();
	for (int i = 0; packages[i]; i++) {
		char *deb = deb_path(packages[i]), cmd[PATH_MAX + 128];
		snprintf(cmd, sizeof(cmd), "dpkg-deb -c '%s' | awk '{ $2 = $3 = $4 = $5 = \"\"; print }' | "
			 "sed 's/  *\\(\\.\\/\\)/ \\1/'", deb);
		char *got = test_output_of(cmd, 30), *want = with_multiarch(contents[i], ma);
		want[strlen(want) - 1] = 0;
		CHECK_MSG(!strcmp(got, want), "%s:\n%s\nwanted:\n%s", packages[i], got, want);
		/* dpkg owns the files: no package holds make install's manifest */
		CHECK_MSG(!strstr(got, "install-manifest"), "%s ships the install manifest", packages[i]);
		snprintf(cmd, sizeof(cmd), "dpkg-deb -f '%s' Version", deb);
		char *version = test_output_of(cmd, 10);
		CHECK_STR(version, HVD_VERSION);
		free(version);
		free(got);
		free(want);
		free(deb);
	}
	free(ma);
}

/* "X.Y" and "X.Y+1" of the Slurm headers the suite's build used. */
static void headers_slurm_range(char *mm, char *next, size_t len)
{
	char cmd[PATH_MAX + 400];
	snprintf(cmd, sizeof(cmd), "echo '#include <slurm/slurm_version.h>' | "
		 "cc $(sed -n 's/^SLURM_CFLAGS := //p' '%s/config.mk') -E -dM - | "
		 "sed -n 's/^#define SLURM_VERSION_NUMBER //p'", test_build_dir());
	char *num = test_output_of(cmd, 30);
	unsigned long v = strtoul(num, NULL, 0);
	CHECK_MSG(v > 0, "SLURM_VERSION_NUMBER '%s'", num);
	snprintf(mm, len, "%lu.%02lu", v >> 16 & 255, v >> 8 & 255);
	snprintf(next, len, "%lu.%02lu", v >> 16 & 255, (v >> 8 & 255) + 1);
	free(num);
}

static void test_dependencies_and_the_plugin_conffile(void)
{
	if (!build_debs())
		return;
	char mm[32], next[32], want[256], cmd[PATH_MAX + 200];
	headers_slurm_range(mm, next, sizeof(mm));
	snprintf(want, sizeof(want), ", slurm-wlm-basic-plugins (>= %s), slurm-wlm-basic-plugins (<< %s)", mm, next);
	char *plugin = deb_path("hvd-slurm-plugin");
	snprintf(cmd, sizeof(cmd), "dpkg-deb -f '%s' Depends", plugin);
	char *dep = test_output_of(cmd, 10);
	CHECK_CONTAINS(dep, want);
	CHECK_CONTAINS(dep, "libhwloc15 (>= ");   /* from dpkg-shlibdeps */
	free(dep);
	snprintf(cmd, sizeof(cmd), "dpkg-deb --ctrl-tarfile '%s' | tar -xO ./conffiles", plugin);
	char *conffiles = test_output_of(cmd, 10);
	CHECK_STR(conffiles, "/etc/slurm/plugstack.conf.d/hvd.conf");
	free(conffiles);
	snprintf(cmd, sizeof(cmd), "dpkg-deb --fsys-tarfile '%s' | tar -xO ./etc/slurm/plugstack.conf.d/hvd.conf | "
		 "grep -v '^#'", plugin);
	char *line = test_output_of(cmd, 10), *ma = multiarch();
	snprintf(want, sizeof(want), "optional /usr/lib/%s/slurm-wlm/hvd.so default=off ", ma);
	CHECK_MSG(!strncmp(line, want, strlen(want)), "plugstack line '%s'", line);
	free(line);
	free(plugin);

	char *chexnet = deb_path("chexnet");
	snprintf(cmd, sizeof(cmd), "dpkg-deb -f '%s' Depends", chexnet);
	dep = test_output_of(cmd, 10);
	CHECK_CONTAINS(dep, "libpmix2 (>= ");
	CHECK_CONTAINS(dep, "libdnnl2 (>= ");
	CHECK(strstr(dep, "libhvd0") == NULL);   /* libhvd is linked in, as make install's */
	free(dep);
	free(chexnet);
	char *dev = deb_path("libhvd-dev");
	snprintf(cmd, sizeof(cmd), "dpkg-deb -f '%s' Depends", dev);
	dep = test_output_of(cmd, 10);
	CHECK_STR(dep, "libhvd0 (= " HVD_VERSION "), libpmix-dev, nettle-dev, libopenmpi-dev");
	free(dep);
	free(dev);
	char *lib = deb_path("libhvd0");
	snprintf(cmd, sizeof(cmd), "dpkg-deb --ctrl-tarfile '%s' | tar -xO ./shlibs ./triggers", lib);
	char *ctl = test_output_of(cmd, 10);
	CHECK_STR(ctl, "libhvd 0 libhvd0 (>= " HVD_VERSION ")\nactivate-noawait ldconfig");
	free(ctl);
	free(lib);
	free(ma);
}

/* The range in hvd-slurm-plugin's Depends, read by dpkg itself: it admits
 * Debian's revisions of the headers' release and nothing of the next. */
static void test_slurm_range_admits_only_the_headers_release(void)
{
	if (!build_debs())
		return;
	char mm[32], next[32], cmd[PATH_MAX + 600];
	headers_slurm_range(mm, next, sizeof(mm));
	char *plugin = deb_path("hvd-slurm-plugin");
	/* each version: "yes" when both bounds hold, as dpkg compares them */
	snprintf(cmd, sizeof(cmd), "dep=$(dpkg-deb -f '%s' Depends) && "
		 "lo=$(echo \"$dep\" | sed -n 's/.*slurm-wlm-basic-plugins (>= \\([^)]*\\)).*/\\1/p') && "
		 "hi=$(echo \"$dep\" | sed -n 's/.*slurm-wlm-basic-plugins (<< \\([^)]*\\)).*/\\1/p') && "
		 "for v in %s.0-1 %s.8-4+deb12u3 %s.99-1 %s.0-1 %s.0~rc1-1; do "
		 "if dpkg --compare-versions \"$v\" ge \"$lo\" && dpkg --compare-versions \"$v\" lt \"$hi\"; "
		 "then echo \"$v yes\"; else echo \"$v no\"; fi; done",
		 plugin, mm, mm, mm, next, next);
	char *out = test_output_of(cmd, 30), want[512];
	snprintf(want, sizeof(want), "%s.0-1 yes\n%s.8-4+deb12u3 yes\n%s.99-1 yes\n%s.0-1 no\n%s.0~rc1-1 no",
		 mm, mm, mm, next, next);
	CHECK_STR(out, want);
	free(out);
	free(plugin);
}

/* pkg/deb.sh on a copy of make deb's stage: a file no package ships, a
 * listed file missing, a maintainer without an address; and make deb
 * with SLURM_HOME or DNNL_HOME: one line each, no package written,
 * nothing built. */
static void test_deb_refuses_unlisted_and_missing_files(void)
{
	if (!build_debs())
		return;
	const char *t = test_tmpdir();
	char cmd[4 * PATH_MAX + 256];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cp -a '%s/stage' '%s/stage' && touch '%s/stage/usr/share/hvd/extra'",
		 deb_dir, t, t);
	run_ok(cmd, 30, &p);
	test_proc_free(&p);
	const char *maint = "'A B <a@b.example>'";
	struct { const char *prepare, *maint, *error; } bad[] = {
		{ "true", maint,
		  "hvd: deb: 'usr/share/hvd/extra': staged by make install but no package ships it "
		  "(add it to pkg/deb/files)\n" },
		{ "rm stage/usr/share/hvd/extra stage/usr/share/man/man8/hvd.8", maint,
		  "hvd: deb: 'usr/share/man/man8/hvd.8': in pkg/deb/files but not staged by make install\n" },
		{ "true", "'nobody'", "hvd: deb: 'nobody': not 'Name <address>' (set DEB_MAINTAINER)\n" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "cd '%s' && %s && '%s/pkg/deb.sh' stage out '" HVD_VERSION "' 22.05.8 %s",
			 t, bad[i].prepare, test_src_dir(), bad[i].maint);
		CHECK_INT(test_run(cmd, 60, &p), 0);
		CHECK_MSG(p.exit_code == 1, "case %zu: exit %d", i, p.exit_code);
		CHECK_STR(p.err, bad[i].error);
		test_proc_free(&p);
	}
	/* a site Slurm's headers: Debian's Slurm package would be the wrong dependency */
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory deb "
		 "DEB_B='%s/b' SLURM_HOME='%s'", test_src_dir(), t, t);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK(p.exit_code != 0);
	char want[PATH_MAX + 200];
	snprintf(want, sizeof(want), "hvd: deb: 'SLURM_HOME=%s': the packages depend on Debian's Slurm "
		 "(slurm-wlm-basic-plugins): use make install for a site Slurm\n", t);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	/* a oneDNN of one's own (mk/onednn3.sh's): no Debian package provides it */
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory deb "
		 "DEB_B='%s/b' DNNL_HOME='%s'", test_src_dir(), t, t);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK(p.exit_code != 0);
	snprintf(want, sizeof(want), "hvd: deb: 'DNNL_HOME=%s': the packages depend on Debian's oneDNN "
		 "(libdnnl-dev) or bundle PyPI's 3.2 (ONEDNN=3): use make install for a oneDNN of your own\n", t);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "ls '%s/out/'*.deb '%s/b' 2> /dev/null | wc -l", t, t);
	char *debs = test_output_of(cmd, 10);
	CHECK_STR(debs, "0");
	free(debs);
}

/* dpkg-deb -x of every package into the case's ROOT; returns ROOT. */
static char *extract_all(void)
{
	char *root = test_path(test_tmpdir(), "root");
	for (int i = 0; packages[i]; i++) {
		char *deb = deb_path(packages[i]), cmd[2 * PATH_MAX + 32];
		struct test_proc p;
		snprintf(cmd, sizeof(cmd), "dpkg-deb -x '%s' '%s'", deb, root);
		run_ok(cmd, 30, &p);
		test_proc_free(&p);
		free(deb);
	}
	return root;
}

static void test_extracted_chexnet_runs_the_demo_data_step(void)
{
	if (!build_debs())
		return;
	char *root = extract_all(), *ma = multiarch(), cmd[4 * PATH_MAX];
	const char *t = test_tmpdir();
	char env[2 * PATH_MAX];
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH='%s/usr/lib/%s' '%s/usr/bin/chexnet'", root, ma, root);
	snprintf(cmd, sizeof(cmd), "%s --version", env);
	char *v = test_output_of(cmd, 30);
	CHECK_STR(v, "chexnet " HVD_VERSION);
	free(v);
	/* tests/demo.sh's data step, smaller: synth at twice the size, pack */
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s synth --out nih --count 40 --size 64 --seed 1 && "
		 "%s pack --data nih --out shards --size 37 2> /dev/null && cat shards/index.txt > /dev/null && ls shards",
		 t, env, env);
	char *out = test_output_of(cmd, 120);
	CHECK_CONTAINS(out, "chexnet: synth: 40 images of 64x64 (seed 1) in 'nih'\n");
	CHECK_CONTAINS(out, "chexnet: packed 40 images (train 22, val 5, test 13) at 37x37 into 3 shards");
	CHECK_CONTAINS(out, "\nindex.txt\ntest-00000.shard\ntrain-00000.shard\nval-00000.shard");
	free(out);
	free(ma);
	free(root);
}

static void test_no_packaged_elf_has_a_run_path(void)
{
	if (!build_debs())
		return;
	char *root = extract_all(), cmd[PATH_MAX + 400];
	/* every ELF file: its name, then readelf -d's RPATH/RUNPATH lines */
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -type f | LC_ALL=C sort | while read -r f; do "
		 "[ \"$(head -c 4 \"$f\" | od -An -c | tr -d ' ')\" = '177ELF' ] || continue; echo \"elf $f\"; "
		 "readelf -d \"$f\" | grep -E '\\((RPATH|RUNPATH)\\)'; done", root);
	char *out = test_output_of(cmd, 60), *ma = multiarch(), want[1024];
	/* libhvd.a is an archive, not an ELF file: five ELF files */
	snprintf(want, sizeof(want), "elf ./usr/bin/chexnet\nelf ./usr/bin/hvd-check\nelf ./usr/bin/hvdrun\n"
		 "elf ./usr/lib/%s/libhvd.so.0\nelf ./usr/lib/%s/slurm-wlm/hvd.so", ma, ma);
	CHECK_STR(out, want);
	free(out);
	free(ma);
	free(root);
}

/* make uninstall over the extracted packages (as dpkg would lay them
 * out): one line naming apt and dnf, nothing removed. */
static void test_uninstall_over_the_packages_refuses(void)
{
	if (!build_debs())
		return;
	char *root = extract_all(), *ma = multiarch(), cmd[4 * PATH_MAX], want[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . | LC_ALL=C sort", root);
	char *before = test_output_of(cmd, 30);
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
		 "B='%s' uninstall DESTDIR='%s' prefix=/usr libdir=/usr/lib/%s SPANK_PLUGIN_DIR=/usr/lib/%s/slurm-wlm",
		 test_src_dir(), deb_dir, root, ma, ma);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "make uninstall over the packages exited 0");
	snprintf(want, sizeof(want), "hvd: uninstall: '%s/usr/share/hvd/installed-by-package.d/chexnet': ", root);
	CHECK_CONTAINS(p.err, want);
	CHECK_CONTAINS(p.err, "remove it with apt (");
	CHECK_CONTAINS(p.err, ") or dnf (");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . | LC_ALL=C sort", root);
	char *after = test_output_of(cmd, 30);
	CHECK_STR(after, before);
	free(after);
	free(before);
	free(ma);
	free(root);
}

/* make install of the packages' build (a manifest), then the chexnet
 * package alone extracted onto it, as dpkg would put it over the files
 * make install wrote: make uninstall refuses on chexnet's own marker and
 * removes nothing (it would remove the package's chexnet). */
static void test_uninstall_over_the_chexnet_package_alone_refuses(void)
{
	if (!build_debs())
		return;
	const char *t = test_tmpdir();
	char *ma = multiarch(), *deb = deb_path("chexnet"), cmd[6 * PATH_MAX], want[PATH_MAX + 64];
	char dirs[PATH_MAX];
	snprintf(dirs, sizeof(dirs), "DESTDIR='%s/root' prefix=/usr libdir=/usr/lib/%s SPANK_PLUGIN_DIR=/usr/lib/%s/slurm-wlm",
		 t, ma, ma);
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory B='%s' "
		 "RPATH=0 WITH_CUDA=0 WITH_NCCL=0 WITH_CUDNN=0 WITH_CUBLAS=0 install %s > /dev/null && "
		 "test -f '%s/root/usr/share/hvd/install-manifest' && dpkg-deb -x '%s' '%s/root'",
		 test_src_dir(), deb_dir, dirs, t, deb, t);
	run_ok(cmd, 120, &p);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s/root' && find . -printf '%%y %%p\\n' | LC_ALL=C sort", t);
	char *before = test_output_of(cmd, 30);
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
		 "B='%s' uninstall %s", test_src_dir(), deb_dir, dirs);
	CHECK_INT(test_run(cmd, 60, &p), 0);
	CHECK_MSG(p.exit_code != 0, "make uninstall over the chexnet package exited 0");
	snprintf(want, sizeof(want), "hvd: uninstall: '%s/root/usr/share/hvd/installed-by-package.d/chexnet': "
		 "hvd was installed here by a package: remove it with apt (", t);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s/root' && find . -printf '%%y %%p\\n' | LC_ALL=C sort", t);
	char *after = test_output_of(cmd, 30);
	CHECK_STR(after, before);
	CHECK_CONTAINS(after, "f ./usr/bin/chexnet\n");
	free(after);
	free(before);
	free(deb);
	free(ma);
}

static void test_lintian_shows_no_errors(void)
{
	if (!have("lintian"))
		SKIP("lintian not installed (make test-deps installs it)");
	if (!build_debs())
		return;
	char cmd[PATH_MAX + 64];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "lintian '%s/deb/'*.deb", deb_dir);
	CHECK_INT(test_run(cmd, 240, &p), 0);
	CHECK_MSG(p.exit_code == 0, "lintian: exit %d:\n%s", p.exit_code, test_tail(p.out, 1500));
	CHECK_MSG(strncmp(p.out, "E: ", 3) && !strstr(p.out, "\nE: "), "lintian:\n%s", test_tail(p.out, 1500));
	test_proc_free(&p);
}

/* The RPMs' files (rpm -qp), without rpm's own /usr/lib/.build-id links
 * and folders, man pages without the .gz rpm adds on RHEL, sorted; and
 * `make install` of the same tree with the same directories. */
static void test_rpm_spec_builds_with_the_install_files(void)
{
	if (!have("rpmbuild") || !have("rpm"))
		SKIP("rpmbuild not installed (make test-deps installs rpm)");
	if (!build_debs())
		return;
	make_pkg("rpm-spec");
	const char *t = test_tmpdir();
	char cmd[6 * PATH_MAX];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL rpmbuild -bb --nodeps "
		 "--build-in-place --define '_topdir %s/rpm' --define 'hvd_b %s' '%s/hvd.spec'",
		 test_src_dir(), t, deb_dir, deb_dir);
	run_ok(cmd, 280, &p);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "ls '%s/rpm/RPMS/'*/*.rpm | sed 's|.*/||; s/\\.[^.]*\\.rpm$//'", t);
	char *rpms = test_output_of(cmd, 10);
	CHECK_STR(rpms, "chexnet-" HVD_VERSION "-1\nhvd-slurm-plugin-" HVD_VERSION "-1\n"
		  "hvd-tools-" HVD_VERSION "-1\n"
		  "libhvd-" HVD_VERSION "-1\nlibhvd-devel-" HVD_VERSION "-1");
	free(rpms);
	snprintf(cmd, sizeof(cmd), "rpm -qp --qf '[%%{FILEMODES:perms} %%{FILENAMES}\\n]' '%s/rpm/RPMS/'*/*.rpm "
		 "2> /dev/null | grep -v '^d' | cut -d' ' -f2 | grep -v '^/usr/lib/\\.build-id/' | "
		 "sed 's|^\\(/usr/share/man/.*\\)\\.gz$|\\1|' | LC_ALL=C sort", t);
	char *in_rpms = test_output_of(cmd, 30);
	/* installed from the packages' own tree, with pkg/pkg.mk's PKG_FLAGS
	 * (the suite's build may need flags this case does not know) */
	snprintf(cmd, sizeof(cmd), "cd '%s' && libdir=$(rpm --eval %%_libdir) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "
		 "make --no-print-directory B='%s' RPATH=0 PACKAGED=1 WITH_CUDA=0 WITH_NCCL=0 WITH_CUDNN=0 WITH_CUBLAS=0 "
		 "install DESTDIR='%s/dest' prefix=/usr libdir=$libdir SPANK_PLUGIN_DIR=$libdir/slurm "
		 "PACKAGES='hvd-slurm-plugin hvd-tools chexnet libhvd libhvd-devel' > /dev/null && "
		 "cd '%s/dest' && find . -type f -o -type l | sed 's|^\\.||' | LC_ALL=C sort",
		 test_src_dir(), deb_dir, t, t);
	char *installed = test_output_of(cmd, 120);
	CHECK_STR(in_rpms, installed);
	CHECK_CONTAINS(installed, "/usr/bin/chexnet\n");
	/* rpm owns the files: no install manifest, a marker per package
	 * that makes make uninstall refuse, each in its own package */
	CHECK_MSG(!strstr(in_rpms, "install-manifest"), "an RPM ships the install manifest:\n%s", in_rpms);
	CHECK_CONTAINS(in_rpms, "/usr/share/hvd/installed-by-package.d/chexnet\n");
	snprintf(cmd, sizeof(cmd), "for r in '%s/rpm/RPMS/'*/*.rpm; do n=$(rpm -qp --qf '%%{NAME}' \"$r\" 2> /dev/null) && "
		 "rpm -qpl \"$r\" 2> /dev/null | grep -qx \"/usr/share/hvd/installed-by-package.d/$n\" && echo \"$n\"; done", t);
	char *marked = test_output_of(cmd, 30);
	CHECK_STR(marked, "chexnet\nhvd-slurm-plugin\nhvd-tools\nlibhvd\nlibhvd-devel");
	free(marked);
	free(in_rpms);
	free(installed);
	snprintf(cmd, sizeof(cmd), "rpm -qp --requires '%s/rpm/RPMS/'*/hvd-slurm-plugin-*.rpm 2> /dev/null | grep slurm | LC_ALL=C sort", t);
	char *req = test_output_of(cmd, 10), mm[32], next[32], want[128];
	headers_slurm_range(mm, next, sizeof(mm));
	snprintf(want, sizeof(want), "slurm < %s\nslurm >= %s", next, mm);
	CHECK_STR(req, want);
	free(req);
}

static void test_slurm_range_of_a_version(void)
{
	char cmd[PATH_MAX + 64];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "'%s/pkg/slurm-range.sh' 22.05.8 && '%s/pkg/slurm-range.sh' 25.11.7",
		 test_src_dir(), test_src_dir());
	run_ok(cmd, 10, &p);
	CHECK_STR(p.out, "22.05 22.06\n25.11 25.12\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "'%s/pkg/slurm-range.sh' 24.11", test_src_dir());
	CHECK_INT(test_run(cmd, 10, &p), 0);
	CHECK(p.exit_code != 0);
	CHECK_STR(p.err, "hvd: package: 'SLURM_VERSION=24.11': not a Slurm version X.Y.Z (no Slurm headers found?)\n");
	test_proc_free(&p);
}

const struct test_case packages_tests[] = {
	{ "slurm_range_of_a_version", test_slurm_range_of_a_version },
	{ "each_package_holds_exactly_its_files", test_each_package_holds_exactly_its_files },
	{ "dependencies_and_the_plugin_conffile", test_dependencies_and_the_plugin_conffile },
	{ "slurm_range_admits_only_the_headers_release", test_slurm_range_admits_only_the_headers_release },
	{ "deb_refuses_unlisted_and_missing_files", test_deb_refuses_unlisted_and_missing_files },
	{ "extracted_chexnet_runs_the_demo_data_step", test_extracted_chexnet_runs_the_demo_data_step },
	{ "no_packaged_elf_has_a_run_path", test_no_packaged_elf_has_a_run_path },
	{ "uninstall_over_the_packages_refuses", test_uninstall_over_the_packages_refuses },
	{ "uninstall_over_the_chexnet_package_alone_refuses", test_uninstall_over_the_chexnet_package_alone_refuses },
	{ "lintian_shows_no_errors", test_lintian_shows_no_errors },
	{ "rpm_spec_builds_with_the_install_files", test_rpm_spec_builds_with_the_install_files },
	{ 0 },
};
