/* test_spank_options.c - the plugin's strict parsers (spank/options.c):
 * plugstack.conf arguments and --hvd=LIST with every bad input, how site
 * defaults and the request combine; the shipped plugstack fragment; the
 * built hvd.so (exported symbols, no libslurm, install with DESTDIR); the
 * contrib/srun wrapper's rewriting (with a stand-in for the real srun).
 * What it does not do: placement (test_spank_placement.c) or real Slurm
 * (test_spank_slurm.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "options.h"

static int parse_site_line(const char *line, struct hvd_site *site, char *err)
{
	char copy[2048];
	char *argv[32];
	int argc = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *tok = strtok(copy, " "); tok && argc < 32; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	return options_parse_site(argc, argv, site, err, 1200);
}

/* -------------------------------------------------------- plugstack args */

static void test_site_defaults_and_every_key(void)
{
	struct hvd_site s;
	char err[1200];
	CHECK_INT(parse_site_line("", &s, err), 0);
	CHECK_INT(s.default_on, 0);
	CHECK_INT(s.gpu, HVD_GPU_FIRST);
	CHECK_INT(s.bind, HVD_BIND_NUMA);
	CHECK_INT(s.oversubscribe_warn, 0);
	CHECK_STR(s.topology, "");
	CHECK_INT(s.verbose, 0);
	CHECK_INT(parse_site_line("default=on gpu=only bind=core oversubscribe=warn "
				  "topology=/etc/hvd/topo.xml verbose=1", &s, err), 0);
	CHECK_INT(s.default_on, 1);
	CHECK_INT(s.gpu, HVD_GPU_ONLY);
	CHECK_INT(s.bind, HVD_BIND_CORE);
	CHECK_INT(s.oversubscribe_warn, 1);
	CHECK_STR(s.topology, "/etc/hvd/topo.xml");
	CHECK_INT(s.verbose, 1);
	CHECK_INT(parse_site_line("bind=none default=off oversubscribe=error verbose=0", &s, err), 0);
	CHECK_INT(s.bind, HVD_BIND_NONE);
}

static void test_every_bad_site_argument_is_named(void)
{
	static const struct { const char *line, *msg; } bad[] = {
		{ "bogus=1", "hvd: plugstack.conf: 'bogus=1': unknown key (keys: default, gpu, bind, "
			     "oversubscribe, topology, verbose)" },
		{ "socket", "hvd: plugstack.conf: 'socket': not key=value" },
		{ "=on", "hvd: plugstack.conf: '=on': unknown key" },
		{ "default_bind=socket", "'default_bind=socket': unknown key" },
		{ "default=yes", "hvd: plugstack.conf: 'default=yes': bad value for default: use off or on" },
		{ "default=", "'default=': bad value for default" },
		{ "gpu=all", "'gpu=all': bad value for gpu: use first or only" },
		{ "gpu=First", "'gpu=First': bad value for gpu" },
		{ "bind=sock", "'bind=sock': bad value for bind: use numa, socket, core or none" },
		{ "bind=socket ", NULL },
		{ "oversubscribe=yes", "'oversubscribe=yes': bad value for oversubscribe: use error or warn" },
		{ "topology=topo.xml", "'topology=topo.xml': bad value for topology: use an absolute path" },
		{ "topology=", "'topology=': bad value for topology" },
		{ "verbose=2", "'verbose=2': bad value for verbose: use 0 or 1" },
		{ "verbose=true", "'verbose=true': bad value for verbose" },
		{ "bind=core bind=core", "'bind=core': key bind given twice" },
		{ "gpu=first verbose=1 gpu=only", "'gpu=only': key gpu given twice" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hvd_site s;
		char err[1200] = "";
		int rc = parse_site_line(bad[i].line, &s, err);
		if (!bad[i].msg) {
			CHECK_MSG(rc == 0, "'%s' refused: %s", bad[i].line, err);
			continue;
		}
		CHECK_MSG(rc == -1, "'%s' accepted", bad[i].line);
		CHECK_CONTAINS(err, bad[i].msg);
		CHECK_MSG(strchr(err, '\n') == NULL, "two lines: %s", err);
	}
	char longpath[1500] = "topology=/";
	memset(longpath + 10, 'a', 1200);
	longpath[1210] = 0;
	struct hvd_site s;
	char err[1200];
	char *argv[1] = { longpath };
	CHECK_INT(options_parse_site(1, argv, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "path too long");
}

static void test_shipped_plugstack_fragment_parses_and_documents_every_key(void)
{
	char *path = test_path(test_src_dir(), "etc/plugstack.conf.d/hvd.conf");
	char *text = test_read_file(path, NULL);
	free(path);
	CHECK(text != NULL);
	if (!text)
		return;
	const char *keys[] = { "default=off", "gpu=first", "bind=numa", "oversubscribe=error",
			       "topology=PATH", "verbose=0" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK_CONTAINS(text, keys[i]);
	char *line = strstr(text, "\nrequired @PLUGIN@ ");
	CHECK(line != NULL);
	if (line) {
		line += strlen("\nrequired @PLUGIN@ ");
		line[strcspn(line, "\n")] = 0;
		struct hvd_site s;
		char err[1200];
		CHECK_MSG(parse_site_line(line, &s, err) == 0, "%s", err);
	}
	free(text);
}

/* --------------------------------------------------------------- --hvd */

static void test_request_tokens(void)
{
	struct hvd_request r = { 0 };
	char err[512];
	CHECK_INT(options_parse_request(NULL, &r, err, sizeof(err)), 0);
	CHECK_INT(r.given, 1);
	CHECK_INT(r.gpu_set + r.bind_set + r.verbose + r.off + r.help, 0);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("", &r, err, sizeof(err)), 0);
	CHECK_INT(r.given, 1);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("only,core,verbose", &r, err, sizeof(err)), 0);
	CHECK(r.gpu_set && r.gpu == HVD_GPU_ONLY);
	CHECK(r.bind_set && r.bind == HVD_BIND_CORE);
	CHECK_INT(r.verbose, 1);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("socket,socket,first", &r, err, sizeof(err)), 0);
	CHECK(r.bind == HVD_BIND_SOCKET && r.gpu == HVD_GPU_FIRST);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("none", &r, err, sizeof(err)), 0);
	CHECK(r.bind == HVD_BIND_NONE);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("numa", &r, err, sizeof(err)), 0);
	CHECK(r.bind_set && r.bind == HVD_BIND_NUMA);
	CHECK_STR(options_bind_name(r.bind), "numa");
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("off", &r, err, sizeof(err)), 0);
	CHECK_INT(r.off, 1);
	memset(&r, 0, sizeof(r));
	CHECK_INT(options_parse_request("help", &r, err, sizeof(err)), 0);
	CHECK_INT(r.help, 1);
}

static void test_every_bad_request_names_the_token(void)
{
	static const struct { const char *list, *msg; } bad[] = {
		{ "sokcet", "hvd: --hvd: 'sokcet': unknown sub-option (use first, only, numa, socket, "
			    "core, none, verbose, off, help)" },
		{ "numa,socket", "hvd: --hvd: 'socket': conflicts with 'numa' given before" },
		{ "socket,verbos", "hvd: --hvd: 'verbos': unknown sub-option" },
		{ "Socket", "'Socket': unknown sub-option" },
		{ "socket ", "'socket ': unknown sub-option" },
		{ "gpu=only", "'gpu=only': unknown sub-option" },
		{ ",", "hvd: --hvd: ',': empty sub-option" },
		{ "socket,", "'socket,': empty sub-option" },
		{ ",socket", "',socket': empty sub-option" },
		{ "socket,,core", "'socket,,core': empty sub-option" },
		{ "first,only", "hvd: --hvd: 'only': conflicts with 'first' given before" },
		{ "socket,core", "hvd: --hvd: 'core': conflicts with 'socket' given before" },
		{ "none,verbose,socket", "'socket': conflicts with 'none' given before" },
		{ "off,verbose", "hvd: --hvd: 'off,verbose': off cannot be combined with other sub-options" },
		{ "core,off", "'core,off': off cannot be combined" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': unknown" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hvd_request r = { 0 };
		char err[512] = "";
		CHECK_MSG(options_parse_request(bad[i].list, &r, err, sizeof(err)) == -1,
			  "'%s' accepted", bad[i].list);
		CHECK_CONTAINS(err, bad[i].msg);
	}
}

static void test_a_later_hvd_overrides_an_earlier_one(void)
{
	struct hvd_request r = { 0 };
	char err[512];
	CHECK_INT(options_parse_request("core", &r, err, sizeof(err)), 0);
	CHECK_INT(options_parse_request(NULL, &r, err, sizeof(err)), 0);   /* remote: NULL then "" */
	CHECK_INT(options_parse_request("", &r, err, sizeof(err)), 0);
	CHECK(r.bind_set && r.bind == HVD_BIND_CORE);
	CHECK_INT(options_parse_request("socket", &r, err, sizeof(err)), 0);
	CHECK(r.bind == HVD_BIND_SOCKET);
	CHECK_INT(options_parse_request("off", &r, err, sizeof(err)), 0);
	CHECK(r.off && !r.bind_set);
	CHECK_INT(options_parse_request("verbose", &r, err, sizeof(err)), 0);
	CHECK(!r.off && r.verbose);
	/* `--hvd=off --hvd`: the bare one comes last and wins */
	CHECK_INT(options_parse_request("off", &r, err, sizeof(err)), 0);
	CHECK_INT(options_parse_request(NULL, &r, err, sizeof(err)), 0);
	CHECK(r.given && !r.off);
	/* help alone changes nothing else */
	CHECK_INT(options_parse_request("off", &r, err, sizeof(err)), 0);
	CHECK_INT(options_parse_request("help", &r, err, sizeof(err)), 0);
	CHECK(r.off && r.help);
}

static void test_site_and_request_resolve(void)
{
	struct hvd_site site;
	struct hvd_request none = { 0 }, req = { 0 };
	struct hvd_effective e;
	char err[512];
	options_site_defaults(&site);
	options_resolve(&site, &none, 1, &e);
	CHECK_INT(e.active, 0);                      /* default=off, no --hvd */
	site.default_on = 1;
	site.gpu = HVD_GPU_ONLY;
	site.bind = HVD_BIND_CORE;
	site.verbose = 1;
	options_resolve(&site, &none, 1, &e);
	CHECK_INT(e.active, 1);                      /* default=on and GPUs */
	CHECK(e.gpu == HVD_GPU_ONLY && e.bind == HVD_BIND_CORE && e.verbose);
	CHECK(e.topology == NULL);
	options_resolve(&site, &none, 0, &e);
	CHECK_INT(e.active, 0);                      /* default=on, CPU-only step */
	CHECK_INT(options_parse_request("off", &req, err, sizeof(err)), 0);
	options_resolve(&site, &req, 1, &e);
	CHECK_INT(e.active, 0);                      /* --hvd=off opts out */
	memset(&req, 0, sizeof(req));
	CHECK_INT(options_parse_request("first,none", &req, err, sizeof(err)), 0);
	snprintf(site.topology, sizeof(site.topology), "/t.xml");
	options_resolve(&site, &req, 0, &e);
	CHECK_INT(e.active, 1);                      /* --hvd on a CPU-only step */
	CHECK(e.gpu == HVD_GPU_FIRST && e.bind == HVD_BIND_NONE);
	CHECK_STR(e.topology, "/t.xml");
}

static void test_help_text_names_every_token(void)
{
	const char *h = options_help_text();
	const char *tokens[] = { "first", "only", "socket", "core", "none", "verbose", "off", "help",
				 "--gpu-bind=socket", "HVD_GPU_BUSID" };
	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++)
		CHECK_CONTAINS(h, tokens[i]);
}

/* --------------------------------------------------------------- hvd.so */

static char *plugin_path(void)
{
	char *p = test_path(test_build_dir(), "hvd.so");
	if (access(p, R_OK) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void test_plugin_exports_only_slurm_symbols(void)
{
	char *so = plugin_path(), cmd[4200];
	struct test_proc p;
	if (!so)
		SKIP("hvd.so not built (needs Slurm and hwloc headers)");
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' | awk '{print $3}'", so);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "plugin_name\n");
	CHECK_CONTAINS(p.out, "plugin_type\n");
	CHECK_CONTAINS(p.out, "plugin_version\n");
	CHECK_CONTAINS(p.out, "slurm_spank_init\n");
	CHECK_CONTAINS(p.out, "slurm_spank_task_init\n");
	for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n"))
		CHECK_MSG(strncmp(line, "slurm_spank_", 12) == 0 || strcmp(line, "plugin_name") == 0 ||
			  strcmp(line, "plugin_type") == 0 || strcmp(line, "plugin_version") == 0,
			  "hvd.so exports '%s'", line);
	test_proc_free(&p);
	/* libslurm is not linked: spank_* stay undefined for Slurm to resolve */
	snprintf(cmd, sizeof(cmd), "readelf -d '%s'; nm -D --undefined-only '%s'", so, so);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK(strstr(p.out, "libslurm") == NULL);
	CHECK_CONTAINS(p.out, "U spank_getenv");
	CHECK_CONTAINS(p.out, "BIND_NOW");
	test_proc_free(&p);
	free(so);
}

static void test_install_honours_destdir_and_prefix(void)
{
	char *so = plugin_path(), cmd[8192];
	struct test_proc p;
	if (!so)
		SKIP("hvd.so not built (needs Slurm and hwloc headers)");
	free(so);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && make --no-print-directory -s B='%s' install-spank DESTDIR='%s/root' PREFIX=/opt/hvd "
		 "&& find '%s/root' -type f | sort && cat '%s/root/opt/hvd/share/hvd/plugstack.conf'",
		 test_src_dir(), test_build_dir(), test_tmpdir(), test_tmpdir(), test_tmpdir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "/root/opt/hvd/lib/slurm/hvd.so\n");
	/* the plugstack.conf line is an example under PREFIX, never in /etc */
	CHECK_CONTAINS(p.out, "/root/opt/hvd/share/hvd/plugstack.conf\n");
	CHECK_CONTAINS(p.out, "/root/opt/hvd/share/man/man8/hvd.8\n");
	CHECK(strstr(p.out, "/root/etc") == NULL);
	CHECK_CONTAINS(p.out, "\nrequired /opt/hvd/lib/slurm/hvd.so default=off");
	CHECK(strstr(p.out, "contrib") == NULL);   /* the srun wrapper is not installed */
	test_proc_free(&p);
}

/* ------------------------------------------------------- srun wrapper */

/* Runs contrib/srun ARGS with a stand-in real srun that prints each
 * argument in brackets. */
static char *wrap(const char *args)
{
	char cmd[8192], *fake = test_path(test_tmpdir(), "real-srun");
	const char *script = "#!/bin/sh\nfor a; do printf '[%s]' \"$a\"; done; echo\n";
	struct test_proc p;
	test_write_file(fake, script, strlen(script));
	snprintf(cmd, sizeof(cmd), "chmod +x '%s' && HVD_REAL_SRUN='%s' '%s/contrib/srun' %s",
		 fake, fake, test_src_dir(), args);
	free(fake);
	if (test_run(cmd, 30, &p) != 0 || p.exit_code != 0) {
		test_fail_at(__FILE__, __LINE__, "wrapper failed: %s", p.err);
		test_proc_free(&p);
		return strdup("");
	}
	free(p.err);
	return p.out;
}

static void test_wrapper_rewrites_gpu_bind_socket(void)
{
	static const struct { const char *args, *want; } cases[] = {
		{ "--gpu-bind=socket --hvd ./chexnet", "[--hvd=socket][./chexnet]\n" },
		{ "--gpu-bind socket -n 4 ./chexnet", "[--hvd=socket][-n][4][./chexnet]\n" },
		{ "-n 4 --gpu-bind=verbose,socket ./chexnet", "[-n][4][--hvd=socket,verbose][./chexnet]\n" },
		{ "--gpu-bind=socket --hvd=only ./c", "[--hvd=socket,only][./c]\n" },
		{ "--gres gpu:4 --gpu-bind=socket -l ./c", "[--gres][gpu:4][--hvd=socket][-l][./c]\n" },
		{ "-ln 2 --gpu-bind=socket ./c", "[-ln][2][--hvd=socket][./c]\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = wrap(cases[i].args);
		CHECK_MSG(strcmp(out, cases[i].want) == 0, "srun %s -> %s", cases[i].args, out);
		free(out);
	}
}

static void test_wrapper_leaves_everything_else_alone(void)
{
	static const struct { const char *args, *want; } cases[] = {
		/* the program's own arguments */
		{ "-n 2 ./chexnet --gpu-bind=socket", "[-n][2][./chexnet][--gpu-bind=socket]\n" },
		{ "--gres gpu:4 ./p --gpu-bind socket", "[--gres][gpu:4][./p][--gpu-bind][socket]\n" },
		{ "--gpu-bind=socket -- ./p --gpu-bind=socket", "[--hvd=socket][--][./p][--gpu-bind=socket]\n" },
		/* Slurm's own values, and values srun itself must judge */
		{ "--gpu-bind=closest --hvd=core ./x", "[--gpu-bind=closest][--hvd=core][./x]\n" },
		{ "--gpu-bind single:1 ./x", "[--gpu-bind][single:1][./x]\n" },
		{ "--gpu-bind=socket,closest ./x", "[--gpu-bind=socket,closest][./x]\n" },
		{ "--gpu-bind=verbose ./x", "[--gpu-bind=verbose][./x]\n" },
		/* quoting preserved */
		{ "-J 'my job' sh -c 'echo \"$X\"; echo a\\ b' \"c'd\"",
		  "[-J][my job][sh][-c][echo \"$X\"; echo a\\ b][c'd]\n" },
		{ "--hvd=core --hvd=socket ./x", "[--hvd=core][--hvd=socket][./x]\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = wrap(cases[i].args);
		CHECK_MSG(strcmp(out, cases[i].want) == 0, "srun %s -> %s", cases[i].args, out);
		free(out);
	}
}

static void test_wrapper_finds_the_real_srun_after_itself(void)
{
	char cmd[8192];
	struct test_proc p;
	const char *t = test_tmpdir();
	/* PATH: wrapper dir (as "srun"), then a dir with a stand-in real srun */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/w' '%s/r' && ln -s '%s/contrib/srun' '%s/w/srun' && "
		 "printf '#!/bin/sh\\necho real \"$@\"\\n' > '%s/r/srun' && chmod +x '%s/r/srun' && "
		 "PATH='%s/w:%s/r:/usr/bin:/bin' srun --gpu-bind=socket --hvd ./chexnet",
		 t, t, test_src_dir(), t, t, t, t, t);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out, "real --hvd=socket ./chexnet\n");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "PATH='%s/w:/nonexistent' /bin/bash '%s/w/srun' -n 1 true", t, t);
	CHECK(test_run(cmd, 30, &p) == 0);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: srun wrapper: 'srun': no real srun on PATH");
	test_proc_free(&p);
}

const struct test_case spank_options_tests[] = {
	{ "site_defaults_and_every_key", test_site_defaults_and_every_key },
	{ "every_bad_site_argument_is_named", test_every_bad_site_argument_is_named },
	{ "shipped_plugstack_fragment_parses_and_documents_every_key",
	  test_shipped_plugstack_fragment_parses_and_documents_every_key },
	{ "request_tokens", test_request_tokens },
	{ "every_bad_request_names_the_token", test_every_bad_request_names_the_token },
	{ "a_later_hvd_overrides_an_earlier_one", test_a_later_hvd_overrides_an_earlier_one },
	{ "site_and_request_resolve", test_site_and_request_resolve },
	{ "help_text_names_every_token", test_help_text_names_every_token },
	{ "plugin_exports_only_slurm_symbols", test_plugin_exports_only_slurm_symbols },
	{ "install_honours_destdir_and_prefix", test_install_honours_destdir_and_prefix },
	{ "wrapper_rewrites_gpu_bind_socket", test_wrapper_rewrites_gpu_bind_socket },
	{ "wrapper_leaves_everything_else_alone", test_wrapper_leaves_everything_else_alone },
	{ "wrapper_finds_the_real_srun_after_itself", test_wrapper_finds_the_real_srun_after_itself },
	{ 0 }
};
