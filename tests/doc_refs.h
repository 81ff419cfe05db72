/* doc_refs.h - checks that the repository's comments and docs name only
 * files it has (doc_refs.c). What this is not: a test case (test_docs.c).
 */
#ifndef HVD_TESTS_DOC_REFS_H
#define HVD_TESTS_DOC_REFS_H

#include <stddef.h>

/* Walks root (not dot folders, not top-level build*). Returns the number
 * of problems, one line each in report ("docs: FILE:LINE: 'WORD': why"),
 * or -1. */
int doc_refs_check(const char *root, char *report, size_t len);

#endif
