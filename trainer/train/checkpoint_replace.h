/* checkpoint_replace.h - putting a finished checkpoint directory in place
 * of an existing one without ever leaving no complete checkpoint, and
 * finding the newest complete one after a crash at any instant.
 *
 * Replacement: renameat2(RENAME_EXCHANGE) swaps the two directories
 * atomically (then the old one is removed). File systems without it (NFS
 * returns EINVAL for any rename flag, FUSE without rename2 too, Lustre
 * has no RENAME_EXCHANGE; ENOTSUP and ENOSYS likewise) get a sequence
 * that is still crash-safe: DIR -> DIR.old-PID, fsync the parent,
 * TMP -> DIR, fsync the parent, remove DIR.old-PID. At every instant one
 * of DIR, a complete DIR.tmp-PID or DIR.old-PID holds a whole checkpoint.
 * What this does not do: write the files (checkpoint.c) or decide when to
 * save (the training loop).
 */
#ifndef HVD_TRAINER_CHECKPOINT_REPLACE_H
#define HVD_TRAINER_CHECKPOINT_REPLACE_H

#include <stddef.h>

#include "base/error.h"

/* Moves the complete, fsynced directory tmp to dir (replacing dir if it
 * exists); leftovers of earlier crashes (dir.old-*, dir.tmp-* of other
 * processes) are removed afterwards. 0 or -1 (err set). */
int checkpoint_replace(const char *tmp, const char *dir, struct trainer_error *err);

/* The directory --resume should read for dir (e.g. OUT/last): dir itself
 * when it exists, else the newest complete dir.tmp-* or dir.old-* left by
 * a crash in checkpoint_replace (note says which, else note[0] = 0).
 * 0, or -1 when none exists (err set). */
int checkpoint_find_complete(const char *dir, char *out, size_t len, char *note,
			     size_t note_len, struct trainer_error *err);

/* 1 when name is a file a save writes into a checkpoint directory (the
 * two safetensors files, thresholds.json, or a temporary of one). */
int checkpoint_own_file(const char *name);

/* Removes a checkpoint directory we wrote: its own files (above) that
 * belong to this user, then the folder when nothing else is left. */
void checkpoint_remove_dir(const char *dir);

#endif
