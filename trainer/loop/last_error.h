/* loop/last_error.h - the reason a training session failed, for
 * run.json's end record: while capturing, everything written to stderr
 * still goes to file descriptor 2 at once (stderr becomes an unbuffered
 * stream over it, glibc's fopencookie), and the last line that starts
 * with "chexnet: " or "hvd: " is kept.
 * What this is not: printing errors (each part prints its own line).
 */
#ifndef HVD_TRAINER_LOOP_LAST_ERROR_H
#define HVD_TRAINER_LOOP_LAST_ERROR_H

/* Starts keeping the last such line (stderr unchanged when that fails). */
void last_error_capture(void);
/* The last such line without its prefix and newline, or "". */
const char *last_error(void);
/* stderr back to what it was (the stream stays: a thread may hold it). */
void last_error_release(void);

#endif
