/* base/fence.h - generations of a run folder, each claimed once, and the
 * check every writer into the folder makes before it renames into place
 * (a fencing token on a shared file system). Generation G of folder OUT
 * exists once OUT/.generations/G does. A claim writes its text to a
 * temporary, fsyncs it and link(2)s it to that name: exactly one claimant
 * gets it on a local or NFS file system (the others see EEXIST; a link
 * whose reply was lost is told by the temporary's link count). The
 * newest generation is the folder's current one.
 * A process holds at most one generation of one folder (fence_hold);
 * while a newer one exists, fence_stale() is 1 and base/whole_file.h
 * and checkpoints refuse to rename into place (ESTALE): a process of an
 * older generation (a hung node woken up, the other half of a partition)
 * never overwrites what a newer one wrote (fence_replace: not even one
 * frozen between its check and its rename).
 * What it is not: a lock (nothing waits), or a way to choose the members
 * of a generation (loop/survivors.h).
 */
#ifndef HVD_TRAINER_BASE_FENCE_H
#define HVD_TRAINER_BASE_FENCE_H

#include <stddef.h>

#define FENCE_DIR ".generations"

/* OUT/.generations/g with text: 0 claimed, 1 another claimant has it,
 * -1 (errno) when it cannot be tried. */
int fence_claim(const char *out, long g, const char *text);
/* OUT/.generations/claim (a name that is not a number, such as
 * "2.join-0": fence_newest passes over it), claimed once the same way:
 * 0, 1 or -1 as fence_claim. */
int fence_claim_name(const char *out, const char *claim, const char *text);
/* The next generation after the newest, claimed (another claimant's
 * number is passed over): it, or -1 (errno). */
long fence_claim_next(const char *out, const char *text);
/* The newest generation of out: 0 when none was claimed, -1 (errno). */
long fence_newest(const char *out);
/* Generation g's claim text into text: 0, or -1 (errno; ENOENT: none). */
int fence_read(const char *out, long g, char *text, size_t len);

/* This process holds generation g of out (g 0: holds none). */
void fence_hold(const char *out, long g);
long fence_held(void);
/* 1 when a generation newer than the one held exists (the process must
 * not write into its folder), else 0. It opens OUT/.generations before
 * looking, so an NFS client revalidates the folder (close-to-open) rather
 * than answer from a cached "no such file". Rank 0's metrics.csv rows
 * and tb/ events ask it before each append (loop/run_metrics.h). */
int fence_stale(void);
/* tmp into path's place while the generation held is the newest, so a
 * writer frozen between its check and the rename (a hung node woken)
 * cannot leave its older file there: where path exists the two are
 * exchanged (renameat2 RENAME_EXCHANGE), else tmp is renamed without
 * replacing, and the generation is checked again after; when a newer
 * one exists by then, the rename is undone. A newer writer that
 * renames the same path again between the two renames (microseconds)
 * would lose that write. 0: done (tmp now holds what path held, or
 * nothing); -1 with errno ESTALE (path as it was, tmp the caller's),
 * EINVAL (no RENAME_EXCHANGE on this file system, NFS: nothing done),
 * or the rename's error. */
int fence_replace(const char *tmp, const char *path);

#endif
