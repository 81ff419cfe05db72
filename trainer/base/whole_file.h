/* base/whole_file.h - a file written whole or not at all, and only over
 * what this user wrote: a fresh temporary beside PATH
 * (PATH.tmp-HOST-PID-N, created exclusively, so never through a link or
 * into another writer's file, even across hosts sharing the folder), or
 * in the writes folder of the generation held when PATH lies in its run
 * folder (base/fence.h: an older generation's rename then cannot land),
 * fsynced, then renamed over PATH. A reader on any node sees the old file,
 * the new one or none, never a part. PATH is replaced only when it is
 * missing or a regular file owned by the running user: a link, a folder,
 * a FIFO or another user's file named PATH is left as it is (EEXIST).
 * What it is not: for checkpoints (train/checkpoint.h), or a message: the
 * caller names the file in its own line.
 */
#ifndef HVD_TRAINER_BASE_WHOLE_FILE_H
#define HVD_TRAINER_BASE_WHOLE_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* 0, or -1 with errno set (the temporary removed). */
int whole_file_put(const char *path, const char *text, mode_t mode);
int whole_file_put_bytes(const char *path, const void *data, size_t len, mode_t mode);
/* text and a newline after it (a JSON document printed by cJSON). */
int whole_file_put_line(const char *path, const char *text, mode_t mode);

/* The reason for a caller's line after -1 with errno err: EEXIST says
 * PATH was left alone (not a regular file of this user's), ESTALE that a
 * newer generation of the run exists. */
const char *whole_file_why(int err);

/* For a writer that streams: the temporary's descriptor (its name in tmp),
 * or -1 with errno set. Then whole_file_commit (fsync, close, rename;
 * 0 or -1 with errno set, the temporary removed) or whole_file_abandon. */
int whole_file_open(const char *path, char *tmp, size_t tmp_len, mode_t mode);
int whole_file_commit(int fd, const char *tmp, const char *path);
void whole_file_abandon(int fd, const char *tmp);

/* The same as a stdio stream ("w", mode 0644); commit checks the stream's
 * errors first, and closes it either way. */
FILE *whole_file_stream(const char *path, char *tmp, size_t tmp_len);
int whole_file_stream_commit(FILE *f, const char *tmp, const char *path);

/* 1 when PATH may be replaced or removed by this user: missing, or a
 * regular file it owns (lstat: a link is never followed). */
int whole_file_ours(const char *path);

#endif
