/* base/whole_file.h - a small text file written whole or not at all: to
 * PATH.tmp with the given mode, fsynced, then renamed over PATH, so a
 * reader on any node sees the old file, the new one or none, never a part.
 * What it is not: for large files (checkpoints: train/checkpoint.h), or a
 * message: the caller names the file in its own line.
 */
#ifndef HVD_TRAINER_BASE_WHOLE_FILE_H
#define HVD_TRAINER_BASE_WHOLE_FILE_H

#include <sys/types.h>

/* 0, or -1 with errno set (PATH.tmp removed). */
int whole_file_put(const char *path, const char *text, mode_t mode);

#endif
