/* layout_check.c - the repository's dependency rule (HACKING.md,
 * "Layers"), checked on every `#include "..."` of spank/, runtime/,
 * check/, launch/ and trainer/ under a root directory:
 *   trainer/cmd      -> anything in trainer/ but a backend's own folder
 *   trainer/loop     -> loop, eval, train, backend/ (its own .h), data,
 *                       model, base; only loop/session.c, loop/train_device.c,
 *                       loop/algo_share.c and loop/train_health.h the gpu
 *                       backend's headers
 *   trainer/eval     -> eval, model, base
 *   trainer/train    -> train, model, base, backend/hooks.h (train/dist.c
 *                       also runtime/hvd.h; train/settings.h also
 *                       backend/'s own headers: a setting's type, the
 *                       precision, the backend choice)
 *   trainer/backend  -> backend/ (its own .h), model, base; a backend folder (ref/,
 *                       cpu/, gpu/) also its own files, never a sibling
 *                       backend, never data, never train/
 *   trainer/data, trainer/model -> themselves and base; inside data/, by
 *                       layers (data_layers below: image <- dicom <-
 *                       codec <- sets <- synth, pack <- load)
 *   trainer/base     -> base (and libc)
 *   runtime/         -> runtime only, by layers (runtime_layers below:
 *                       core <- bootstrap, plan <- observe, transport <-
 *                       vote <- engine <- control <- api); runtime/hvd.h
 *                       from any;
 *                       spank/ -> spank only
 *   check/           -> check and runtime/hvd.h (libhvd's public API) only
 *   launch/          -> launch and spank/'s pure headers (bind.h, options.h,
 *                       placement.h, topology.h) only
 * backend/hooks.h (the types training and a backend share) includes only libc; only
 * trainer/cmd/ names struct settings (the command line's options: the
 * loops take the configs train/settings.h composes it of); and no include cycle (file level). An include resolves like the build's
 * -I: the including file's folder, then trainer/, runtime/, spank/.
 * What this is not: a symbol-level check (nm) or a build.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layout_check.h"

#define MAX_FILES 1024
#define MAX_EDGES 8192

struct graph {
	const char *root;
	char *files[MAX_FILES];         /* repository-relative */
	int nfiles;
	int from[MAX_EDGES], to[MAX_EDGES];
	int nedges;
};

static int is_source(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot && (!strcmp(dot, ".c") || !strcmp(dot, ".h") || !strcmp(dot, ".cu") ||
		       !strcmp(dot, ".cuh"));
}

static void walk(struct graph *g, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", g->root, rel);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[2048];
		snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name);
		char full[4096];
		struct stat st;
		snprintf(full, sizeof(full), "%s/%s", g->root, sub);
		if (stat(full, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(g, sub);
		else if (is_source(e->d_name) && g->nfiles < MAX_FILES)
			g->files[g->nfiles++] = strdup(sub);
	}
	closedir(d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_file(const struct graph *g, const char *rel)
{
	for (int i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i], rel))
			return i;
	return -1;
}

/* "a/b/../c.h" -> "a/c.h" in place. */
static void normalise(char *p)
{
	char *s;
	while ((s = strstr(p, "/../"))) {
		char *prev = s;
		while (prev > p && prev[-1] != '/')
			prev--;
		memmove(prev, s + 4, strlen(s + 4) + 1);
	}
}

static int resolve(const struct graph *g, const char *from, const char *name)
{
	char dir[2048], cand[4096];
	snprintf(dir, sizeof(dir), "%s", from);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	const char *dirs[] = { dir, "trainer", "runtime", "spank" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", dirs[i], name);
		normalise(cand);
		int f = find_file(g, cand);
		if (f >= 0)
			return f;
	}
	return -1;
}

static void read_edges(struct graph *g, int f)
{
	char path[4096], line[1024];
	snprintf(path, sizeof(path), "%s/%s", g->root, g->files[f]);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p++ != '#')
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "include", 7) != 0)
			continue;
		char *q = strchr(p, '"'), *end = q ? strchr(q + 1, '"') : NULL;
		if (!q || !end)
			continue;
		*end = '\0';
		int t = resolve(g, g->files[f], q + 1);
		if (t >= 0 && g->nedges < MAX_EDGES) {
			g->from[g->nedges] = f;
			g->to[g->nedges++] = t;
		}
	}
	fclose(fp);
}

/* The layer of a file: "spank", "check", "launch", "runtime", "base", "data", "model",
 * "backend" (backend/'s own files), "backend/ref", "backend/cpu",
 * "backend/gpu" (the backends), "train", "eval", "loop", "recover",
 * "cmd", or "" (outside the rule). */
static void layer_of(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	if (!strncmp(path, "spank/", 6)) {
		snprintf(out, len, "spank");
	} else if (!strncmp(path, "check/", 6)) {
		snprintf(out, len, "check");
	} else if (!strncmp(path, "launch/", 7)) {
		snprintf(out, len, "launch");
	} else if (!strncmp(path, "runtime/", 8)) {
		const char *s1 = strchr(path + 8, '/');
		if (s1)
			snprintf(out, len, "%.*s", (int)(s1 - path), path);
		else
			snprintf(out, len, "runtime");
	} else if (!strncmp(path, "trainer/", 8)) {
		const char *rest = path + 8, *s1 = strchr(rest, '/');
		if (!s1)
			return;
		const char *s2 = strchr(s1 + 1, '/');
		if (!strncmp(rest, "backend/", 8) && s2)
			snprintf(out, len, "%.*s", (int)(s2 - rest), rest);
		else
			snprintf(out, len, "%.*s", (int)(s1 - rest), rest);
	}
}

static int in(const char *layer, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(layer, *set))
			return 1;
	return 0;
}

/* runtime/'s layers, each with the folders it may include (besides its
 * own and runtime/hvd.h, the API every layer may name). */
static const struct {
	const char *layer;
	const char *const below[10];
	const char *why;
} runtime_layers[] = {
	{ "runtime/core", { NULL }, "core includes only core" },
	{ "runtime/bootstrap", { "runtime/core", NULL }, "bootstrap includes core" },
	{ "runtime/observe", { "runtime/core", "runtime/bootstrap", NULL },
	  "observe includes core, bootstrap" },
	{ "runtime/plan", { "runtime/core", NULL }, "plan includes core" },
	{ "runtime/transport", { "runtime/core", "runtime/bootstrap", NULL },
	  "transport includes core, bootstrap" },
	{ "runtime/vote", { "runtime/core", "runtime/bootstrap", "runtime/transport", NULL },
	  "vote includes core, bootstrap, transport" },
	{ "runtime/engine", { "runtime/core", "runtime/bootstrap", "runtime/observe", "runtime/plan",
			      "runtime/transport", "runtime/vote", NULL },
	  "engine includes core, bootstrap, observe, plan, transport, vote" },
	{ "runtime/control", { "runtime/core", "runtime/bootstrap", "runtime/observe",
			       "runtime/plan", "runtime/transport", "runtime/vote", "runtime/engine",
			       NULL },
	  "control includes core, bootstrap, observe, plan, transport, vote, engine" },
	{ "runtime/api", { "runtime/core", "runtime/bootstrap", "runtime/observe", "runtime/plan",
			   "runtime/transport", "runtime/vote", "runtime/engine", "runtime/control",
			   NULL },
	  "api includes every runtime layer" },
};

/* trainer/data/'s sub-folders, each with the ones it may include besides
 * itself (HACKING.md, "Layers (trainer/)"). */
static const struct {
	const char *folder;
	const char *const below[6];
	const char *why;
} data_layers[] = {
	{ "image", { NULL }, "data/image includes only image" },
	{ "dicom", { "image", NULL }, "data/dicom includes image" },
	{ "codec", { "image", "dicom", NULL }, "data/codec includes image, dicom" },
	{ "sets", { "image", "dicom", "codec", NULL }, "data/sets includes image, dicom, codec" },
	{ "synth", { "image", "dicom", "codec", "sets", NULL },
	  "data/synth includes image, dicom, codec, sets" },
	{ "pack", { "image", "dicom", "codec", "sets", NULL },
	  "data/pack includes image, dicom, codec, sets" },
	{ "load", { "image", "dicom", "codec", "sets", "pack", NULL },
	  "data/load includes image, dicom, codec, sets, pack" },
};

/* The sub-folder of a trainer/data/ path ("" for a file directly in it). */
static void data_folder(const char *path, char *out, size_t len)
{
	const char *rest = path + strlen("trainer/data/"), *slash = strchr(rest, '/');
	snprintf(out, len, "%.*s", slash ? (int)(slash - rest) : 0, rest);
}

/* The rule between two trainer/data/ files (NULL: allowed). */
static const char *data_forbidden(const char *from, const char *to)
{
	char ff[64], ft[64];
	data_folder(from, ff, sizeof(ff));
	data_folder(to, ft, sizeof(ft));
	if (!ff[0] || !ft[0])
		return "trainer/data/: its files live in its sub-folders (HACKING.md)";
	if (!strcmp(ff, ft))
		return NULL;
	for (size_t i = 0; i < sizeof(data_layers) / sizeof(data_layers[0]); i++)
		if (!strcmp(ff, data_layers[i].folder))
			return in(ft, data_layers[i].below) ? NULL : data_layers[i].why;
	return "trainer/data/: a folder outside the layers (HACKING.md)";
}

/* The runtime rule for from's layer lf (NULL: allowed). */
static const char *runtime_forbidden(const char *lf, const char *to, const char *lt)
{
	if (strncmp(lt, "runtime", 7) != 0)
		return "runtime/ includes only runtime/";
	if (!strcmp(to, "runtime/hvd.h") || !strcmp(lf, "runtime/tests") || !strcmp(lf, lt))
		return NULL;
	for (size_t i = 0; i < sizeof(runtime_layers) / sizeof(runtime_layers[0]); i++)
		if (!strcmp(lf, runtime_layers[i].layer))
			return in(lt, runtime_layers[i].below) ? NULL : runtime_layers[i].why;
	return "runtime/: a folder outside the layers (HACKING.md)";
}

/* NULL when from -> to is allowed, else the rule it breaks. */
/* launch/ (hvdrun -n) shares the plugin's pure placement, never its
 * Slurm side (plugin.c, task.c, step_cpus.c). */
static const char *launch_forbidden(const char *to)
{
	static const char *const shared[] = { "spank/bind.h", "spank/options.h", "spank/placement.h",
					      "spank/topology.h", NULL };
	return in(to, shared) ? NULL : "launch/ includes only launch/ and spank/'s bind.h, "
	       "options.h, placement.h, topology.h";
}

static const char *forbidden(const char *from, const char *to)
{
	char lf[256], lt[256];
	layer_of(from, lf, sizeof(lf));
	layer_of(to, lt, sizeof(lt));
	if (!strcmp(from, "trainer/backend/hooks.h"))
		return "backend/hooks.h includes only libc (training and every backend reach it)";
	if (!strcmp(lf, "data") && !strcmp(lt, "data"))
		return data_forbidden(from, to);
	if (!lf[0] || !strcmp(lf, lt))
		return NULL;
	if (!strcmp(lf, "spank"))
		return "spank/ includes only spank/";
	if (!strcmp(lf, "check"))
		return strcmp(to, "runtime/hvd.h") ? "check/ includes only check/ and runtime/hvd.h" : NULL;
	if (!strcmp(lf, "launch"))
		return launch_forbidden(to);
	if (!strncmp(lf, "runtime", 7))
		return runtime_forbidden(lf, to, lt);
	static const char *const below_cmd[] = { "base", "data", "model", "backend", "train", "eval",
						 "loop", "recover", NULL };
	static const char *const below_recover[] = { "base", "data", "model", "backend", "train",
						     "eval", "loop", NULL };
	static const char *const below_loop[] = { "base", "data", "model", "backend", "train",
						  "eval", NULL };
	static const char *const model_base[] = { "model", "base", NULL };
	static const char *const base_only[] = { "base", NULL };
	if (!strcmp(lf, "cmd"))
		return in(lt, below_cmd) ? NULL
		       : "cmd includes trainer/ but never a backend's own folder";
	if (!strcmp(lf, "recover"))
		return in(lt, below_recover) ? NULL
		       : "recover includes recover, loop, eval, train, backend/, data, model, base";
	if (!strcmp(lf, "loop")) {
		if (in(lt, below_loop))
			return NULL;
		if (!strcmp(lt, "backend/gpu") && (!strcmp(from, "trainer/loop/session.c") ||
						   !strcmp(from, "trainer/loop/train_device.c") ||
						   !strcmp(from, "trainer/loop/algo_share.c") ||
						   !strcmp(from, "trainer/loop/train_health.h")))
			return NULL;
		return "loop includes loop, eval, train, backend/, data, model, base (the gpu "
		       "backend's headers only in session.c, train_device.c, algo_share.c, "
		       "train_health.h)";
	}
	if (!strcmp(lf, "eval"))
		return in(lt, model_base) ? NULL : "eval includes eval, model, base";
	if (!strcmp(lf, "train")) {
		if (in(lt, model_base))
			return NULL;
		if (!strcmp(from, "trainer/train/dist.c") && !strcmp(to, "runtime/hvd.h"))
			return NULL;
		if (!strcmp(to, "trainer/backend/hooks.h") ||
		    (!strcmp(from, "trainer/train/settings.h") && !strcmp(lt, "backend")))
			return NULL;
		return "train includes train, model, base, backend/hooks.h (and only train/dist.c "
		       "runtime/hvd.h, train/settings.h backend/'s headers)";
	}
	if (!strcmp(lf, "backend"))
		return in(lt, model_base) ? NULL : "backend/ includes backend/, model, base";
	if (!strncmp(lf, "backend/", 8)) {
		if (in(lt, model_base) || !strcmp(lt, "backend"))
			return NULL;
		return "a backend includes backend/ (its own .h), model, base";
	}
	if (!strcmp(lf, "data") || !strcmp(lf, "model"))
		return in(lt, base_only) ? NULL : "data and model include only base";
	if (!strcmp(lf, "base"))
		return "base includes only base";
	return NULL;
}

static void add(char *report, size_t len, const char *fmt, const char *a, const char *b,
		const char *c)
{
	size_t used = strlen(report);
	if (used + 1 < len)
		snprintf(report + used, len - used, fmt, a, b, c);
}

/* 1 when a trainer/ file outside cmd/ names struct settings. */
static int takes_the_options(const struct graph *g, const char *rel)
{
	char path[4096], line[1024];
	if (strncmp(rel, "trainer/", 8) != 0 || !strncmp(rel, "trainer/cmd/", 12) ||
	    !strcmp(rel, "trainer/train/settings.h") || !strcmp(rel, "trainer/train/settings.c"))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", g->root, rel);
	FILE *fp = fopen(path, "r");
	int found = 0;
	while (fp && !found && fgets(line, sizeof(line), fp))
		found = strstr(line, "struct settings") != NULL;
	if (fp)
		fclose(fp);
	return found;
}

/* Depth-first search; state 0 new, 1 on the stack, 2 done. Reports each
 * back edge as a cycle (the stack from the target on). */
static int dfs(const struct graph *g, int f, int *state, int *stack, int depth, char *report,
	       size_t len)
{
	int found = 0;
	state[f] = 1;
	stack[depth] = f;
	for (int e = 0; e < g->nedges; e++) {
		if (g->from[e] != f)
			continue;
		int t = g->to[e];
		if (state[t] == 1) {
			add(report, len, "%s%s", "layout: include cycle: ", "", "");
			int i = depth;
			while (i > 0 && stack[i] != t)
				i--;
			for (; i <= depth; i++)
				add(report, len, "%s%s", g->files[stack[i]], " -> ", "");
			add(report, len, "%s\n", g->files[t], "", "");
			found++;
		} else if (state[t] == 0) {
			found += dfs(g, t, state, stack, depth + 1, report, len);
		}
	}
	state[f] = 2;
	return found;
}

int layout_check(const char *root, char *report, size_t len)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (!g)
		return -1;
	g->root = root;
	report[0] = '\0';
	walk(g, "spank");
	walk(g, "check");
	walk(g, "launch");
	walk(g, "runtime");
	walk(g, "trainer");
	qsort(g->files, (size_t)g->nfiles, sizeof(g->files[0]), by_name);
	for (int f = 0; f < g->nfiles; f++)
		read_edges(g, f);
	int bad = 0;
	for (int e = 0; e < g->nedges; e++) {
		const char *why = forbidden(g->files[g->from[e]], g->files[g->to[e]]);
		if (why) {
			add(report, len, "layout: %s: includes '%s': ", g->files[g->from[e]],
			    g->files[g->to[e]], "");
			add(report, len, "%s\n", why, "", "");
			bad++;
		}
	}
	for (int f = 0; f < g->nfiles; f++) {
		if (takes_the_options(g, g->files[f])) {
			add(report, len, "layout: %s: names 'struct settings': only trainer/cmd/ "
			    "sees the command line's options; a loop takes its configs (train/settings.h)\n",
			    g->files[f], "", "");
			bad++;
		}
	}
	int *state = calloc((size_t)g->nfiles, sizeof(int)), *stack = calloc((size_t)g->nfiles + 1,
									       sizeof(int));
	for (int f = 0; state && stack && f < g->nfiles; f++)
		if (!state[f])
			bad += dfs(g, f, state, stack, 0, report, len);
	free(state);
	free(stack);
	for (int f = 0; f < g->nfiles; f++)
		free(g->files[f]);
	free(g);
	return bad;
}
