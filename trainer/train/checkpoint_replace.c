/* checkpoint_replace.c - crash-safe replacement of a checkpoint directory
 * with a fallback for file systems without RENAME_EXCHANGE, and the
 * lookup of the newest complete one after a crash (see
 * checkpoint_replace.h). What it does not do: read or write tensors
 * (checkpoint.c, safetensors.c; "complete" means both files parse).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fence.h"
#include "train/checkpoint_replace.h"
#include "train/safetensors.h"

static const char *const files[] = { "model.safetensors", "training.safetensors" };

int checkpoint_own_file(const char *name)
{
	static const char *const own[] = { "model.safetensors", "training.safetensors",
					   "thresholds.json" };
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(own[i]);
		if (!strncmp(name, own[i], n) && (!name[n] || !strncmp(name + n, ".tmp-", 5)))
			return 1;
	}
	return 0;
}

/* A checkpoint directory's own files (the two safetensors files,
 * thresholds.json beside them; regular files of this user's) go, then the
 * directory; anything else in it (a file chexnet never writes there, a
 * subdirectory) keeps it. */
void checkpoint_remove_dir(const char *dir)
{
	/* O_NOFOLLOW: a symbolic link named like a checkpoint is never
	 * followed (its target's files stay) */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat sb;
	char path[PATH_MAX];

	if (fd >= 0 && !d)
		close(fd);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (checkpoint_own_file(e->d_name) &&
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && sb.st_uid == geteuid()) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dir);
}

static void parent_of(const char *dir, char *out, size_t len)
{
	snprintf(out, len, "%s", dir);
	char *slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, len, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
}

static int fsync_parent(const char *dir)
{
	char parent[PATH_MAX];

	parent_of(dir, parent, sizeof(parent));
	int fd = open(parent, O_RDONLY | O_DIRECTORY);
	int rc = fd >= 0 ? fsync(fd) : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The sequence for file systems without RENAME_EXCHANGE. The old
 * folder moves aside into the writes folder of the generation held
 * (base/fence.h), so a writer of an older one cannot move a newer
 * checkpoint; a writer that dies between the two renames leaves it
 * there, where --resume and the next claimant find it. */
static int replace_in_steps(const char *tmp, const char *dir, struct trainer_error *err)
{
	char old[PATH_MAX + 64], wdir[PATH_MAX];
	const char *slash = strrchr(dir, '/');
	int fenced = fence_writes_dir(dir, wdir, sizeof(wdir));

	snprintf(old, sizeof(old), "%s%s%s.old-%ld", fenced ? wdir : "", fenced ? "/" : "",
		 fenced && slash ? slash + 1 : dir, (long)getpid());
	checkpoint_remove_dir(old);
	if (fence_stale() || rename(dir, old) != 0)
		return trainer_error_set(err, "checkpoint: '%s': cannot move aside to '%s': %s", dir,
					 old, fence_stale() || (fenced && errno == ENOENT)
					 ? "a newer generation of the run went on without this process"
					 : strerror(errno));
	fsync_parent(dir);
	if (rename(tmp, dir) != 0) {
		int saved = errno, gone = fenced && saved == ENOENT && access(tmp, F_OK) != 0;
		rename(old, dir);  /* put the old one back; if that fails --resume finds old */
		return trainer_error_set(err, "checkpoint: '%s': cannot rename into place: %s", dir,
					 gone ? "a newer generation of the run went on without this "
					 "process" : strerror(saved));
	}
	fsync_parent(dir);
	checkpoint_remove_dir(old);
	return 0;
}

/* Entries of folder named BASE.old-* or BASE.tmp-*, each passed to fn. */
static void each_in(const char *folder, const char *base, void (*fn)(const char *, void *),
		    void *ctx)
{
	char path[PATH_MAX * 2];
	size_t n = strlen(base);
	DIR *d = opendir(folder);

	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, base, n) && (!strncmp(e->d_name + n, ".old-", 5) ||
						     !strncmp(e->d_name + n, ".tmp-", 5))) {
			snprintf(path, sizeof(path), "%s/%s", folder, e->d_name);
			fn(path, ctx);
		}
	if (d)
		closedir(d);
}

/* The leftovers of dir's interrupted saves (BASE: dir's last component):
 * BASE.old-* and BASE.tmp-* beside it and in the writes folders of its
 * parent's generations (base/fence.h), each passed to fn. */
static void each_leftover(const char *dir, void (*fn)(const char *, void *), void *ctx)
{
	char parent[PATH_MAX], gens[PATH_MAX + 32], w[PATH_MAX * 2];
	const char *slash = strrchr(dir, '/'), *base = slash ? slash + 1 : dir;

	parent_of(dir, parent, sizeof(parent));
	each_in(parent, base, fn, ctx);
	snprintf(gens, sizeof(gens), "%s/" FENCE_DIR, parent);
	DIR *d = opendir(gens);
	for (struct dirent *e; d && (e = readdir(d));) {
		const char *dot = strchr(e->d_name, '.');
		if (dot && dot != e->d_name && !strcmp(dot, FENCE_WRITES)) {
			snprintf(w, sizeof(w), "%s/%s", gens, e->d_name);
			each_in(w, base, fn, ctx);
		}
	}
	if (d)
		closedir(d);
}

static void remove_leftover(const char *path, void *ctx)
{
	(void)ctx;
	checkpoint_remove_dir(path);
}

int checkpoint_replace(const char *tmp, const char *dir, struct trainer_error *err)
{
	struct stat sb;

	if (fence_replace(tmp, dir) == 0) {
		checkpoint_remove_dir(tmp);  /* the old one, if there was one */
	} else if (errno == ESTALE) {
		checkpoint_remove_dir(tmp);
		return trainer_error_set(err, "checkpoint: '%s': left alone: a newer generation "
					 "of the run (%s/%ld) went on without this process", dir,
					 FENCE_DIR, fence_held() + 1);
	} else if (errno == EINVAL && stat(dir, &sb) != 0) {   /* no RENAME_EXCHANGE here */
		if (rename(tmp, dir) != 0)
			return trainer_error_set(err, "checkpoint: '%s': cannot rename into place: %s",
						 dir, strerror(errno));
	} else if (errno == EINVAL) {
		if (replace_in_steps(tmp, dir, err))
			return -1;
	} else {
		return trainer_error_set(err, "checkpoint: '%s': cannot replace: %s", dir,
					 strerror(errno));
	}
	fsync_parent(dir);
	each_leftover(dir, remove_leftover, NULL);
	return 0;
}

/* Both files present and parsing (a writer killed mid-file leaves one
 * that does not). */
static int complete(const char *dir)
{
	char path[PATH_MAX];
	struct st_file f;

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (st_read(path, &f, NULL))
			return 0;
		st_free(&f);
	}
	return 1;
}

struct newest {
	char path[PATH_MAX];
	long long mtime_ns;
};

static void consider(const char *path, void *ctx)
{
	struct newest *best = ctx;
	char model[PATH_MAX];
	struct stat sb;

	snprintf(model, sizeof(model), "%s/%s", path, files[0]);
	if (stat(model, &sb) != 0 || !complete(path))
		return;
	long long t = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
	if (!best->path[0] || t > best->mtime_ns) {
		snprintf(best->path, sizeof(best->path), "%s", path);
		best->mtime_ns = t;
	}
}

int checkpoint_find_complete(const char *dir, char *out, size_t len, char *note,
			     size_t note_len, struct trainer_error *err)
{
	struct stat sb;
	struct newest best = { "", 0 };

	note[0] = '\0';
	if (stat(dir, &sb) == 0) {
		snprintf(out, len, "%s", dir);
		return 0;
	}
	each_leftover(dir, consider, &best);
	if (!best.path[0])
		return trainer_error_set(err, "checkpoint: '%s': %s (and no complete '%s.tmp-*' or "
					 "'%s.old-*' left by an interrupted save)", dir,
					 strerror(ENOENT), dir, dir);
	snprintf(out, len, "%s", best.path);
	snprintf(note, note_len, "'%s' is missing: using '%s', the newest complete checkpoint "
		 "(a save was interrupted while replacing it)", dir, best.path);
	return 0;
}
