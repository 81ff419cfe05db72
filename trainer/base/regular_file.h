/* regular_file.h - opening a file the trainer reads back (run.json,
 * metrics.csv, event files) only when it is a regular file: opened with
 * O_NOFOLLOW (a symbolic link is refused, never followed) and O_NONBLOCK
 * (a FIFO is refused, never waited on), then checked with fstat; and the
 * word for what an lstat found there ("a symbolic link", "a FIFO", ...).
 * What this is not: parsing the file.
 */
#ifndef HVD_TRAINER_BASE_REGULAR_FILE_H
#define HVD_TRAINER_BASE_REGULAR_FILE_H

#include <stdio.h>
#include <sys/types.h>

/* The file for reading ("rb"), or NULL with why ("not a regular file
 * (a FIFO)", ... (a symbolic link), or strerror's text) in why[len]. follow: a symbolic link is
 * followed (weights a user links to), the target still checked. */
FILE *regular_fopen(const char *path, int follow, char *why, size_t len);

/* The whole file as regular_fopen opens it, NUL-terminated (malloc'd),
 * *n its bytes, at most max of them; or NULL with why (as above, or
 * "larger than N MiB", "unreadable", "out of memory"). */
char *regular_file_read(const char *path, int follow, size_t max, size_t *n, char *why,
			size_t len);

/* "a symbolic link", "a FIFO", "a socket", "a device", "a directory",
 * "a regular file" for an lstat/fstat mode. */
const char *regular_file_kind(mode_t mode);

#endif
