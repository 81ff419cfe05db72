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
 * never overwrites what a newer one wrote.
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
 * not write into its folder), else 0. */
int fence_stale(void);

#endif
