/* doc_refs.c - the repository's docs stand alone (group docs): no file
 * mentions the sibling folder the project grew up beside (".." then
 * "/shared"), and every repository path that a comment or a .md file
 * names exists. A path is a word with a "/" whose first part is a folder
 * at the top of the repository (trainer/backend/cpu/README.md,
 * tests/slurm/), a trainer layer path with a file suffix
 * (data/load/loader.h), or a bare file
 * name with a source suffix (.c .h .md .sh .mk .conf .sbatch .cu .py),
 * which must be the name of some file here. Not references: system paths
 * (/proc/...), placeholders (DIR/..., an upper-case first part), globs,
 * and the few names of files outside the repository in `external` below.
 * A .md file's relative links must reach a file of the repository and,
 * with an #anchor, a heading of it.
 * What this is not: a spelling check, or a check of web addresses.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc_refs.h"
#include "runner.h"

#define MAX_PATHS 4096

struct repo {
	const char *root;
	char *paths[MAX_PATHS];   /* files and folders, repository-relative */
	int count;
	char *report;
	size_t report_len;
	int bad;
};

/* Names of files that are not in the repository: Slurm's and the
 * system's configuration and headers, the generated build/config.mk, the
 * user's own job script in examples, llm.c (a project the house style
 * cites). */
static const char *const external[] = {
	"plugstack.conf", "slurm.conf", "gres.conf", "cgroup.conf", "sysexits.h", "spank.h",
	"nvml.h", "hwloc.h", "config.mk", "job.sh", "llm.c", NULL,
};
static const char *const suffixes[] = {
	".c", ".h", ".md", ".sh", ".mk", ".conf", ".sbatch", ".cu", ".cuh", ".py", NULL,
};
static const char *const layers[] = { "base", "data", "model", "backend", "train", "cmd", NULL };

static int one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return 1;
	return 0;
}

static int ends_with_suffix(const char *w)
{
	for (const char *const *s = suffixes; *s; s++) {
		size_t n = strlen(w), k = strlen(*s);
		if (n > k && !strcmp(w + n - k, *s))
			return 1;
	}
	return 0;
}

static void note(struct repo *r, const char *file, int line, const char *word, const char *why)
{
	size_t used = strlen(r->report);
	if (used + 1 < r->report_len)
		snprintf(r->report + used, r->report_len - used, "docs: %s:%d: '%s': %s\n", file,
			 line, word, why);
	r->bad++;
}

static int skipped_dir(const char *rel, const char *name)
{
	return name[0] == '.' || (!strchr(rel, '/') && !strncmp(name, "build", 5));
}

static void walk(struct repo *r, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", r->root, rel[0] ? "/" : "", rel);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[2048], full[4096];
		struct stat st;
		if (skipped_dir(rel[0] ? rel : e->d_name, e->d_name) || r->count >= MAX_PATHS)
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
		snprintf(full, sizeof(full), "%s/%s", r->root, sub);
		if (stat(full, &st) != 0)
			continue;
		r->paths[r->count++] = strdup(sub);
		if (S_ISDIR(st.st_mode))
			walk(r, sub);
	}
	closedir(d);
}

static int exists(const struct repo *r, const char *rel)
{
	for (int i = 0; i < r->count; i++)
		if (!strcmp(r->paths[i], rel))
			return 1;
	return 0;
}

static int basename_exists(const struct repo *r, const char *name)
{
	for (int i = 0; i < r->count; i++) {
		const char *s = strrchr(r->paths[i], '/');
		if (!strcmp(s ? s + 1 : r->paths[i], name))
			return 1;
	}
	return 0;
}

/* Checks one word of a comment or a .md file. */
static void check_word(struct repo *r, const char *file, int line, char *w)
{
	size_t n = strlen(w);
	while (n && (w[n - 1] == '.' || w[n - 1] == '-' || w[n - 1] == '/'))
		w[--n] = '\0';
	if (!n || w[0] == '/' || w[0] == '.' || strstr(w, "..") || strpbrk(w, "*%$<>{}"))
		return;
	char *slash = strchr(w, '/');
	if (!slash) {
		if (ends_with_suffix(w) && !one_of(w, external) && !basename_exists(r, w))
			note(r, file, line, w, "no file of the repository has this name");
		return;
	}
	char first[256], dir[2048], rel[4096];
	snprintf(first, sizeof(first), "%.*s", (int)(slash - w), w);
	int upper = 1;
	for (const char *c = first; *c; c++)
		upper &= isupper((unsigned char)*c) || *c == '_';
	if (upper)
		return;  /* a placeholder: DIR/..., BUILD/... */
	if (exists(r, first) && strchr(first, '.') == NULL) {
		snprintf(dir, sizeof(dir), "%s", file);
		char *end = strrchr(dir, '/');
		snprintf(rel, sizeof(rel), "%.*s/%s", end ? (int)(end - dir) : 0, dir, w);
		if (!exists(r, w) && !exists(r, rel))
			note(r, file, line, w, "names no file of the repository");
	} else if (one_of(first, layers) && ends_with_suffix(w)) {
		snprintf(rel, sizeof(rel), "trainer/%s", w);
		if (!exists(r, rel))
			note(r, file, line, w, "names no file of trainer/");
	}
}

static void check_text(struct repo *r, const char *file, const char *text, int line)
{
	char w[1024];
	size_t n = 0;
	for (const char *p = text;; p++) {
		int c = (unsigned char)*p;
		if (c && (isalnum(c) || strchr("_./-*%$<>{}", c))) {
			if (n + 1 < sizeof(w))
				w[n++] = (char)c;
			continue;
		}
		if (n) {
			w[n] = '\0';
			check_word(r, file, line, w);
			n = 0;
		}
		if (c == '\n')
			line++;
		if (!c)
			break;
	}
}

/* The comments of a C-like file, each checked with its line number. */
static void check_c(struct repo *r, const char *file, const char *s)
{
	int line = 1;
	for (const char *p = s; *p; p++) {
		if (*p == '\n') {
			line++;
		} else if (*p == '"' || *p == '\'') {
			char q = *p;
			for (p++; *p && *p != q && *p != '\n'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
			if (*p == '\n')
				line++;
		} else if (p[0] == '/' && (p[1] == '*' || p[1] == '/')) {
			const char *end = p[1] == '*' ? strstr(p + 2, "*/") : strchr(p, '\n');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			char *c = strndup(p + 2, len > 2 ? len - 2 : 0);
			if (c) {
				check_text(r, file, c, line);
				for (const char *k = c; *k; k++)
					line += *k == '\n';
				free(c);
			}
			p += len ? len - 1 : 0;
		}
	}
}

/* The text after '#' on each line (shell, make, Python, Slurm files). */
static void check_hash(struct repo *r, const char *file, const char *s)
{
	int line = 1;
	for (const char *p = s; *p; line++) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *hash = memchr(p, '#', (size_t)(end - p));
		if (hash) {
			char *c = strndup(hash + 1, (size_t)(end - hash - 1));
			if (c)
				check_text(r, file, c, line);
			free(c);
		}
		p = nl ? nl + 1 : end;
	}
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* Whether the Markdown text has a heading whose GitHub anchor is `want`
 * (lower case; letters, digits, '-' and '_' kept, spaces to '-', the
 * rest dropped). */
static int has_heading(const char *text, const char *want)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p != '#')
			continue;
		while (*p == '#')
			p++;
		while (*p == ' ')
			p++;
		char slug[512];
		size_t n = 0;
		for (; *p && *p != '\n' && n + 1 < sizeof(slug); p++) {
			unsigned char c = (unsigned char)*p;
			if (isalnum(c) || c == '-' || c == '_')
				slug[n++] = (char)tolower(c);
			else if (c == ' ')
				slug[n++] = '-';
		}
		slug[n] = '\0';
		if (!strcmp(slug, want))
			return 1;
	}
	return 0;
}

/* target (a relative link of file) as a repository path in out: "" for
 * the file itself; -1 when it climbs out of the repository. */
static int resolve_link(const char *file, const char *target, char *out, size_t len)
{
	char buf[4096];
	const char *slash = strrchr(file, '/');
	if (!target[0]) {
		snprintf(out, len, "%s", file);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%.*s%s%s", slash ? (int)(slash - file) : 0, file,
		 slash ? "/" : "", target);
	out[0] = '\0';
	for (char *save = NULL, *part = strtok_r(buf, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			char *up = strrchr(out, '/');
			if (!out[0])
				return -1;
			*(up ? up : out) = '\0';
			continue;
		}
		size_t used = strlen(out);
		snprintf(out + used, len - used, "%s%s", used ? "/" : "", part);
	}
	return 0;
}

/* The Markdown links [text](target) of a .md file: a relative target
 * must name a file or folder of the repository (from the file's own
 * folder) and its #anchor a heading of that .md file. Addresses with a
 * scheme (https://, mailto:) are not checked. */
static void check_links(struct repo *r, const char *file, const char *text)
{
	int line = 1;
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			line++;
		if (p[0] != ']' || p[1] != '(')
			continue;
		const char *t = p + 2, *end = strpbrk(t, ")\n ");
		if (!end || *end != ')')
			continue;
		char target[1024], rel[4096];
		snprintf(target, sizeof(target), "%.*s", (int)(end - t), t);
		if (strchr(target, ':'))
			continue;
		char *hash = strchr(target, '#');
		if (hash)
			*hash++ = '\0';
		if (resolve_link(file, target, rel, sizeof(rel))) {
			note(r, file, line, target, "a link out of the repository");
			continue;
		}
		if (!exists(r, rel)) {
			note(r, file, line, target, "a link to no file of the repository");
			continue;
		}
		if (!hash || !has_suffix(rel, ".md"))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", r->root, rel);
		char *linked = test_read_file(path, NULL);
		if (linked && !has_heading(linked, hash))
			note(r, file, line, hash, "a link to no heading of that file");
		free(linked);
	}
}

static void check_file(struct repo *r, const char *rel)
{
	char path[4096];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/%s", r->root, rel);
	char *text = test_read_file(path, &len);
	if (!text || memchr(text, '\0', len) || !strncmp(rel, "tests/fixtures/", 15)) {
		free(text);
		return;
	}
	char sibling[16];
	snprintf(sibling, sizeof(sibling), "../%s", "shared");
	const char *hit = strstr(text, sibling);
	if (hit) {
		int line = 1;
		for (const char *k = text; k < hit; k++)
			line += *k == '\n';
		note(r, rel, line, sibling, "a folder outside the repository");
	}
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (has_suffix(rel, ".md")) {
		check_text(r, rel, text, 1);
		check_links(r, rel, text);
	}
	else if (has_suffix(rel, ".c") || has_suffix(rel, ".h") || has_suffix(rel, ".cu") ||
		 has_suffix(rel, ".cuh") || has_suffix(rel, ".cpp"))
		check_c(r, rel, text);
	else if (has_suffix(rel, ".sh") || has_suffix(rel, ".mk") || has_suffix(rel, ".py") ||
		 has_suffix(rel, ".conf") || has_suffix(rel, ".sbatch") || !strcmp(base, "Makefile"))
		check_hash(r, rel, text);
	free(text);
}

int doc_refs_check(const char *root, char *report, size_t len)
{
	struct repo *r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	r->root = root;
	r->report = report;
	r->report_len = len;
	report[0] = '\0';
	walk(r, "");
	for (int i = 0; i < r->count; i++) {
		char full[4096];
		struct stat st;
		snprintf(full, sizeof(full), "%s/%s", root, r->paths[i]);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20))
			check_file(r, r->paths[i]);
	}
	int bad = r->bad;
	for (int i = 0; i < r->count; i++)
		free(r->paths[i]);
	free(r);
	return bad;
}
