/* message_audit.c - the trainer against the runtime's words (see
 * message_audit.h). Runs of MESSAGE_AUDIT_RUN bytes of the runtime's
 * literals are sorted once; each run of a trainer literal is looked up.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_audit.h"
#include "runner.h"

/* past the literal or character constant that starts at t[i] */
static size_t quoted_end(const char *t, size_t i, size_t n, char *out, size_t *o)
{
	char q = t[i++];
	while (i < n && t[i] != q) {
		if (t[i] == '\\' && i + 1 < n && out)
			out[(*o)++] = t[i++];
		else if (t[i] == '\\')
			i++;
		if (out)
			out[(*o)++] = t[i];
		i++;
	}
	return i + 1;
}

char *message_literals(const char *t)
{
	size_t n = strlen(t), o = 0;
	char *out = malloc(n + 2);
	int chain = 0;   /* the last token was a literal: the next one joins it */

	for (size_t i = 0; out && i < n;) {
		if (t[i] == '/' && t[i + 1] == '*') {
			const char *end = strstr(t + i + 2, "*/");
			i = end ? (size_t)(end - t) + 2 : n;
		} else if (t[i] == '/' && t[i + 1] == '/') {
			i += strcspn(t + i, "\n");
		} else if (t[i] == '"') {
			i = quoted_end(t, i, n, out, &o);
			chain = 1;
		} else if (isspace((unsigned char)t[i])) {
			i++;
		} else {
			if (chain)
				out[o++] = '\n';
			chain = 0;
			i = t[i] == '\'' ? quoted_end(t, i, n, NULL, NULL) : i + 1;
		}
	}
	if (out && chain)
		out[o++] = '\n';
	if (out)
		out[o] = '\0';
	return out;
}

struct run {
	const char *at;
	int file;
};

static struct {
	const char *skip;
	char **texts, **names;
	int files, cap;
} walk;

static int is_c(const char *path)
{
	size_t n = strlen(path);
	return n > 2 && path[n - 2] == '.' && (path[n - 1] == 'c' || path[n - 1] == 'h');
}

static int take_file(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)f;
	if (flag != FTW_F || !is_c(path) || (walk.skip && strstr(path, walk.skip)))
		return 0;
	char *src = test_read_file(path, NULL), *lit = src ? message_literals(src) : NULL;
	free(src);
	if (!lit)
		return -1;
	if (walk.files == walk.cap) {
		walk.cap = walk.cap ? 2 * walk.cap : 64;
		walk.texts = realloc(walk.texts, (size_t)walk.cap * sizeof(char *));
		walk.names = realloc(walk.names, (size_t)walk.cap * sizeof(char *));
	}
	walk.texts[walk.files] = lit;
	walk.names[walk.files++] = strdup(path);
	return 0;
}

static int read_tree(const char *dir, const char *skip)
{
	memset(&walk, 0, sizeof(walk));
	walk.skip = skip;
	return nftw(dir, take_file, 16, FTW_PHYS);
}

static int run_clean(const char *p)
{
	return strnlen(p, MESSAGE_AUDIT_RUN) == MESSAGE_AUDIT_RUN &&
	       !memchr(p, '%', MESSAGE_AUDIT_RUN) && !memchr(p, '\n', MESSAGE_AUDIT_RUN);
}

static int by_text(const void *a, const void *b)
{
	return memcmp(((const struct run *)a)->at, ((const struct run *)b)->at, MESSAGE_AUDIT_RUN);
}

/* The runtime's runs, sorted; *count of them. */
static struct run *runs_of(char **texts, int files, size_t *count)
{
	size_t n = 0, cap = 4096;
	struct run *r = malloc(cap * sizeof(*r));
	for (int f = 0; r && f < files; f++)
		for (const char *p = texts[f]; *p; p++) {
			if (!run_clean(p))
				continue;
			if (n == cap && !(r = realloc(r, (cap *= 2) * sizeof(*r))))
				break;
			r[n++] = (struct run){ p, f };
		}
	if (r)
		qsort(r, n, sizeof(*r), by_text);
	*count = n;
	return r;
}

static void free_walk(char **texts, char **names, int files)
{
	for (int i = 0; i < files; i++) {
		free(texts[i]);
		free(names[i]);
	}
	free(texts);
	free(names);
}

int message_audit(const char *words_dir, const char *skip, const char *dir, char *report,
		  size_t len)
{
	if (read_tree(words_dir, skip))
		return -1;
	char **wtexts = walk.texts, **wnames = walk.names;
	int wfiles = walk.files, hits = 0;
	size_t nruns, used = 0;
	struct run *runs = runs_of(wtexts, wfiles, &nruns);

	report[0] = '\0';
	if (!runs || read_tree(dir, NULL)) {
		free(runs);
		free_walk(wtexts, wnames, wfiles);
		return -1;
	}
	for (int f = 0; f < walk.files; f++)
		for (const char *p = walk.texts[f]; *p; p++) {
			struct run key = { p, 0 }, *hit = run_clean(p) ?
				bsearch(&key, runs, nruns, sizeof(*runs), by_text) : NULL;
			if (!hit)
				continue;
			hits++;
			if (used < len)
				used += (size_t)snprintf(report + used, len - used, "%s: '%.*s': %s's words\n",
							 walk.names[f], MESSAGE_AUDIT_RUN, p,
							 wnames[hit->file]);
			p += strcspn(p, "\n");   /* one line per literal */
			if (!*p)
				break;
		}
	free(runs);
	free_walk(wtexts, wnames, wfiles);
	free_walk(walk.texts, walk.names, walk.files);
	return hits;
}
