/* layout_check.h - checks the repository's include rule and looks for
 * include cycles (layout_check.c). What this is not: a test case (those
 * are in test_layout.c).
 */
#ifndef HVD_TESTS_LAYOUT_CHECK_H
#define HVD_TESTS_LAYOUT_CHECK_H

#include <stddef.h>

/* Reads every #include "..." of spank/, check/, launch/, runtime/ and
 * trainer/ under root. Returns the number of forbidden edges, cycles and
 * trainer/ files outside cmd/ (and train/settings.*) naming struct
 * settings (one line each in report, "layout: FILE: includes 'TARGET':
 * RULE"), or -1. */
int layout_check(const char *root, char *report, size_t len);

#endif
