/* options.c - strict parsers for the plugstack.conf arguments (site
 * defaults) and for --hvd=LIST (the user's request), and how the two
 * combine. Every unknown key, value or token is an error naming it; nothing
 * falls back to a default silently.
 * What it does not do: talk to Slurm, read files or choose GPUs/CPUs.
 */
#include <stdio.h>
#include <string.h>

#include "options.h"

#define REQUEST_TOKENS "first, only, numa, socket, core, none, verbose, off, help"
#define SITE_KEYS "default, gpu, bind, oversubscribe, topology, verbose"

void options_site_defaults(struct hvd_site *site)
{
	memset(site, 0, sizeof(*site));
	site->gpu = HVD_GPU_FIRST;
	site->bind = HVD_BIND_NUMA;
}

const char *options_gpu_name(enum hvd_gpu_mode mode)
{
	return mode == HVD_GPU_ONLY ? "only" : "first";
}

const char *options_bind_name(enum hvd_bind bind)
{
	switch (bind) {
	case HVD_BIND_CORE: return "core";
	case HVD_BIND_NONE: return "none";
	case HVD_BIND_NUMA: return "numa";
	default: return "socket";
	}
}

static int parse_gpu_mode(const char *s, enum hvd_gpu_mode *out)
{
	if (strcmp(s, "first") == 0)
		*out = HVD_GPU_FIRST;
	else if (strcmp(s, "only") == 0)
		*out = HVD_GPU_ONLY;
	else
		return -1;
	return 0;
}

static int parse_bind(const char *s, enum hvd_bind *out)
{
	if (strcmp(s, "socket") == 0)
		*out = HVD_BIND_SOCKET;
	else if (strcmp(s, "core") == 0)
		*out = HVD_BIND_CORE;
	else if (strcmp(s, "none") == 0)
		*out = HVD_BIND_NONE;
	else if (strcmp(s, "numa") == 0)
		*out = HVD_BIND_NUMA;
	else
		return -1;
	return 0;
}

/* Two-valued switches: exactly the two spellings given, nothing else. */
static int parse_switch(const char *s, const char *no, const char *yes, int *out)
{
	if (strcmp(s, no) == 0)
		*out = 0;
	else if (strcmp(s, yes) == 0)
		*out = 1;
	else
		return -1;
	return 0;
}

/* ------------------------------------------------------------ site args */

enum site_key { KEY_DEFAULT, KEY_GPU, KEY_BIND, KEY_OVERSUB, KEY_TOPOLOGY, KEY_VERBOSE,
		KEY_COUNT };
static const char *const site_key_names[KEY_COUNT] = {
	"default", "gpu", "bind", "oversubscribe", "topology", "verbose"
};

static int find_site_key(const char *arg, size_t key_len)
{
	for (int k = 0; k < KEY_COUNT; k++)
		if (strlen(site_key_names[k]) == key_len &&
		    strncmp(arg, site_key_names[k], key_len) == 0)
			return k;
	return -1;
}

/* Returns the "use ..." reason for a bad value of key k, or NULL when the
 * value was stored. */
static const char *set_site_value(struct hvd_site *site, int k, const char *v)
{
	switch (k) {
	case KEY_DEFAULT:
		return parse_switch(v, "off", "on", &site->default_on) ? "use off or on" : NULL;
	case KEY_GPU:
		return parse_gpu_mode(v, &site->gpu) ? "use first or only" : NULL;
	case KEY_BIND:
		return parse_bind(v, &site->bind) ? "use numa, socket, core or none" : NULL;
	case KEY_OVERSUB:
		return parse_switch(v, "error", "warn", &site->oversubscribe_warn)
			? "use error or warn" : NULL;
	case KEY_TOPOLOGY:
		if (v[0] != '/')
			return "use an absolute path to an hwloc XML file";
		if (strlen(v) >= sizeof(site->topology))
			return "path too long";
		snprintf(site->topology, sizeof(site->topology), "%s", v);
		return NULL;
	case KEY_VERBOSE:
		return parse_switch(v, "0", "1", &site->verbose) ? "use 0 or 1" : NULL;
	}
	return "unknown key";
}

int options_parse_site(int argc, char *const argv[], struct hvd_site *site,
		       char *err, size_t err_len)
{
	int seen[KEY_COUNT] = { 0 };
	options_site_defaults(site);
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const char *eq = strchr(arg, '=');
		if (!eq) {
			snprintf(err, err_len, "hvd: plugstack.conf: '%.200s': not key=value (keys: %s)",
				 arg, SITE_KEYS);
			return -1;
		}
		int k = find_site_key(arg, (size_t)(eq - arg));
		if (k < 0) {
			snprintf(err, err_len, "hvd: plugstack.conf: '%.200s': unknown key (keys: %s)",
				 arg, SITE_KEYS);
			return -1;
		}
		if (seen[k]++) {
			snprintf(err, err_len, "hvd: plugstack.conf: '%.200s': key %s given twice",
				 arg, site_key_names[k]);
			return -1;
		}
		const char *why = set_site_value(site, k, eq + 1);
		if (why) {
			snprintf(err, err_len, "hvd: plugstack.conf: '%.200s': bad value for %s: %s",
				 arg, site_key_names[k], why);
			return -1;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- request */

static int request_token(const char *tok, struct hvd_request *r, char *err, size_t err_len)
{
	enum hvd_gpu_mode gpu;
	enum hvd_bind bind;
	if (parse_gpu_mode(tok, &gpu) == 0) {
		if (r->gpu_set && r->gpu != gpu)
			goto conflict;
		r->gpu_set = 1;
		r->gpu = gpu;
	} else if (parse_bind(tok, &bind) == 0) {
		if (r->bind_set && r->bind != bind)
			goto conflict;
		r->bind_set = 1;
		r->bind = bind;
	} else if (strcmp(tok, "verbose") == 0) {
		r->verbose = 1;
	} else if (strcmp(tok, "off") == 0) {
		r->off = 1;
	} else if (strcmp(tok, "help") == 0) {
		r->help = 1;
	} else {
		snprintf(err, err_len, "hvd: --hvd: '%s': unknown sub-option (use %s)",
			 tok, REQUEST_TOKENS);
		return -1;
	}
	return 0;
conflict:
	snprintf(err, err_len, "hvd: --hvd: '%s': conflicts with '%s' given before",
		 tok, r->gpu_set && parse_gpu_mode(tok, &gpu) == 0 ? options_gpu_name(r->gpu)
		 : options_bind_name(r->bind));
	return -1;
}

/* One LIST into a fresh request: tokens separated by single commas. */
static int parse_list(const char *list, struct hvd_request *r, char *err, size_t err_len)
{
	char tok[64];
	const char *p = list;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0) {
			snprintf(err, err_len, "hvd: --hvd: '%.200s': empty sub-option (use %s)",
				 list, REQUEST_TOKENS);
			return -1;
		}
		if (n >= sizeof(tok)) {
			snprintf(err, err_len, "hvd: --hvd: '%.*s': unknown sub-option (use %s)",
				 (int)n, p, REQUEST_TOKENS);
			return -1;
		}
		memcpy(tok, p, n);
		tok[n] = 0;
		if (request_token(tok, r, err, err_len) != 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (r->off && (r->gpu_set || r->bind_set || r->verbose)) {
		snprintf(err, err_len, "hvd: --hvd: '%.200s': off cannot be combined with other sub-options",
			 list);
		return -1;
	}
	return 0;
}

int options_parse_request(const char *list, struct hvd_request *req, char *err, size_t err_len)
{
	struct hvd_request r = { 0 };
	if (list && list[0] && parse_list(list, &r, err, err_len) != 0)
		return -1;
	/* a later --hvd overrides what an earlier one set; anything but off,
	 * a bare --hvd included, turns it back on */
	req->given = 1;
	if (r.off) {
		req->off = 1;
		req->gpu_set = req->bind_set = req->verbose = 0;
	} else if (!r.help) {
		req->off = 0;
	}
	if (r.gpu_set) {
		req->gpu_set = 1;
		req->gpu = r.gpu;
	}
	if (r.bind_set) {
		req->bind_set = 1;
		req->bind = r.bind;
	}
	req->verbose |= r.verbose;
	req->help |= r.help;
	return 0;
}

void options_resolve(const struct hvd_site *site, const struct hvd_request *req,
		     int step_has_gpus, struct hvd_effective *out)
{
	memset(out, 0, sizeof(*out));
	if (req->given)
		out->active = !req->off;
	else
		out->active = site->default_on && step_has_gpus;
	out->gpu = req->gpu_set ? req->gpu : site->gpu;
	out->bind = req->bind_set ? req->bind : site->bind;
	out->verbose = req->verbose || site->verbose;
	out->oversubscribe_warn = site->oversubscribe_warn;
	out->topology = site->topology[0] ? site->topology : NULL;
}

const char *options_help_text(void)
{
	return
	"hvd: --hvd[=LIST]: one GPU per task, CPUs and memory nearest it\n"
	"  LIST is comma-separated, at most one of each group:\n"
	"    first   (default) CUDA_VISIBLE_DEVICES lists every GPU granted on the\n"
	"            node, the task's own first (peers stay visible: CUDA IPC/P2P)\n"
	"    only    CUDA_VISIBLE_DEVICES is the task's GPU alone (no P2P to peers)\n"
	"    numa    (default) bind to every allowed CPU of the GPU's NUMA node\n"
	"    socket  bind to every allowed CPU of the GPU's socket\n"
	"    core    whole cores nearest the GPU (its NUMA node, then socket),\n"
	"            never shared between tasks\n"
	"    none    set the GPU only, leave CPUs alone\n"
	"    verbose each task prints rank, host, GPU, bus id, NUMA, socket, CPUs\n"
	"    off     opt out where the site applies hvd by default\n"
	"    help    print this and stop\n"
	"  e.g. srun --hvd -n 4 --gres=gpu:4 ./chexnet; srun --hvd=core,verbose ...\n"
	"  Stock Slurm rejects --gpu-bind=socket; --hvd=socket is the way to ask.\n"
	"  Tasks see HVD_GPU_BUSID, HVD_CPUS, HVD_NUMA, HVD_SOCKET, HVD_BIND.\n";
}
