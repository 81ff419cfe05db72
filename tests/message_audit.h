/* message_audit.h - whether the trainer repeats the runtime's words: every
 * string literal of the C files below one folder (adjacent literals
 * joined, as the compiler joins them) against those below another. A
 * trainer literal that holds MESSAGE_AUDIT_RUN characters of a runtime
 * literal (no format directive among them) reads or writes a runtime
 * message by its text, which rewording the runtime would break silently:
 * the runtime says what happened as data (hvd_lost_ranks).
 * What it does not do: parse C beyond comments, character and string
 * literals; see macros expanded.
 */
#ifndef HVD_TEST_MESSAGE_AUDIT_H
#define HVD_TEST_MESSAGE_AUDIT_H

#include <stddef.h>

#define MESSAGE_AUDIT_RUN 24

/* The string literals of one C text, joined and separated by '\n'
 * (escapes left as written); a malloc'd text, NULL when out of memory. */
char *message_literals(const char *text);
/* Each literal below `dir` (C files, `skip` left out, NULL for none)
 * that repeats a run of a literal below `words_dir`, one line each into
 * report ("FILE: 'RUN': WORDS_FILE's
 * words"); returns how many, -1 when a folder cannot be read. */
int message_audit(const char *words_dir, const char *skip, const char *dir, char *report,
		  size_t len);

#endif
