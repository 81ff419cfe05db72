/* options.h - what a site (plugstack.conf arguments) and a user (--hvd=LIST)
 * may ask of the hvd plugin, and the strict parsers for both.
 *
 * Pure: no Slurm, no hwloc, no I/O; errors come back as one line
 * `hvd: what: 'value': reason` in the caller's buffer. What it does not do:
 * decide GPUs or CPUs (placement.c) or talk to Slurm (plugin.c, task.c).
 */
#ifndef HVD_SPANK_OPTIONS_H
#define HVD_SPANK_OPTIONS_H

#include <stddef.h>

#define OPTIONS_PATH_MAX 1024

enum hvd_gpu_mode {
	HVD_GPU_FIRST,   /* every granted GPU visible, the task's own first */
	HVD_GPU_ONLY,    /* only the task's own GPU visible */
};

enum hvd_bind {
	HVD_BIND_SOCKET, /* every allowed CPU of the GPU's socket */
	HVD_BIND_CORE,   /* whole cores nearest the GPU, split among tasks */
	HVD_BIND_NONE,   /* GPU only, CPUs untouched */
	HVD_BIND_NUMA,   /* every allowed CPU of the GPU's NUMA node */
};

/* plugstack.conf: `required hvd.so default=off gpu=first ...` */
struct hvd_site {
	int default_on;                 /* default=on|off */
	enum hvd_gpu_mode gpu;          /* gpu=first|only */
	enum hvd_bind bind;             /* bind=socket|core|none */
	int oversubscribe_warn;         /* oversubscribe=error|warn */
	char topology[OPTIONS_PATH_MAX];/* topology=PATH, "" = discover */
	int verbose;                    /* verbose=0|1 */
};

/* --hvd[=LIST]; a field is only meaningful when its *_set flag is 1. */
struct hvd_request {
	int given;       /* --hvd appeared at all */
	int off;         /* --hvd=off */
	int help;        /* --hvd=help */
	int gpu_set;
	enum hvd_gpu_mode gpu;
	int bind_set;
	enum hvd_bind bind;
	int verbose;
};

/* What one step does, once site defaults and the request are combined. */
struct hvd_effective {
	int active;
	enum hvd_gpu_mode gpu;
	enum hvd_bind bind;
	int verbose;
	int oversubscribe_warn;
	const char *topology;   /* NULL = discover this machine */
};

void options_site_defaults(struct hvd_site *site);

/* argv as Slurm passes plugstack arguments: each "key=value". Unknown key,
 * bad value, missing '=', repeated key: -1 and a message naming it. */
int options_parse_site(int argc, char *const argv[], struct hvd_site *site,
		       char *err, size_t err_len);

/* Merges one --hvd argument into *req (NULL or "" = bare --hvd). Within one
 * LIST two different GPU modes or bind modes conflict; repeating a token is
 * fine. Unknown or empty tokens: -1 and a message naming the token. */
int options_parse_request(const char *list, struct hvd_request *req,
			  char *err, size_t err_len);

/* Site defaults + request. step_has_gpus: default=on only applies there. */
void options_resolve(const struct hvd_site *site, const struct hvd_request *req,
		     int step_has_gpus, struct hvd_effective *out);

const char *options_gpu_name(enum hvd_gpu_mode mode);
const char *options_bind_name(enum hvd_bind bind);

/* The grammar, several lines, for --hvd=help. */
const char *options_help_text(void);

#endif
