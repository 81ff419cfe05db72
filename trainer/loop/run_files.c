/* loop/run_files.c - the run folder's own and foreign entries, and the
 * guard before a run writes there (run_files.h).
 * What it does not do: write the run's files.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "loop/run_files.h"
#include "train/checkpoint_replace.h"
#include "train/run_record.h"

static const char *const written[] = { RUN_RECORD_FILE, "metrics.csv", "tb", "last", "best",
				       "test.json" };

const char *const *run_files_written(const struct train_config *c, int *count)
{
	*count = c->test_at_end ? 6 : 5;
	return written;
}

/* What the folder holds, by kind. */
struct scan {
	struct run_files own;
	char **foreign;             /* names, in readdir order */
	int foreign_count, own_present;
	const char *checkpoint;     /* an own last/ or best/ (a run to resume), or NULL */
};

/* NAME.foreign-N: set aside by an earlier --overwrite. */
static int set_aside(const char *name)
{
	const char *p = strstr(name, ".foreign-");

	if (!p || !p[9])
		return 0;
	for (p += 9; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* name is an own entry, or the leftover of an interrupted write of one. */
static int own_name(const struct run_files *own, const char *name)
{
	for (int i = 0; i < own->count; i++) {
		size_t n = strlen(own->name[i]);
		if (strncmp(name, own->name[i], n) == 0 &&
		    (!name[n] || !strncmp(name + n, ".tmp-", 5) || !strncmp(name + n, ".old-", 5)))
			return 1;
	}
	return 0;
}

static int special(const char *out, const char *name, mode_t mode)
{
	fprintf(stderr, "chexnet: train: --out '%s': '%s' is %s: refused (a run folder holds only "
		"regular files and folders; nothing is followed or opened): move it away\n", out,
		name, regular_file_kind(mode));
	return -1;
}

/* Every entry of the own folder out/name is a regular file or a folder. */
static int check_inside(const char *out, const char *name)
{
	char path[4200], inner[4500];
	struct dirent *e;
	struct stat sb;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", out, name);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		fprintf(stderr, "chexnet: train: --out '%s': '%s': %s\n", out, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)))
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
			snprintf(inner, sizeof(inner), "%s/%s", name, e->d_name);
			rc = special(out, inner, sb.st_mode);
		}
	closedir(d);
	return rc;
}

/* The own names: run.json's "files" (checked first: never opened when
 * it is a link or a FIFO). */
static int own_list(const struct train_config *c, struct run_files *own)
{
	char path[4200];
	struct stat sb;
	struct trainer_error err = { "" };

	memset(own, 0, sizeof(*own));
	snprintf(path, sizeof(path), "%s/" RUN_RECORD_FILE, c->out);
	if (lstat(path, &sb) != 0) {
		if (c->resume)   /* a run from before run.json: its checkpoints */
			own->count = 2, strcpy(own->name[0], "last"), strcpy(own->name[1], "best");
		return 0;
	}
	if (!S_ISREG(sb.st_mode))
		return special(c->out, RUN_RECORD_FILE, sb.st_mode);
	if (run_record_files(path, own, &err)) {
		if (c->resume) {
			fprintf(stderr, "chexnet: --resume: %s\n", err.msg);
			return -1;
		}
		memset(own, 0, sizeof(*own));  /* not chexnet's: all of it is foreign */
		return 0;
	}
	if (!own->listed)  /* a record from before "files": what a run wrote then */
		for (int i = 0; i < 5; i++)
			snprintf(own->name[own->count++], RUN_FILE_NAME, "%s", written[i]);
	return 0;
}

static int add_foreign(struct scan *s, const char *name)
{
	char **more = realloc(s->foreign, (size_t)(s->foreign_count + 1) * sizeof(char *));

	if (!more || !(more[s->foreign_count] = strdup(name))) {
		s->foreign = more ? more : s->foreign;
		fprintf(stderr, "chexnet: train: out of memory\n");
		return -1;
	}
	s->foreign = more;
	s->foreign_count++;
	return 0;
}

static int scan(const struct train_config *c, struct scan *s)
{
	DIR *d = opendir(c->out);
	struct dirent *e;
	struct stat sb;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "chexnet: train: --out '%s': %s\n", c->out, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, "..") ||
		    fstatat(dirfd(d), n, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
			rc = special(c->out, n, sb.st_mode);
		else if (set_aside(n))
			continue;
		else if (!own_name(&s->own, n))
			rc = add_foreign(s, n);
		else {
			s->own_present = 1;
			if (!strcmp(n, "last") || !strcmp(n, "best"))
				s->checkpoint = !strcmp(n, "last") ? "last" : "best";
			if (S_ISDIR(sb.st_mode))
				rc = check_inside(c->out, n);
		}
	}
	closedir(d);
	return rc;
}

/* --overwrite: each foreign entry renamed NAME.foreign-N (N: the first
 * free), never replacing anything; one line names them all. */
static int put_aside(const char *out, const struct scan *s)
{
	char from[4200], to[4300], line[4096] = "";
	size_t used = 0;

	for (int i = 0; i < s->foreign_count; i++) {
		snprintf(from, sizeof(from), "%s/%s", out, s->foreign[i]);
		int rc = -1;
		for (int k = 1; rc != 0 && k < 1000; k++) {
			snprintf(to, sizeof(to), "%s.foreign-%d", from, k);
			rc = renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
			if (rc != 0 && errno == EINVAL)  /* NFS: no flags */
				rc = access(to, F_OK) == 0 ? (errno = EEXIST, -1) : rename(from, to);
			if (rc != 0 && errno != EEXIST)
				break;
			if (rc == 0 && used < sizeof(line))
				used += (size_t)snprintf(line + used, sizeof(line) - used, "%s'%s' -> "
							 "'%s.foreign-%d'", used ? ", " : "",
							 s->foreign[i], s->foreign[i], k);
		}
		if (rc != 0) {
			fprintf(stderr, "chexnet: train: --overwrite: '%s': %s\n", from, strerror(errno));
			return -1;
		}
	}
	fprintf(stderr, "chexnet: train: --overwrite: '%s' held entries chexnet did not write, "
		"set aside (nothing deleted): %s\n", out, line);
	return 0;
}

/* The old run's own entries go (folders with their files). */
static int remove_own(const char *out, const struct run_files *own)
{
	DIR *d = opendir(out);
	struct dirent *e;
	struct stat sb;
	char path[4200];
	int rc = 0;

	while (d && rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !own_name(own, e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", out, e->d_name);
		if (S_ISDIR(sb.st_mode))
			checkpoint_remove_dir(path);
		else
			unlinkat(dirfd(d), e->d_name, 0);
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
			fprintf(stderr, "chexnet: --overwrite: '%s': could not be removed\n", path);
			rc = -1;
		}
	}
	if (d)
		closedir(d);
	return rc;
}

/* A new run into a folder that holds something: decided and done. */
static int new_run(const struct train_config *c, const struct scan *s)
{
	if (s->checkpoint && !c->overwrite) {
		fprintf(stderr, "chexnet: train: --out '%s': holds a run ('%s'): continue it with "
			"--resume %s, or replace it with --overwrite\n", c->out, s->checkpoint, c->out);
		return -1;
	}
	if (s->foreign_count && !c->overwrite) {
		char names[1024] = "";
		size_t used = 0;
		for (int i = 0; i < s->foreign_count && i < 4 && used < sizeof(names); i++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s'%s'",
						 i ? ", " : "", s->foreign[i]);
		fprintf(stderr, "chexnet: train: --out '%s': holds %d entr%s chexnet did not write "
			"(%s%s): choose another --out, or --overwrite sets them aside as "
			"NAME.foreign-N (nothing is deleted)\n", c->out, s->foreign_count,
			s->foreign_count == 1 ? "y" : "ies", names, s->foreign_count > 4 ? ", ..." : "");
		return -1;
	}
	if (s->foreign_count && put_aside(c->out, s))
		return -1;
	if (s->own_present && !s->checkpoint && !c->overwrite)
		/* a record and metrics but no checkpoint (stopped before the first
		 * one): nothing to resume, so this run starts it again */
		fprintf(stderr, "chexnet: train: --out '%s': its run has no checkpoint yet: starting "
			"it again\n", c->out);
	return s->own_present ? remove_own(c->out, &s->own) : 0;
}

int run_files_guard(const struct train_config *c)
{
	struct scan s;
	struct stat sb;

	if (!c->out || stat(c->out, &sb) != 0)
		return 0;   /* made later */
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "chexnet: train: --out '%s': not a directory\n", c->out);
		return -1;
	}
	memset(&s, 0, sizeof(s));
	int rc = own_list(c, &s.own) || scan(c, &s) ? -1 : c->resume ? 0 : new_run(c, &s);
	for (int i = 0; i < s.foreign_count; i++)
		free(s.foreign[i]);
	free(s.foreign);
	return rc;
}
