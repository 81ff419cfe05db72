/* recover/writer_beat.h - the survivor chosen to write OUT/last shows that it
 * is alive while it writes, and the others wait for it by that sign, not
 * by a fixed time. The writer's beat is OUT/.generations/G.writing (G:
 * the generation it holds), one line "rank R host H beat N", rewritten in
 * place with N + 1 every interval by a thread and fsynced, so that an NFS
 * server holds each beat and a reader's open (close-to-open) sees it.
 * The others wait (recover/survivors.h, survivors_wait_saved) until the
 * writer's summary is there; a beat that does not change for
 * SURVIVORS_SILENT_S names the writer lost, and the whole wait is limited
 * by writer_wait_limit_s: the larger of SURVIVORS_SAVE_WAIT_S (120 s) and
 * the checkpoint's bytes at WRITER_SLOWEST_BYTES_PER_S (5 MiB/s, a busy
 * parallel file system's share for one client), so a large checkpoint on
 * a slow file system is waited for, and a dead writer is named within
 * SURVIVORS_SILENT_S whatever the limit.
 * What this is not: the decision of who writes (recover/survivors.h).
 */
#ifndef HVD_TRAINER_RECOVER_WRITER_BEAT_H
#define HVD_TRAINER_RECOVER_WRITER_BEAT_H

#include <stddef.h>

#define WRITER_BEAT_S 2.0
#define WRITER_SLOWEST_BYTES_PER_S (5.0 * 1024 * 1024)

/* Starts the beat of generation g's writer in out every interval_s: 0,
 * or -1 (errno) when it cannot, and the caller must not write (the others
 * would name it lost while it wrote). */
int writer_beat_start(const char *out, long g, int rank, const char *host, double interval_s);
/* Stops it and removes the file (the summary is written by then). */
void writer_beat_stop(void);
/* Generation g's beat line into text ("" when there is none yet). */
void writer_beat_read(const char *out, long g, char *text, size_t len);
/* The limit on the whole wait for a checkpoint of checkpoint_bytes. */
double writer_wait_limit_s(double checkpoint_bytes);

#endif
