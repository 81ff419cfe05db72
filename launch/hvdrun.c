/* hvdrun.c - start one hvd program as N ranks without a scheduler:
 *   hvdrun -n N [--hvd LIST] [-p PORT] [-g GRACE_S] [--topology XML]
 *          [--dry-run] -- COMMAND [ARGS...]
 * on this machine, each rank placed as `srun --hvd` places a task (the
 * plugin's own code, launch_plan.c; LIST is --hvd's: numa, socket, core,
 * none, first, only, verbose), and started and ended by launch_run.c;
 *   hvdrun [-p PORT] [-s SECRET_FILE] [-g GRACE_S] HOSTFILE -- COMMAND ...
 * over ssh, one rank per host-file line: the ssh launcher (contrib/hvdrun,
 * installed as BINDIR/../libexec/hvd/hvdrun-ssh; HVDRUN_SSH names
 * another, as in the build tree), which places nothing.
 * --dry-run prints each rank's placement and starts nothing; --topology
 * reads an hwloc XML instead of this machine (with --dry-run: another
 * machine's placement). Exit status: launch_run.h's; 2 for a usage error.
 * What it does not do: restart a failed rank, or place ranks over ssh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch_plan.h"
#include "launch_run.h"

/* The ssh launcher: HVDRUN_SSH, else installed beside this program as
 * make install puts it, BINDIR/../libexec/hvd/hvdrun-ssh. */
static void ssh_launcher(char *path, size_t len)
{
	const char *env = getenv("HVDRUN_SSH");
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if (env && *env)
		snprintf(path, len, "%s", env);
	else
		snprintf(path, len, "%s/../libexec/hvd/hvdrun-ssh", self);
}

static const char usage_text[] =
	"usage: hvdrun -n N [--hvd LIST] [-p PORT] [-g GRACE_S] [--topology XML] [--dry-run] "
	"-- COMMAND [ARGS...]\n"
	"       hvdrun [-p PORT] [-s SECRET_FILE] [-g GRACE_S] HOSTFILE -- COMMAND [ARGS...]\n"
	"  -n N        N ranks on this machine, one GPU each (one per socket without GPUs),\n"
	"              placed as srun --hvd places tasks; CUDA_VISIBLE_DEVICES, when set,\n"
	"              names the GPUs to use (indices in PCI bus order)\n"
	"  --hvd LIST  as srun's --hvd=LIST: numa (default), socket, core, none; first\n"
	"              (default), only; verbose\n"
	"  -p PORT     rank 0's port (default: a free one on 127.0.0.1)\n"
	"  -g GRACE_S  seconds between SIGTERM and SIGKILL when the ranks are ended (30)\n"
	"  --dry-run   print each rank's placement, start nothing\n"
	"  HOSTFILE    one rank per line over ssh (contrib/hvdrun's options)\n";

struct args {
	int count, port, dry_run, verbose;
	double grace_s;
	const char *topology;
	enum hvd_gpu_mode gpu;
	enum hvd_bind bind;
	char *const *cmd;
};

/* "hvdrun: what: 'value': why" and the usage error's status. */
static int usage_error(const char *what, const char *value, const char *why)
{
	fprintf(stderr, "hvdrun: %s: '%s': %s (hvdrun --help)\n", what, value ? value : "", why);
	return 2;
}

/* A decimal number in [lo, hi], digits and one '.' only (no sign, space,
 * hex or exponent); whole: digits only. */
static int number(const char *text, int whole, double lo, double hi, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = text ? strtod(text, &end) : 0;
	size_t digits = text ? strspn(text, "0123456789") : 0;
	if (!text || !digits || (whole && text[digits]) || *end || errno || v < lo || v > hi ||
	    (text[digits] && (text[digits] != '.' || strspn(text + digits + 1, "0123456789") !=
			      strlen(text + digits + 1))))
		return -1;
	*out = v;
	return 0;
}

static int parse_hvd(const char *list, struct args *a)
{
	struct hvd_site site;
	struct hvd_request req = { 0 };
	char err[512];
	options_site_defaults(&site);
	if (options_parse_request(list, &req, err, sizeof(err)) || req.off || req.help) {
		fprintf(stderr, "%s\n", req.off || req.help ? options_help_text() : err);
		return -1;
	}
	a->gpu = req.gpu_set ? req.gpu : site.gpu;
	a->bind = req.bind_set ? req.bind : site.bind;
	a->verbose = req.verbose;
	return 0;
}

/* 0; -1 after --help; or the exit status of a usage error (printed). */
static int parse(int argc, char **argv, struct args *a)
{
	double v;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(opt, "--dry-run")) {
			a->dry_run = 1;
			continue;
		}
		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			fputs(usage_text, stdout);
			return -1;
		}
		i++;
		if (!strcmp(opt, "-n") && !number(val, 1, 1, 4096, &v))
			a->count = (int)v;
		else if (!strcmp(opt, "-p") && !number(val, 1, 1, 65535, &v))
			a->port = (int)v;
		else if (!strcmp(opt, "-g") && !number(val, 0, 0, 86400, &v))
			a->grace_s = v;
		else if (!strcmp(opt, "--topology") && val)
			a->topology = val;
		else if (!strcmp(opt, "--hvd") && val) {
			if (parse_hvd(val, a))
				return 2;
		} else
			return usage_error(opt, val, "unknown option, or a value it does not take");
	}
	if (i + 1 >= argc)
		return usage_error("--", "", "no command after it");
	a->cmd = argv + i + 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .grace_s = 30 };
	struct launch_plan plan;
	char err[1024];
	cpu_set_t allowed;

	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (strcmp(argv[1], "-n") && strncmp(argv[1], "--", 2) && strcmp(argv[1], "-h")) {
		char ssh[PATH_MAX + 64];   /* a HOSTFILE, or its options */
		ssh_launcher(ssh, sizeof(ssh));
		execv(ssh, argv);
		fprintf(stderr, "hvdrun: '%s': %s (the ssh launcher)\n", ssh, strerror(errno));
		return 2;
	}
	parse_hvd("", &a);
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.count)
		return usage_error("-n", "", "missing: how many ranks on this machine");
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		fprintf(stderr, "hvdrun: sched_getaffinity: 'self': %s\n", strerror(errno));
		return 1;
	}
	/* another machine's topology, only printed: its own CPUs */
	const cpu_set_t *cpus = a.topology && a.dry_run ? NULL : &allowed;
	if (launch_plan_make(a.count, a.topology, getenv("CUDA_VISIBLE_DEVICES"), a.gpu, a.bind,
			     cpus, &plan, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		launch_plan_free(&plan);
		return 2;
	}
	if (a.dry_run || a.verbose)
		launch_plan_print(&plan, a.dry_run ? stdout : stderr);
	struct launch_options o = { a.port, a.grace_s, a.cmd };
	rc = a.dry_run ? 0 : launch_run(&plan, &o);
	launch_plan_free(&plan);
	return rc;
}
