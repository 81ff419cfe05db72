/* out_dir.h - an output directory named by a flag (--plots DIR, --cam
 * DIR): created when missing, and proved writable by writing a file in
 * it, before any work; otherwise one line `chexnet: FLAG: 'DIR': reason`.
 * What this is not: writing the outputs.
 */
#ifndef HVD_TRAINER_OUT_DIR_H
#define HVD_TRAINER_OUT_DIR_H

/* 0, or -1 (printed). */
int out_dir_writable(const char *flag, const char *dir);

#endif
