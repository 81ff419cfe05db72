/* base/fence.h - generations of a run folder, each claimed once, and the
 * fence that keeps an older generation's writes out of a newer one's
 * files (a fencing token on a shared file system).
 *
 * Claims. Generation G of folder OUT exists once OUT/.generations/G
 * does. A claim writes its text to a temporary, fsyncs it and link(2)s
 * it to that name: exactly one claimant gets it on a local or NFS file
 * system (the others see EEXIST; a link whose reply was lost is told by
 * the temporary's link count). The newest generation is the folder's
 * current one. A process holds at most one generation of one folder
 * (fence_hold).
 *
 * Writes. A process holding G makes every temporary it renames into OUT
 * (whole files: base/whole_file.h; checkpoint folders) inside
 * OUT/.generations/G.writes, a folder the claimant of G made before it
 * linked its claim. Before the claimant of G+1 links its claim it removes
 * every older generation's writes folder: their files first, then the
 * folder, again until rmdir(2) succeeds, which it does only on an empty
 * folder. Once removed, nothing can be made in it (a removed folder
 * takes no new name; on NFS its file handle is stale) and nothing renamed
 * out of it. So every rename of an older generation's write either
 * happened before that rmdir, and so before the claim and before any
 * write of G+1, or fails (ENOENT or ESTALE): a newer generation's file
 * is never replaced by an older one, whatever the file system, with or
 * without RENAME_EXCHANGE, however long the older writer was frozen
 * between its last look and its rename. Files appended in place
 * (metrics.csv, tb/'s events: fence_appended) get a fresh copy renamed
 * over them in the same step, so an older generation's open descriptor
 * appends to a file no name leads to. The documented names (run.json,
 * metrics.csv, tb/, last/, best/, test.json) are ordinary files and
 * folders holding the newest generation's content: no reader needs to
 * know generations.
 *
 * NFS. A RENAME a client retransmits after its reply was lost carries
 * the same unique temporary name: when the server runs it again (no
 * duplicate-request cache entry) the source is gone, so the replay
 * fails and moves nothing; a request delayed past the rmdir finds no
 * source either. Nothing here trusts a cached lookup: fence_stale opens
 * the folder first (close-to-open revalidates it) and is only the early,
 * well-worded refusal; the removal above is what fences.
 *
 * What it is not: a lock (nothing waits), or a way to choose the members
 * of a generation (recover/survivors.h).
 */
#ifndef HVD_TRAINER_BASE_FENCE_H
#define HVD_TRAINER_BASE_FENCE_H

#include <stddef.h>

#define FENCE_DIR ".generations"
#define FENCE_WRITES ".writes"   /* OUT/.generations/G.writes */

/* OUT/.generations/g with text, once g's writes folder exists, the older
 * ones are removed and the appended files copied afresh: 0 claimed, 1
 * another claimant has it, -1 (errno) when it cannot be tried. */
int fence_claim(const char *out, long g, const char *text);
/* OUT/.generations/claim (a name that is not a number, such as
 * "2.join-0": fence_newest passes over it), claimed once by link alone:
 * 0, 1 or -1 as fence_claim. */
int fence_claim_name(const char *out, const char *claim, const char *text);
/* The next generation after the newest, claimed (another claimant's
 * number is passed over): it, or -1 (errno). */
long fence_claim_next(const char *out, const char *text);
/* The newest generation of out: 0 when none was claimed, -1 (errno). */
long fence_newest(const char *out);
/* Generation g's claim text into text: 0, or -1 (errno; ENOENT: none). */
int fence_read(const char *out, long g, char *text, size_t len);

/* The names in OUT (a file, or a folder whose regular files count) that
 * a run appends to in place; kept, not copied. Every claim copies them
 * afresh. */
void fence_appended(const char *const *names, int count);

/* This process holds generation g of out (g 0: holds none). */
void fence_hold(const char *out, long g);
long fence_held(void);
/* 1 when a generation newer than the one held exists (the process must
 * not write into its folder), else 0. It opens OUT/.generations before
 * looking, so an NFS client revalidates the folder (close-to-open) rather
 * than answer from a cached "no such file". */
int fence_stale(void);
/* 1 with the held generation's writes folder in dir when path lies in
 * the folder held (a fenced write: its temporary belongs there), else 0. */
int fence_writes_dir(const char *path, char *dir, size_t len);
/* tmp (a folder) into path's place: exchanged with path where it exists
 * and the file system can (renameat2 RENAME_EXCHANGE: tmp then holds the
 * old one), renamed where path is missing. 0; -1 with errno ESTALE (a
 * newer generation exists, or removed tmp's writes folder), EINVAL (path
 * exists and the file system cannot exchange, NFS: nothing done), or the
 * rename's error. */
int fence_replace(const char *tmp, const char *path);

#endif
