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

#include "base/fence.h"
#include "base/regular_file.h"
#include "loop/run_files.h"
#include "train/checkpoint_replace.h"
#include "train/run_record.h"

/* Every name a run writes in OUT, and whether it is a folder: the only
 * names it ever removes or replaces, whatever a record claims. */
static const char *const written[] = { RUN_RECORD_FILE, "metrics.csv", "tb", "last", "best",
				       FENCE_DIR, "test.json" };
static const int written_dir[] = { 0, 0, 1, 1, 1, 1, 0 };
#define WRITTEN_COUNT 7

const char *const *run_files_written(const struct train_config *c, int *count)
{
	*count = c->test_at_end ? 7 : 6;
	return written;
}

/* What the folder holds, by kind. */
struct scan {
	struct run_files own;
	char **foreign;             /* names, in readdir order */
	char **mine;                /* the run's own entries found */
	int foreign_count, mine_count, own_present;
	int record;                 /* run.json is a record of chexnet's */
	const char *checkpoint;     /* an own last/ or best/ (a run to resume), or NULL */
	char claimed[512];          /* names the record lists that chexnet never writes */
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

/* name is base, or the leftover of an interrupted write of it. */
static int name_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	return strncmp(name, base, n) == 0 &&
	       (!name[n] || !strncmp(name + n, ".tmp-", 5) || !strncmp(name + n, ".old-", 5));
}

/* The index in written[] of name, or -1. */
static int written_index(const char *name)
{
	for (int k = 0; k < WRITTEN_COUNT; k++)
		if (!strcmp(name, written[k]))
			return k;
	return -1;
}

/* The index in written[] of the own entry name (or its leftover), or -1
 * (own holds only written names: keep_written). */
static int own_name(const struct run_files *own, const char *name)
{
	for (int i = 0; i < own->count; i++)
		if (name_of(name, own->name[i]))
			return written_index(own->name[i]);
	return -1;
}

/* What a run writes inside its folders: tb/ event files; in last/ and
 * best/ (and their leftovers) the checkpoint's files. */
static int inner_own(const char *folder, const char *name)
{
	if (!strcmp(folder, "tb"))
		return !strncmp(name, "events.out.tfevents.", 20);
	if (!strcmp(folder, FENCE_DIR)) {   /* generations, their records, claims under way */
		const char *rest = name + strspn(name, "0123456789");
		return (name[0] >= '1' && name[0] <= '9' &&
			(!*rest || !strcmp(rest, ".saved") || !strcmp(rest, ".finished"))) ||
		       !strncmp(name, ".claim-", 7) || strstr(name, ".tmp-") != NULL;
	}
	return checkpoint_own_file(name);
}

/* A generation's writes folder (base/fence.h) in .generations. */
static int writes_folder(const char *folder, const char *name)
{
	const char *rest = name + strspn(name, "0123456789");
	return !strcmp(folder, FENCE_DIR) && rest != name && !strcmp(rest, FENCE_WRITES);
}

static int special(const char *out, const char *name, mode_t mode)
{
	fprintf(stderr, "chexnet: train: --out '%s': '%s' is %s: refused (a run folder holds only "
		"regular files and folders; nothing is followed or opened): move it away\n", out,
		name, regular_file_kind(mode));
	return -1;
}

/* Every entry of the own folder out/name is a regular file or a folder
 * (else -1, printed); 1 when each is a file a run writes there, owned by
 * this user (the folder is the run's), 0 when not (it is foreign). */
static int check_inside(const char *out, const char *name, const char *kind)
{
	char path[4200], inner[4500];
	struct dirent *e;
	struct stat sb;
	int rc = 0, ours = 1;

	snprintf(path, sizeof(path), "%s/%s", out, name);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		fprintf(stderr, "chexnet: train: --out '%s': '%s': %s\n", out, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
			snprintf(inner, sizeof(inner), "%s/%s", name, e->d_name);
			rc = special(out, inner, sb.st_mode);
		} else if (sb.st_uid != geteuid() ||
			   !(S_ISREG(sb.st_mode) ? inner_own(kind, e->d_name)
						 : writes_folder(kind, e->d_name))) {
			ours = 0;
		}
	}
	closedir(d);
	return rc ? rc : ours;
}

/* The own names: run.json's "files" (checked first: never opened when
 * it is a link or a FIFO). */
static int own_list(const struct train_config *c, struct run_files *own, int *record)
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
	*record = 1;
	if (!own->listed)  /* a record from before "files": what a run wrote then */
		for (int i = 0; i < 5; i++)
			snprintf(own->name[own->count++], RUN_FILE_NAME, "%s", written[i]);
	return 0;
}

/* The record's names that chexnet writes stay; the others are a claim
 * it does not honour (named in claimed, one line later). */
static void keep_written(struct run_files *own, char *claimed, size_t len)
{
	int kept = 0;
	size_t used = 0;

	for (int i = 0; i < own->count; i++) {
		if (written_index(own->name[i]) >= 0)
			memmove(own->name[kept++], own->name[i], RUN_FILE_NAME);
		else if (used < len)
			used += (size_t)snprintf(claimed + used, len - used, "%s'%s'", used ? ", " : "",
						 own->name[i]);
	}
	own->count = kept;
}

static int add_name(char ***list, int *count, const char *name)
{
	char **more = realloc(*list, (size_t)(*count + 1) * sizeof(char *));

	if (!more || !(more[*count] = strdup(name))) {
		*list = more ? more : *list;
		fprintf(stderr, "chexnet: train: out of memory\n");
		return -1;
	}
	*list = more;
	(*count)++;
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
		int k = own_name(&s->own, n), ours = 0;
		if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
			rc = special(c->out, n, sb.st_mode);
		else if (set_aside(n))
			continue;
		else if (k >= 0 && sb.st_uid == geteuid() &&
			 (S_ISDIR(sb.st_mode) != 0) == written_dir[k])
			ours = S_ISDIR(sb.st_mode) ? check_inside(c->out, n, written[k]) : 1;
		if (rc == 0 && ours < 0)
			rc = -1;
		else if (rc == 0 && !ours)
			rc = add_name(&s->foreign, &s->foreign_count, n);
		else if (rc == 0 && ours) {
			rc = add_name(&s->mine, &s->mine_count, n);
			s->own_present = 1;
			if (!strcmp(n, "last") || !strcmp(n, "best"))
				s->checkpoint = !strcmp(n, "last") ? "last" : "best";
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
		"set aside (none of them deleted): %s\n", out, line);
	return 0;
}

/* A folder of the run's: its files (by the rule scan checked: kind is
 * its written[] name) then the folder; never a link followed. */
static int remove_folder(int at, const char *name, const char *kind)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat sb;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (inner_own(kind, e->d_name) &&
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && sb.st_uid == geteuid())
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return unlinkat(at, name, AT_REMOVEDIR);
}

/* The old run's own entries go, each named in one line. */
static int remove_own(const char *out, const struct scan *s)
{
	int at = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	char line[2048] = "";
	size_t used = 0;
	struct stat sb;

	for (int i = 0; at >= 0 && i < s->mine_count && rc == 0; i++) {
		const char *n = s->mine[i];
		if (!strcmp(n, FENCE_DIR) || fstatat(at, n, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;   /* generations go on rising, over any process of the old run */
		if (S_ISDIR(sb.st_mode) ? remove_folder(at, n, written[own_name(&s->own, n)])
					: unlinkat(at, n, 0)) {
			fprintf(stderr, "chexnet: train: --out '%s': '%s': could not be removed: %s\n",
				out, n, strerror(errno));
			rc = -1;
		} else if (used < sizeof(line)) {
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s'%s'",
						 used ? ", " : "", n);
		}
	}
	if (at < 0) {
		fprintf(stderr, "chexnet: train: --out '%s': %s\n", out, strerror(errno));
		return -1;
	}
	close(at);
	if (used)
		fprintf(stderr, "chexnet: train: --out '%s': removed the earlier run's own entries: %s "
			"(nothing else)\n", out, line);
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
	if (s->own.ended && s->own_present && !c->overwrite) {
		fprintf(stderr, "chexnet: train: --out '%s': holds the records of a run that ended "
			"(its run.json has an \"end\"): choose another --out, or replace them with "
			"--overwrite\n", c->out);
		return -1;
	}
	if (s->foreign_count && c->overwrite && !s->record) {
		fprintf(stderr, "chexnet: train: --overwrite: --out '%s': holds %d entr%s chexnet did "
			"not write and no run.json of chexnet's: not a run folder, nothing set aside; "
			"choose another --out\n", c->out, s->foreign_count,
			s->foreign_count == 1 ? "y" : "ies");
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
			"NAME.foreign-N (none of them is deleted)\n", c->out, s->foreign_count,
			s->foreign_count == 1 ? "y" : "ies", names, s->foreign_count > 4 ? ", ..." : "");
		return -1;
	}
	if (s->foreign_count && put_aside(c->out, s))
		return -1;
	if (s->own_present && !s->checkpoint && !c->overwrite)
		/* a record without an end and no checkpoint (killed before the
		 * first one, as a requeued job finds it): nothing to resume, so
		 * this run starts it again */
		fprintf(stderr, "chexnet: train: --out '%s': its run has no checkpoint yet: starting "
			"it again\n", c->out);
	return s->own_present ? remove_own(c->out, s) : 0;
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
	int rc = own_list(c, &s.own, &s.record);
	if (rc == 0) {
		keep_written(&s.own, s.claimed, sizeof(s.claimed));
		if (s.claimed[0])
			fprintf(stderr, "chexnet: train: --out '%s': its run.json lists %s, which chexnet "
				"never writes: not the run's (a record is a claim, not an authority)\n",
				c->out, s.claimed);
		rc = scan(c, &s) ? -1 : c->resume ? 0 : new_run(c, &s);
	}
	for (int i = 0; i < s.foreign_count; i++)
		free(s.foreign[i]);
	for (int i = 0; i < s.mine_count; i++)
		free(s.mine[i]);
	free(s.foreign);
	free(s.mine);
	return rc;
}
