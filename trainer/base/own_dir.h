/* base/own_dir.h - a folder a command writes into (synth --out, pack
 * --out) only when it can prove the folder is its own: one it makes now,
 * one it finds empty, or one holding its marker, the file NAME whose bytes
 * are exactly TEXT (a regular file of this user's; compared, never
 * parsed, so a marker is no file format). Into a folder made or found
 * empty the marker is written first (created exclusively), so the next
 * run finds it. The checks and the marker's creation go through one
 * descriptor of the folder, opened once. Anything else (a folder holding
 * other entries and no marker, a marker with other bytes, a link or
 * another user's file named like it) is refused in one line
 * `chexnet: CMD: FLAG 'DIR': reason`, with nothing written.
 * What this is not: deciding which files inside the folder the command
 * may replace (the marker's text names them for the reader; the command
 * checks its own).
 */
#ifndef HVD_TRAINER_BASE_OWN_DIR_H
#define HVD_TRAINER_BASE_OWN_DIR_H

#include <stddef.h>

struct own_dir_marker {
	const char *command;        /* "synth": for the message */
	const char *flag;           /* "--out" */
	const char *name;           /* ".chexnet-synth" */
	const char *text;           /* its exact bytes */
};

/* 0 when dir is the command's (made, or found empty: marked now), or -1
 * with err set (one line; nothing written). */
int own_dir_claim(const struct own_dir_marker *m, const char *dir, char *err, size_t err_bytes);

#endif
