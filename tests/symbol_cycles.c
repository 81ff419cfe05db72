/* symbol_cycles.c - the file-level graph of a static library's members,
 * or of a list of object files, judged by their symbols (nm: a U symbol
 * of a.o that b.o defines is an edge a -> b), and every cycle in it: two
 * files that call each other, or a longer ring, printed from its least
 * name. An archive's member is named without its .o; a listed object by
 * its path after "obj/" without .o, so files of one name in two folders
 * stay apart.
 * What this is not: the include rule (layout_check.c) or a build.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol_cycles.h"

#define MAX_OBJS 512

struct sym {
	char *name;
	int obj;
};

struct graph {
	char *objs[MAX_OBJS];
	int nobjs;
	struct sym *defs;
	size_t ndefs, defcap;
	unsigned char edge[MAX_OBJS][MAX_OBJS];
	char *why[MAX_OBJS][MAX_OBJS];    /* one symbol behind each edge */
};

static int add_def(struct graph *g, const char *name, int obj)
{
	if (g->ndefs == g->defcap) {
		size_t cap = g->defcap ? 2 * g->defcap : 1024;
		struct sym *d = realloc(g->defs, cap * sizeof(*d));
		if (!d)
			return -1;
		g->defs = d;
		g->defcap = cap;
	}
	g->defs[g->ndefs].name = strdup(name);
	g->defs[g->ndefs++].obj = obj;
	return 0;
}

static int defined_by(const struct graph *g, const char *name)
{
	for (size_t i = 0; i < g->ndefs; i++)
		if (!strcmp(g->defs[i].name, name))
			return g->defs[i].obj;
	return -1;
}

/* The member's index, added when new (-1: too many). */
static int member(struct graph *g, const char *name, size_t len)
{
	for (int i = 0; i < g->nobjs; i++)
		if (strlen(g->objs[i]) == len && !strncmp(g->objs[i], name, len))
			return i;
	if (g->nobjs == MAX_OBJS)
		return -1;
	g->objs[g->nobjs] = strndup(name, len);
	return g->nobjs++;
}

/* The member a line of `nm -P -A` names: "lib.a[x.o]: NAME ..." (an
 * archive's member x) or "DIR/obj/x/y.o: NAME ..." (an object, x/y).
 * Returns the text after ": ", NULL when the line names neither. */
static const char *member_of(const char *line, const char **name, size_t *len)
{
	const char *open = strchr(line, '['), *close = open ? strstr(open, ".o]: ") : NULL;
	if (close) {
		*name = open + 1;
		*len = (size_t)(close - open - 1);
		return close + 5;
	}
	const char *end = strstr(line, ".o: ");
	if (!end)
		return NULL;
	const char *from = line;
	for (const char *o = strstr(line, "obj/"); o && o < end; o = strstr(o + 1, "obj/"))
		from = o + 4;
	*name = from;
	*len = (size_t)(end - from);
	return end + 4;
}

/* One pass over nm's output (cmd): kind 'd' collects the members and
 * their definitions, 'u' the edges. */
static int read_symbols(struct graph *g, const char *cmd, int kind)
{
	char line[4096], name[2048], type;
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		const char *who;
		size_t who_len;
		const char *rest = member_of(line, &who, &who_len);
		if (!rest || sscanf(rest, "%2047s %c", name, &type) != 2)
			continue;
		int o = member(g, who, who_len);
		if (o < 0)
			break;
		int global_def = type == 'T' || type == 'D' || type == 'B' || type == 'R' ||
				 type == 'C' || type == 'V' || type == 'W';
		if (kind == 'd' && global_def && add_def(g, name, o))
			break;
		if (kind == 'u' && type == 'U') {
			int t = defined_by(g, name);
			if (t >= 0 && t != o && !g->edge[o][t]) {
				g->edge[o][t] = 1;
				g->why[o][t] = strdup(name);
			}
		}
	}
	int complete = feof(p);
	return pclose(p) == 0 && complete ? 0 : -1;
}

static void add(char *report, size_t len, const char *text)
{
	size_t used = strlen(report);
	if (used + 1 < len)
		snprintf(report + used, len - used, "%s", text);
}

/* Depth-first search; state 0 new, 1 on the stack, 2 done. Each back
 * edge is a cycle: the stack from its target on, each step with the
 * symbol that makes it. */
static int dfs(const struct graph *g, int f, int *state, int *stack, int depth, char *report,
	       size_t len)
{
	int found = 0;
	char step[4096];
	state[f] = 1;
	stack[depth] = f;
	for (int t = 0; t < g->nobjs; t++) {
		if (!g->edge[f][t])
			continue;
		if (state[t] == 1) {
			int i = depth;
			while (i > 0 && stack[i] != t)
				i--;
			int len_c = depth - i + 1, first = 0; /* printed from its least name */
			for (int k = 1; k < len_c; k++)
				if (strcmp(g->objs[stack[i + k]], g->objs[stack[i + first]]) < 0)
					first = k;
			add(report, len, "layout: symbol cycle: ");
			for (int k = 0; k < len_c; k++) {
				int from = stack[i + (first + k) % len_c];
				int to = stack[i + (first + k + 1) % len_c];
				snprintf(step, sizeof(step), "%s -(%s)-> ", g->objs[from], g->why[from][to]);
				add(report, len, step);
			}
			add(report, len, g->objs[stack[i + first]]);
			add(report, len, "\n");
			found++;
		} else if (state[t] == 0) {
			found += dfs(g, t, state, stack, depth + 1, report, len);
		}
	}
	state[f] = 2;
	return found;
}

static void graph_free(struct graph *g)
{
	for (int i = 0; i < g->nobjs; i++) {
		free(g->objs[i]);
		for (int j = 0; j < g->nobjs; j++)
			free(g->why[i][j]);
	}
	for (size_t i = 0; i < g->ndefs; i++)
		free(g->defs[i].name);
	free(g->defs);
	free(g);
}

/* The cycles of the graph nm's output (cmd) describes; see symbol_cycles.h. */
static int cycles_of(const char *cmd, char *report, size_t len)
{
	struct graph *g = calloc(1, sizeof(*g));
	int bad = -1;
	report[0] = '\0';
	if (!g)
		return -1;
	if (read_symbols(g, cmd, 'd') || read_symbols(g, cmd, 'u'))
		goto out;
	int *state = calloc((size_t)g->nobjs + 1, sizeof(int));
	int *stack = calloc((size_t)g->nobjs + 1, sizeof(int));
	bad = g->nobjs ? 0 : -1;
	for (int f = 0; state && stack && f < g->nobjs; f++)
		if (!state[f])
			bad += dfs(g, f, state, stack, 0, report, len);
	if (!state || !stack)
		bad = -1;
	free(state);
	free(stack);
out:
	graph_free(g);
	return bad;
}

int symbol_cycles(const char *archive, char *report, size_t len)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "nm -P -A '%s' 2>/dev/null", archive);
	return cycles_of(cmd, report, len);
}

int symbol_cycles_of_list(const char *list, char *report, size_t len)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "test -s '%s' && xargs -a '%s' nm -P -A 2>/dev/null", list, list);
	return cycles_of(cmd, report, len);
}
